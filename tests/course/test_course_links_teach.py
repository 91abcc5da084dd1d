"""Every course section a rule, a hover card or the kernel monitor links to exists and
teaches that exact point (issue #16).

Nothing here lists section ids: they come from the rule registry, the API cards, the
monitor's source and the monitor's own reports.

- Rules: a ```python block of the rule's section is flagged by that rule.
- Hover cards: the section's prose names the card's API in inline code.
- Monitor, statically: every section id the monitor's source hands to a link (a
  ``course_link``/``note`` argument, a ``SECTION`` constant, an explanation's section,
  a retrace section) is a course section, and every ``tf.``/``keras.`` name the advice
  beside it tells the learner to use is named by that section.
- Monitor, with real TensorFlow: every block of every section runs as a notebook cell
  in an IPython shell with the monitor loaded (as a learner would paste it), and each
  link of each report must point to a section that shows the same thing, i.e. one
  of that section's own blocks produces the same report entry linking there. For an
  error, the same explainer (``errors._EXPLAINERS``) on the same exception type, in a
  block that starts with ``# raises: <Type>``; every explainer must be shown this way.
  For a retrace, each documented reason kind (``docs/report.md``) is mapped by the
  monitor's own ``_entry_course`` and its section must have a block retracing for
  that kind. Variable changes and notes likewise, keyed by change and by note wording.
  A variable change no single cell can produce (``trainable_flag``/``trainable_count``
  compare two cells) is checked more weakly: the section the monitor's source names for
  it exists and has a block touching the attribute the change is named after.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyterlab_tfcoach.analysis import RULES, Rule, analyze_source
from jupyterlab_tfcoach.course import Section, get_course
from jupyterlab_tfcoach.course.api_cards import API_CARDS, ApiCard
from tests.harness import REPO_ROOT, quiet_env

pytestmark = pytest.mark.timeout(900)

COURSE = get_course()
MONITOR_DIR = REPO_ROOT / "jupyterlab_tfcoach" / "monitor"
REPORT_DOC = REPO_ROOT / "docs" / "report.md"

_BLOCK = re.compile(r"^```python\n(?P<source>.*?)^```", re.S | re.M)
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_RAISES = re.compile(r"# raises: (?P<name>\w+)")


def python_blocks(section: Section) -> list[str]:
    return [match["source"] for match in _BLOCK.finditer(section.markdown)]


def declared_error(source: str) -> str | None:
    first = source.splitlines()[0].strip() if source.strip() else ""
    match = _RAISES.fullmatch(first)
    return match["name"] if match else None


def _token(name: str) -> re.Pattern[str]:
    """``name`` as a whole dotted identifier: ``tf.cast`` but not ``tf.cast_to``."""
    return re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])")


# ------------------------------------------------------------------------- rules
@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_the_rules_section_shows_the_pitfall_the_rule_flags(rule: Rule) -> None:
    section = COURSE.section(rule.section)  # UnknownSectionError: a dangling link
    flagged = [
        source
        for source in python_blocks(section)
        if rule.code in {finding.code for finding in analyze_source(source)}
    ]
    assert flagged, (
        f"{rule.code} links to {rule.section!r}, but none of that section's "
        f"{len(python_blocks(section))} python blocks shows what {rule.code} flags"
    )


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_the_rules_docs_name_the_same_section(rule: Rule) -> None:
    section = COURSE.section(rule.section)
    course_part = rule.docs.split("## Course module", 1)[1]
    number = int(section.module_id.rsplit("-", 1)[1])
    assert f"`{section.id}`" in course_part, course_part
    assert f"*{section.title}*" in course_part, course_part
    assert f"Module {number}," in course_part, course_part


def test_the_registry_is_not_empty() -> None:
    assert len(RULES) >= 10


# ------------------------------------------------------------------ hover cards
def prose_code(section: Section) -> list[str]:
    """Inline code spans of the section's text, outside its code blocks."""
    return _INLINE_CODE.findall(_FENCE.sub("", section.markdown))


