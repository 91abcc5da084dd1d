"""The course as data: modules of sections, looked up by stable ids.

Each module is one Markdown file in ``modules/`` named ``<module-id>.md``. Its
first ``# `` heading is the module title; every section is a ``## `` heading
directly preceded by an anchor line ``<a id="<section-id>"></a>``. Section ids
are unique across the whole course, so a rule, an error explanation or the
panel names a section by its id alone.

A module may have a runnable notebook in ``notebooks/`` named
``<module-id>-<short-name>.ipynb``: the same lessons as cells to run.

Sections move between modules (the second edition split the first module in three and
renumbered the architecture module from ``module-02`` to ``module-04``; then the Keras half
of ``module-03`` became ``module-05``, module 4's numerics and reproducibility sections
``module-06`` and its input pipeline sections ``module-07``; then the modules were put in
the order a learner reads them; then the Keras module was split in two, models and layers
``module-06`` and training with ``fit`` ``module-07``, numerics moving on to ``module-08``:
:data:`MODULES_RENUMBERED`; then module 4's ``mixed-precision`` went to ``module-08`` and
module 2's ``where-both-branches`` to ``module-03``, moves that need no record), but a
section keeps its id. A
link written before a move names the old module (``<base>/module-01#retracing``,
``module-01.md#side-effects``, ``<base>/module-07#tf-data``): ``Course.resolve`` finds the
section by its id whatever module the link carries, so old links still land on it. A section
merged into another (to keep a module to one sitting) leaves its id in
:data:`SECTIONS_MERGED`, and links to it land on the section that took its text over.

The course lists its modules in file name order, which is the reading order: a module's
number is its place in the course, and what it says of "module 5" is the fifth. A number
that changed meaning in a renumbering is recorded in :data:`MODULES_RENUMBERED`, one entry
per renumbering, and whatever keeps a module id alone (the study store's scores, an exported
progress file) is carried over by :func:`module_id_now` from the numbering it was written in;
the course's own links to a module alone are written with the new ids.

This module imports only the standard library: the kernel monitor uses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

MODULES_DIR = Path(__file__).parent / "modules"
NOTEBOOKS_DIR = Path(__file__).parent / "notebooks"


@dataclass(frozen=True)
class Renumbering:
    """One renumbering of the course's modules: ``moves`` maps each module id that changed
    meaning to the id its module has after it (every move at once, never chained)."""

    what: str
    moves: dict[str, str]


# Every renumbering, oldest first. An id written in numbering ``n`` (0: before the first
# renumbering) reaches today's numbering through the entries from ``n`` on, one by one: the
# same id may mean different modules in different numberings (``module-07`` was the input
# pipeline in numbering 0 and numerics in numbering 1), so where an id was written decides.
MODULES_RENUMBERED: tuple[Renumbering, ...] = (
    # The second edition's reading order (issue #28): the input pipeline module was written
    # last (``module-07``) although the Keras and numerics modules feed their models with
    # pipelines, so it moved up to follow module 4 and those two moved one place down.
    # Study store schema 3; progress documents ``tfcoach.study-progress/1`` were written before.
    Renumbering(
        "the modules put in reading order (issue #28)",
        {
            "module-05": "module-06",  # Keras models, losses and fit
            "module-06": "module-07",  # Numerics and reproducibility
            "module-07": "module-05",  # Feeding the model: tf.data input pipelines
        },
    ),
    # The Keras module was two sittings (issue #28, review 9): its models and layers keep
    # ``module-06`` (a score of the whole module stays there, where its first half is); the
    # training half (callbacks, preprocessing, saving, train_step) is the new ``module-07``,
    # and numerics moves on to ``module-08``. Study store schema 4; progress documents
    # ``tfcoach.study-progress/2`` were written before.
    Renumbering(
        "the Keras module split in two, numerics moved on (issue #28)",
        {"module-07": "module-08"},  # Numerics and reproducibility
    ),
)
# The numbering the course is written in now: the number of renumberings so far.
MODULE_NUMBERING = len(MODULES_RENUMBERED)


def module_id_now(module_id: str, numbering: int) -> str:
    """Today's id of the module that was ``module_id`` in numbering ``numbering`` (0 for
    ids written before the first renumbering, :data:`MODULE_NUMBERING` for today's)."""
    if not 0 <= numbering <= MODULE_NUMBERING:
        raise ValueError(f"no module numbering {numbering} (0 to {MODULE_NUMBERING})")
    for renumbering in MODULES_RENUMBERED[numbering:]:
        module_id = renumbering.moves.get(module_id, module_id)
    return module_id


