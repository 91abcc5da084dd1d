"""One configuration path: the ``Config`` a front end analyses a file with.

The CLI (``tfcoach check``, ``tfcoach rule``), the language server and ``POST
tfcoach/api/analyze`` all call :func:`configuration_for` with

- the file, notebook or folder whose ``[tool.tfcoach]`` applies, or None (no file: the
  defaults);
- the root the search must stay inside (the Jupyter server's root), or None (up to the
  file system's root, as :class:`ConfigResolver` says);
- the front end's overrides: :class:`Overrides` already read (the CLI's flags, the
  editor's settings), or :class:`RawOverrides` as received (JupyterLab's request), read
  here by the one code-list reader (:func:`read_overrides`);

and get back a :class:`Configuration`: the ``Config`` and what went wrong. It never
raises.

One error model. A project file that cannot be used is a :class:`FileProblem`, which the
user reads as ``ignoring [tool.tfcoach]: <detail>``; the ``Config`` is then the defaults
with the overrides on top. The detail of a ``ConfigError`` names the file: relative to the
root when there is one (the user knows paths relative to the server's root; where that
root is on the server's disk is not theirs to see), else as the resolver wrote it (the
absolute path). Any other exception is such a problem too ("the configuration could not
be read (TypeName)"), never a crash. Entries of raw overrides that are not rule codes are
left out, each a problem ``<name>: ...; ignored``.

What a front end does with the problems stays its own (its wording is tested): the
Jupyter server answers them as ``config_error``; the language server shows a file problem
once per version of the file and logs override problems; the CLI does not analyse a file
whose configuration is broken (an input error, exit status 2) and refuses bad
``--select``/``--ignore`` before checking anything (with :func:`read_overrides`).

One rule for course links: the front end's course base URL (``c.TfCoach.course_base_url``,
an editor's ``tfcoach.courseBaseUrl``) when set, else the file's ``course-base-url``, else
None: the packaged course. ``""`` counts as not set. The CLI has no such option.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyterlab_tfcoach.analysis.config import Config, ConfigError, parse_codes
from jupyterlab_tfcoach.analysis.project_config import ConfigResolver, default_resolver
from jupyterlab_tfcoach.course import InvalidBaseUrlError, checked_base_url

IGNORING = "ignoring [tool.tfcoach]: "
_CODE_LISTS = ("select", "ignore")


@dataclass(frozen=True)
class Overrides:
    """A front end's settings on top of the file's: None means "not set" (the file's
    value applies). A list given replaces the file's list of the same name."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    course_base_url: str | None = None


@dataclass(frozen=True)
class RawOverrides:
    """A front end's settings as it received them: ``values["select"]`` and
    ``values["ignore"]`` a list of codes or one string of codes separated by commas or
    spaces (absent or None: not set). ``name`` says how a message names a list
    (``"settings: {key}"``, ``"--{key}"``)."""

    values: Mapping[str, Any]
    course_base_url: str | None = None
    name: str = "settings: {key}"


@dataclass(frozen=True)
class FileProblem:
    """Why the project's ``[tool.tfcoach]`` was not used (the defaults were)."""

    # The error, on one line, naming the file per the root policy (module docstring).
    detail: str
    # The version of the file at fault (path, mtime, size, inode), so a front end can
    # report each broken version once; None when the error did not come from a file.
    version: tuple[object, ...] | None = None

    @property
    def message(self) -> str:
        """What the user reads: ``ignoring [tool.tfcoach]: <detail>``."""
        return IGNORING + self.detail


@dataclass(frozen=True)
class Configuration:
    """A front end's configuration for one file, and what went wrong assembling it."""

    config: Config
    file_problem: FileProblem | None = None
    # Entries of the front end's overrides left out: ``<name>: ...; ignored``.
    override_problems: tuple[str, ...] = field(default=())

    @property
    def problems(self) -> list[str]:
        """Every problem as the user reads it, the file's first."""
        first = [self.file_problem.message] if self.file_problem is not None else []
        return first + list(self.override_problems)