@pytest.mark.parametrize("card", list(API_CARDS.values()), ids=lambda card: card.name)
def test_the_cards_section_names_the_api_in_code(card: ApiCard) -> None:
    section = COURSE.section(card.section_id)
    spans = prose_code(section)
    if card.name.startswith("tf."):
        wanted = _token(card.name)  # `tf.cast`, not a bare `cast` (or Python's `print`)
    else:
        owner, method = card.name.split(".")
        wanted = _token(method)  # `tape.gradient(...)`, `assign_sub`
        assert re.search(rf"\b{re.escape(owner)}\b", section.markdown), (
            f"{card.section_id!r} never names {owner}"
        )
    assert any(wanted.search(span) for span in spans), (
        f"the card {card.name} links to {card.section_id!r}, whose text never names "
        f"`{wanted.pattern}` in code; spans: {spans}"
    )


# ------------------------------------------------------- monitor, from its source
@dataclass(frozen=True)
class Link:
    section: str
    where: str  # module:line
    apis: tuple[str, ...] = ()  # TensorFlow/Keras names the advice that links here uses


# `tf.cast`, `tf.config.run_functions_eagerly`, `keras.optimizers.SGD`
_API_NAME = re.compile(r"(?<![\w.])(?:tf|keras)\.[A-Za-z_][\w.]*\w")


def _api_names(node: ast.AST | None) -> tuple[str, ...]:
    """The API names in the string parts of a text (f-strings included)."""
    if node is None:
        return ()
    parts = [_text(child) or "" for child in ast.walk(node)]
    return tuple(sorted(set(_API_NAME.findall(" ".join(parts)))))


def _monitor_trees() -> dict[str, ast.Module]:
    return {
        path.relative_to(MONITOR_DIR).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(MONITOR_DIR.rglob("*.py"))
    }