# Sections merged into another (issue #28, one sitting per module): merged id -> the id of
# the section that now holds its text. Rules, reports, bookmarks and SARIF files written
# before a merge name the old id; ``Course.section`` and every link through it land on
# the section that took it over. A merged id is never a section id again.
SECTIONS_MERGED: dict[str, str] = {
    "batch-axis": "batch-dimension",  # module 1: one example or a batch, with the batch size
}

_ANCHOR_HEADING = re.compile(
    r'^<a id="(?P<id>[a-z0-9-]+)"(?: name="[a-z0-9-]+")?></a>\s*\n##\s+(?P<title>.+?)\s*$',
    re.MULTILINE,
)
_LEVEL_TWO_HEADING = re.compile(r"^##\s", re.MULTILINE)
_MODULE_TITLE = re.compile(r"^#\s+(?P<title>.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Section:
    id: str
    module_id: str
    title: str
    markdown: str


@dataclass(frozen=True)
class Module:
    id: str
    title: str
    markdown: str
    sections: tuple[Section, ...]
    path: Path
    # ``notebooks/<module-id>-*.ipynb`` next to ``modules/``, if the module has one.
    notebook: Path | None = None


class UnknownSectionError(KeyError):
    pass


class InvalidBaseUrlError(ValueError):
    """A course base URL that no front end accepts (the message says why)."""


# Characters that would let a base URL break out of a Markdown link, an HTML attribute
# or a SARIF/JSON consumer's idea of one URL.
_URL_BREAKERS = frozenset(" \t\r\n\"'<>\\`")


def checked_base_url(value: str | None, source: str = "course base URL") -> str | None:
    """The one rule for course base URLs, wherever they come from (pyproject.toml, the
    server's ``c.TfCoach.course_base_url``, an editor's ``tfcoach.courseBaseUrl``).

    ``None`` or ``""`` mean the packaged course files. Anything else must be an
    ``http://`` or ``https://`` URL with a host: links built from it are followed by
    browsers, editors and code-scanning services, so no other scheme (``file:``,
    ``javascript:``...) and no characters that end a URL in Markdown or HTML.
    """
    if value is None or value == "":
        return None
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise InvalidBaseUrlError(
            f"{source} must be an http:// or https:// URL (or empty for the packaged "
            f"course), not {value!r}"
        )
    if any(char in _URL_BREAKERS for char in value):
        raise InvalidBaseUrlError(
            f"{source} must not contain spaces, quotes, angle brackets or backslashes: {value!r}"
        )
    return value


class UnknownModuleError(KeyError):
    pass


class NoNotebookError(LookupError):
    """The module exists but has no notebook."""


class AmbiguousNotebookError(ValueError):
    """Several notebooks claim the same module."""


def _module_notebook(module_id: str, notebooks_dir: Path) -> Path | None:
    # "module-01-*" cannot match module-010's notebooks: the id ends at the dash.
    found = sorted(notebooks_dir.glob(f"{module_id}-*.ipynb"))
    if len(found) > 1:
        names = ", ".join(path.name for path in found)
        raise AmbiguousNotebookError(f"{module_id} has several notebooks: {names}")
    return found[0] if found else None


def _parse_module(path: Path, notebooks_dir: Path) -> Module:
    text = path.read_text(encoding="utf-8")
    module_id = path.stem
    title_match = _MODULE_TITLE.search(text)
    title = title_match.group("title") if title_match else module_id
    matches = list(_ANCHOR_HEADING.finditer(text))
    # A section also ends at a heading without an anchor ("Key takeaways", "Review").
    headings = [m.start() for m in _LEVEL_TWO_HEADING.finditer(text)]
    sections = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        end = min([end, *(start for start in headings if match.end() <= start < end)])
        sections.append(
            Section(
                id=match.group("id"),
                module_id=module_id,
                title=match.group("title"),
                markdown=text[match.start() : end].strip() + "\n",
            )
        )
    notebook = _module_notebook(module_id, notebooks_dir)
    return Module(module_id, title, text, tuple(sections), path, notebook)


class DuplicateSectionError(ValueError):
    pass


@dataclass(frozen=True)
class Course:
    modules: tuple[Module, ...]
    # Lookups happen on every finding and every hover, so index once.
    _modules_by_id: dict[str, Module] = field(init=False, repr=False, compare=False)
    _sections_by_id: dict[str, Section] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sections_by_id: dict[str, Section] = {}
        for module in self.modules:
            for section in module.sections:
                previous = sections_by_id.get(section.id)
                if previous is not None:
                    # Ids are the only thing rules and the monitor share about
                    # teaching: an ambiguous id would send learners to the wrong text.
                    raise DuplicateSectionError(
                        f"section id {section.id!r} is defined in both "
                        f"{previous.module_id} and {module.id}"
                    )
                sections_by_id[section.id] = section
        for merged, kept in SECTIONS_MERGED.items():
            if merged in sections_by_id:
                raise DuplicateSectionError(
                    f"section id {merged!r} was merged into {kept!r} and must not come back "
                    f"as a section of {sections_by_id[merged].module_id}"
                )
        object.__setattr__(self, "_modules_by_id", {m.id: m for m in self.modules})
        object.__setattr__(self, "_sections_by_id", sections_by_id)

    @classmethod
    def load(cls, directory: Path = MODULES_DIR) -> Course:
        """The modules in ``directory``; their notebooks are in ``notebooks/`` beside it."""
        paths = sorted(directory.glob("*.md"))
        notebooks_dir = directory.parent / "notebooks"
        return cls(tuple(_parse_module(p, notebooks_dir) for p in paths))

    @property
    def sections(self) -> tuple[Section, ...]:
        """Every section of every module, in course order."""
        return tuple(self._sections_by_id.values())

    def module(self, module_id: str) -> Module:
        try:
            return self._modules_by_id[module_id]
        except KeyError:
            raise UnknownModuleError(module_id) from None

    def section(self, section_id: str) -> Section:
        """The section with this id, or the one a merged section's id now lands on."""
        try:
            return self._sections_by_id[SECTIONS_MERGED.get(section_id, section_id)]
        except KeyError:
            raise UnknownSectionError(section_id) from None

    def resolve(self, link: str) -> Section | Module:
        """Where a course link lands: ``[<anything>/]<module-id>[.md][#<section-id>]``.

        The section id decides: a section is found by its id alone, whatever module id
        the link carries, because sections keep their ids when they move to another
        module (``<base>/module-01#retracing`` lands on ``retracing`` in ``module-02``).
        A link without a section lands on its module. ``UnknownSectionError`` for an
        unknown section id, ``UnknownModuleError`` for an unknown module without one.
        """
        path, _, section_id = link.partition("#")
        if section_id:
            return self.section(section_id)
        module_id = path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".md")
        return self.module(module_id)

    def notebook_for(self, module_id: str) -> Path:
        """The module's notebook; ``NoNotebookError`` if it has none."""
        notebook = self.module(module_id).notebook
        if notebook is None:
            raise NoNotebookError(f"course module {module_id!r} has no notebook")
        return notebook

    def url_for(self, section_id: str, base_url: str | None = None) -> str:
        """A link to a section.

        With no base URL the link points at the packaged Markdown file, so it
        works offline; otherwise ``<base_url>/<module-id>#<section-id>``.
        """
        section = self.section(section_id)
        base_url = checked_base_url(base_url)
        if not base_url:
            path = self.module(section.module_id).path.resolve()
            return f"{path.as_uri()}#{section.id}"
        return f"{base_url.rstrip('/')}/{section.module_id}#{section.id}"

    def ref(self, section_id: str, base_url: str | None = None) -> dict[str, str]:
        """The ``course`` object of findings and reports (docs/findings.md, docs/report.md)."""
        section = self.section(section_id)
        return {
            "module": section.module_id,
            "section": section.id,
            "title": section.title,
            "url": self.url_for(section_id, base_url),
        }


@lru_cache(maxsize=1)
def get_course() -> Course:
    return Course.load()


def course_ref(section_id: str, base_url: str | None = None) -> dict[str, str]:
    return get_course().ref(section_id, base_url)


def notebook_for(module_id: str) -> Path:
    """The packaged notebook of a course module.

    Raises ``UnknownModuleError`` for an unknown id, ``NoNotebookError`` when the
    module has no notebook.
    """
    return get_course().notebook_for(module_id)