def read_overrides(raw: RawOverrides) -> tuple[Overrides, tuple[str, ...]]:
    """``raw`` read by the one code-list reader (:func:`parse_codes`): the valid codes of
    each list, and one problem per entry left out (without a suffix: the caller says
    whether it ignores them or refuses the whole). A course base URL that is not one is
    a problem too, and not set."""
    problems: list[str] = []
    codes: dict[str, tuple[str, ...] | None] = {}
    for key in _CODE_LISTS:
        parsed = parse_codes(raw.values.get(key), raw.name.format(key=key))
        problems.extend(parsed.problems)
        codes[key] = parsed.codes
    try:
        base_url = checked_base_url(raw.course_base_url, raw.name.format(key="course-base-url"))
    except InvalidBaseUrlError as error:
        problems.append(str(error))
        base_url = None
    return Overrides(codes["select"], codes["ignore"], base_url), tuple(problems)


def configuration_for(
    path: str | Path | None,
    root: Path | None = None,
    overrides: Overrides | RawOverrides | None = None,
    resolver: ConfigResolver | None = None,
) -> Configuration:
    """The configuration a front end analyses ``path`` with (see the module docstring).

    ``path``: a file, a notebook or a folder (it need not exist), or None for no project
    file. ``root``: an absolute folder, links resolved; only ``pyproject.toml`` files
    inside it count, and none that links outside it; a ``path`` outside it reads none.
    """
    base, file_problem = _project_config(path, root, resolver or default_resolver())
    if isinstance(overrides, RawOverrides):
        overrides, bad = read_overrides(overrides)
        override_problems = tuple(f"{problem}; ignored" for problem in bad)
    else:
        overrides, override_problems = _checked(overrides or Overrides())
    config = base.overridden(
        select=overrides.select,
        ignore=overrides.ignore,
        # The course-link rule: the front end's when set, else the file's, else None.
        course_base_url=overrides.course_base_url or None,
    )
    return Configuration(config, file_problem, override_problems)


def _project_config(
    path: str | Path | None, root: Path | None, resolver: ConfigResolver
) -> tuple[Config, FileProblem | None]:
    if path is None:
        return Config(), None
    try:
        return resolver.config_for(path, root=root), None
    except ConfigError as error:
        return Config(), FileProblem(_relative_message(error, root), error.version)
    except Exception as error:  # the resolver says ConfigError; a crash is worse still
        detail = f"the configuration could not be read ({type(error).__name__})"
        return Config(), FileProblem(detail)


def _checked(overrides: Overrides) -> tuple[Overrides, tuple[str, ...]]:
    """Overrides a front end read already, read again so that an entry that is not a
    code cannot stop the analysis: such an entry is left out, with a problem."""
    raw = RawOverrides(
        {"select": overrides.select, "ignore": overrides.ignore},
        overrides.course_base_url,
        name="{key}",
    )
    checked, problems = read_overrides(raw)
    if not problems:
        return overrides, ()  # as given (the common case: nothing read twice is kept)
    return checked, tuple(f"{problem}; ignored" for problem in problems)


def _relative_message(error: ConfigError, root: Path | None) -> str:
    """The resolver's message (it starts with the file's absolute path); under a root,
    with the path relative to it, as the user knows it, and no other mention of where
    the root is on the disk left in it."""
    message = str(error)
    if root is None:
        return message
    path_text = str(error.version[0]) if error.version is not None else None
    if path_text is not None and message.startswith(path_text):
        try:
            relative = Path(path_text).relative_to(root)
        except ValueError:
            pass
        else:
            message = relative.as_posix() + message[len(path_text) :]
    root_text = str(root)
    if root_text != os.sep:
        message = message.replace(root_text + os.sep, "").replace(root_text, ".")
    return message