def _callee(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _text(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _section_parameters(trees: dict[str, ast.Module]) -> dict[str, int]:
    """Monitor functions with a ``section``/``section_id`` parameter: name -> position."""
    found = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for index, argument in enumerate(node.args.args):
                    if argument.arg in ("section", "section_id"):
                        found[node.name] = index
    return found


def _returns_explanations(function: ast.FunctionDef) -> bool:
    annotation = ast.unparse(function.returns) if function.returns else ""
    return "tuple[str, str]" in annotation or "Explanation" in annotation


def monitor_section_links() -> list[Link]:
    """Every section id the monitor's source hands to a course link."""
    trees = _monitor_trees()
    parameters = _section_parameters(trees)
    links = []
    for module, tree in trees.items():

        def add(node: ast.AST | None, text: ast.AST | None = None, module: str = module) -> None:
            value = _text(node)
            if value is not None and node is not None:
                where = f"{module}:{getattr(node, 'lineno', 0)}"
                links.append(Link(value, where, _api_names(text)))

        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _callee(node)
                if name in parameters and len(node.args) > parameters[name]:
                    # The text comes first: `note(text, section)`.
                    add(node.args[parameters[name]], node.args[0])
                for keyword in node.keywords:
                    if keyword.arg in ("section", "section_id"):
                        add(keyword.value)
                # `sections.append("retracing")`: the retrace sections in priority order.
                if (
                    name == "append"
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and "section" in node.func.value.id
                ):
                    add(node.args[0] if node.args else None)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.endswith("SECTION"):
                        add(node.value)
                    # `CAUSE_SECTIONS = {"cause": "section-id", ...}`: a section per cause.
                    if (
                        isinstance(target, ast.Name)
                        and target.id.endswith("SECTIONS")
                        and isinstance(node.value, ast.Dict)
                    ):
                        for value in node.value.values:
                            add(value)
            elif isinstance(node, ast.FunctionDef) and _returns_explanations(node):
                # An explanation is `(text, section)`; nested functions are walked on their own.
                for child in ast.walk(node):
                    if (
                        isinstance(child, ast.Return)
                        and isinstance(child.value, ast.Tuple)
                        and len(child.value.elts) == 2
                        and _text(child.value.elts[1])
                    ):
                        add(child.value.elts[1], child.value.elts[0])
    return links


MONITOR_LINKS = monitor_section_links()


def test_the_monitor_source_scan_finds_its_links() -> None:
    # Every kind of place is found: course_link, note, variable_change, SECTION
    # constants, explanations and the retrace priority list.
    places = {link.where.split(":")[0] for link in MONITOR_LINKS}
    assert {
        "errors/__init__.py",
        "variables/tape_gradients.py",
        "traces/registry.py",
        "traces/entries.py",
        "variables/namespace_diff.py",
        "variables/stopped_learning.py",
    } <= places
    assert len({link.section for link in MONITOR_LINKS}) >= 10
    # Nothing that spells a section id is left outside the scan.
    known = {section.id for section in COURSE.sections}
    found = {(link.where, link.section) for link in MONITOR_LINKS}
    missed = [
        f"{module}:{node.lineno} {node.value!r}"
        for module, tree in _monitor_trees().items()
        for node in _constants_not_used_as_keys(tree)
        if node.value in known and (f"{module}:{node.lineno}", node.value) not in found
    ]
    assert missed == []


def _constants_not_used_as_keys(tree: ast.Module) -> Iterator[ast.Constant]:
    """String constants, except report keys (`report["variables"]`, `.get("variables")`,
    `{"variables": []}`) that happen to spell a section id."""
    keys: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            keys.add(id(node.slice))
        elif isinstance(node, ast.Dict):
            keys.update(id(key) for key in node.keys if key is not None)
        elif isinstance(node, ast.Call) and _callee(node) == "get" and node.args:
            keys.add(id(node.args[0]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in keys:
            yield node


def test_every_section_the_monitor_links_to_exists() -> None:
    known = {section.id for section in COURSE.sections}
    dangling = [
        f"{link.where} -> {link.section!r}" for link in MONITOR_LINKS if link.section not in known
    ]
    assert dangling == []


def test_the_monitors_advice_uses_only_apis_its_section_names() -> None:
    """An explanation or note that tells the learner to use `tf.print` or
    `tf.config.run_functions_eagerly(False)` links to a section that names it."""
    assert sum(len(link.apis) for link in MONITOR_LINKS) >= 10
    missing = []
    for link in MONITOR_LINKS:
        text = COURSE.section(link.section).markdown
        for api in link.apis:
            # "3 more tf.functions traced": the plural of a name the section has.
            if not (_token(api).search(text) or _token(api.removesuffix("s")).search(text)):
                missing.append(f"{link.where} -> {link.section}: {api}")
    assert missing == []


def variable_change_sections() -> dict[str, set[str]]:
    """``variable_change(label, "<change>", before, after, text, "<section>")`` calls."""
    found: dict[str, set[str]] = {}
    for tree in _monitor_trees().values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _callee(node) == "variable_change":
                change, section = _text(node.args[1]), _text(node.args[5])
                if change and section:
                    found.setdefault(change, set()).add(section)
    return found


# ------------------------------------------------- monitor, with real TensorFlow
def documented_names(heading: str) -> list[str]:
    """The names in the first column of a table of ``docs/report.md``."""
    text = REPORT_DOC.read_text(encoding="utf-8")
    start = text.index(f"## {heading}\n")
    names = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not line.startswith("|---"):
            first = line.split("|")[1]
            names.extend(re.findall(r"`(\w+)`", first))
    return names


RETRACE_KINDS = documented_names("`traces[].reasons[].kind`")
VARIABLE_CHANGES = documented_names("`variables[].change`")


@dataclass(frozen=True)
class Block:
    section: str
    index: int  # within the section
    source: str

    @property
    def where(self) -> str:
        return f"{self.section} block {self.index + 1}"


BLOCKS = [
    Block(section.id, index, source)
    for section in COURSE.sections
    for index, source in enumerate(python_blocks(section))
]


def _run_blocks_under_the_monitor(output: Path) -> None:
    """Child process: each block as a cell of an IPython shell with the monitor loaded
    (the namespace reset between blocks); its report, the exception it raised and the
    explainer that explained it are written to ``output`` as JSON."""
    from IPython.core.interactiveshell import InteractiveShell

    import jupyterlab_tfcoach
    from jupyterlab_tfcoach.monitor import errors, report
    from jupyterlab_tfcoach.monitor.errors.context import ErrorContext
    from jupyterlab_tfcoach.monitor.locations import CellLocator
    from jupyterlab_tfcoach.monitor.traces.entries import entry_course as _entry_course

    sources = json.load(sys.stdin)
    shell = InteractiveShell.instance()
    jupyterlab_tfcoach.load_for_panel(shell)  # reports kept, none printed
    results = []
    for source in sources:
        shell.run_line_magic("reset", "-f")
        outcome = shell.run_cell(source, store_history=True)
        kept = report.last_report()
        assert kept is not None and kept["execution_count"] == outcome.execution_count
        exception = outcome.error_in_exec
        explainer = None
        parsed = errors.parse(exception) if exception is not None else None
        if exception is not None and parsed is not None and kept["error"] is not None:
            cells = CellLocator(shell).cell_files()
            context = ErrorContext(exception, parsed, shell.user_ns, cells)
            for candidate in errors._EXPLAINERS:  # the order explain() tries them in
                if candidate(parsed, context) is not None:
                    explainer = candidate.__name__
                    break
        results.append(
            {
                "report": kept,
                "raised": type(exception).__name__ if exception is not None else None,
                "explainer": explainer,
            }
        )
    kinds = {kind: _entry_course([{"kind": kind}]) for kind in RETRACE_KINDS}
    output.write_text(
        json.dumps(
            {
                "blocks": results,
                "explainers": [explainer.__name__ for explainer in errors._EXPLAINERS],
                "kind_sections": {k: v["section"] if v else None for k, v in kinds.items()},
            },
            default=repr,
        ),
        encoding="utf-8",
    )


@dataclass(frozen=True)
class Observed:
    """One link a report made: what it was about, and where it pointed."""

    channel: str  # "trace", "variable", "error" or "note"
    key: str  # the reason kind, the change, "<explainer> <Type>" or the note's wording
    section: str | None
    block: Block


@dataclass(frozen=True)
class MonitorRun:
    blocks: list[dict[str, Any]]
    explainers: list[str]
    kind_sections: dict[str, str | None]

    def observed(self) -> Iterator[Observed]:
        for block, result in zip(BLOCKS, self.blocks, strict=True):
            report = result["report"]
            for entry in report["traces"]:
                for reason in entry["reasons"]:
                    yield Observed("trace", reason["kind"], _section(entry), block)
            for entry in report["variables"]:
                yield Observed("variable", entry["change"], _section(entry), block)
            error = report["error"]
            if error is not None:
                key = f"{result['explainer']} {result['raised']}"
                yield Observed("error", key, _section(error), block)
            for note in report["notes"]:
                if note["course"] is not None:  # None: a note about tfcoach itself
                    yield Observed("note", note_wording(note["text"]), _section(note), block)


def _section(entry: dict[str, Any]) -> str | None:
    course = entry.get("course")
    return course["section"] if course else None


def note_wording(text: str) -> str:
    """A note without the learner's names and numbers: what it says, not about what.

    ``tape.gradient at line 8 returned None for `w`: the loss does not depend on it ...``
    -> ``the loss does not depend on it ...``."""
    said = text.split(": ", 1)[-1]
    return re.sub(r"\d+", "N", re.sub(r"`[^`]*`", "`...`", said))


@pytest.fixture(scope="module")
def monitor_run(tmp_path_factory: pytest.TempPathFactory) -> MonitorRun:
    output = tmp_path_factory.mktemp("monitor") / "reports.json"
    completed = subprocess.run(
        [sys.executable, "-m", "tests.course.test_course_links_teach", str(output)],
        input=json.dumps([block.source for block in BLOCKS]),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=quiet_env(),
        timeout=840,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    data = json.loads(output.read_text(encoding="utf-8"))
    return MonitorRun(data["blocks"], data["explainers"], data["kind_sections"])


def shown_in(run: MonitorRun, channel: str, key: str, section: str) -> list[Block]:
    """The blocks of ``section`` whose own report links ``key`` to ``section``."""
    return [
        seen.block
        for seen in run.observed()
        if (seen.channel, seen.key, seen.section, seen.block.section)
        == (channel, key, section, section)
    ]


def test_every_block_ran_under_the_monitor(monitor_run: MonitorRun) -> None:
    assert len(monitor_run.blocks) == len(BLOCKS) > 50
    raised = [
        f"{block.where}: declared {declared_error(block.source)}, raised {result['raised']}"
        for block, result in zip(BLOCKS, monitor_run.blocks, strict=True)
        if result["raised"] != declared_error(block.source)
    ]
    assert raised == []
    internal = [
        block.where
        for block, result in zip(BLOCKS, monitor_run.blocks, strict=True)
        if any("internal error" in note["text"] for note in result["report"]["notes"])
    ]
    assert internal == []


def test_every_link_a_report_made_points_to_a_section_that_shows_it(
    monitor_run: MonitorRun,
) -> None:
    """Wherever a course block triggers a report entry, the section the entry links to
    has a block of its own that triggers the same entry and links there."""
    observed = list(monitor_run.observed())
    assert {seen.channel for seen in observed} == {"trace", "variable", "error", "note"}
    known = {section.id for section in COURSE.sections}
    wrong = []
    for seen in observed:
        if seen.section is None or seen.section not in known:
            wrong.append(f"{seen.block.where}: {seen.channel} {seen.key} has no course link")
        elif seen.channel != "trace" and not shown_in(
            monitor_run, seen.channel, seen.key, seen.section
        ):
            wrong.append(
                f"{seen.block.where}: {seen.channel} '{seen.key}' links to {seen.section!r}, "
                "which has no block that shows it"
            )
    assert sorted(set(wrong)) == []


def test_every_error_explainer_is_shown_by_the_section_it_links_to(
    monitor_run: MonitorRun,
) -> None:
    """For each explainer of ``errors._EXPLAINERS``: a block of the section its
    explanation links to starts with ``# raises: <Type>``, raises that type, and is
    explained by that explainer with a link back to the same section."""
    assert len(monitor_run.explainers) >= 10
    witnesses: dict[str, list[str]] = {}
    for seen in monitor_run.observed():
        if seen.channel == "error" and seen.section == seen.block.section:
            explainer, raised = seen.key.split(" ")
            if declared_error(seen.block.source) == raised:
                witnesses.setdefault(explainer, []).append(seen.block.where)
    unshown = [name for name in monitor_run.explainers if name not in witnesses]
    assert unshown == [], f"no section shows the error these explain: {unshown}"


def test_every_retrace_kind_links_to_a_section_that_shows_it(monitor_run: MonitorRun) -> None:
    """``first_trace``, ``python_value``, ...: the section the monitor picks for the kind
    (``tracing._entry_course``) has a block whose report has a reason of that kind."""
    assert "python_value" in RETRACE_KINDS and len(RETRACE_KINDS) >= 6
    seen_kinds = {seen.key for seen in monitor_run.observed() if seen.channel == "trace"}
    assert seen_kinds <= set(RETRACE_KINDS), "docs/report.md misses a kind the monitor reports"
    unshown = []
    for kind in RETRACE_KINDS:
        section = monitor_run.kind_sections[kind]
        assert section is not None, f"{kind}: no course section"
        COURSE.section(section)
        shown = [
            seen.block.where
            for seen in monitor_run.observed()
            if seen.channel == "trace" and seen.key == kind and seen.block.section == section
        ]
        if not shown:
            unshown.append(f"{kind} -> {section}")
    assert unshown == []


def test_every_variable_change_links_to_a_section_that_shows_it(
    monitor_run: MonitorRun,
) -> None:
    """A documented change the course's blocks produce links where a block shows it (and
    to the section the monitor's source names). A change one cell cannot produce (a flag
    flipped between two cells) links to a section whose blocks touch the attribute the
    change is named after (``trainable_flag`` -> ``.trainable...``)."""
    from_source = variable_change_sections()
    observed: dict[str, set[str | None]] = {}
    for seen in monitor_run.observed():
        if seen.channel == "variable":
            observed.setdefault(seen.key, set()).add(seen.section)
    assert set(observed) <= set(VARIABLE_CHANGES), "docs/report.md misses a change"
    assert set(from_source) <= set(VARIABLE_CHANGES)
    wrong = []
    for change in VARIABLE_CHANGES:
        sections = observed.get(change, set()) | from_source.get(change, set())
        if not sections:
            wrong.append(f"{change}: neither reported by a block nor found in the monitor")
        for section_id in sections:
            if section_id is None:
                wrong.append(f"{change}: no course link")
            elif change in observed:
                if not shown_in(monitor_run, "variable", change, section_id):
                    wrong.append(f"{change} -> {section_id}: no block there shows it")
            elif not _touches_attribute(COURSE.section(section_id), change.split("_")[0]):
                stem = change.split("_")[0]
                wrong.append(f"{change} -> {section_id}: no block touches .{stem}...")
    assert wrong == []


def _touches_attribute(section: Section, stem: str) -> bool:
    for source in python_blocks(section):
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute) and node.attr.startswith(stem):
                return True
    return False


if __name__ == "__main__":
    _run_blocks_under_the_monitor(Path(sys.argv[1]))
