"""Static analysis of TensorFlow code: the public API every adapter uses.

``analyze_source`` checks one Python source, ``analyze_cells`` the code cells
of a notebook (joined, so names flow between cells; lines count within each
cell), ``analyze_path`` a ``.py`` file or an ``.ipynb`` notebook. Findings are
sorted by (cell, line, column, code); positions are 1-based with character
columns and ``end_column`` one past the end (see ``findings.py``).

Syntax errors: ``analyze_source`` raises ``AnalysisSyntaxError`` (a
``SyntaxError``). Notebooks are analysed even when some cells are broken:
those cells are left out and listed in ``check_cells(...).syntax_errors``;
``analyze_path`` then raises ``AnalysisInputError`` carrying the findings of
the other cells in ``.findings``.

Time budget: inside ``with time_budget(seconds) as budget:`` (``budget.py``), an
analysis that runs out of time returns the findings made so far and
``budget.note`` says it stopped; the long-running front ends (language server,
Jupyter server extension) use one. Without it an analysis runs to the end; its
cost is linear in the input whatever its shape (``bindings.MAX_REACHING``).

Only ``ast`` is used: no TensorFlow, no jedi, nothing imported from the
analysed code. A source that does not import TensorFlow yields no findings.
"""

from __future__ import annotations

import ast
import gc
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from jupyterlab_tfcoach.analysis.budget import (
    BudgetExceeded,
    TimeBudget,
    current_budget,
    time_budget,
)
from jupyterlab_tfcoach.analysis.config import Config, ConfigError, is_suppressed, load_config
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.errors import TOO_DEEP, AnalysisInputError, AnalysisSyntaxError
from jupyterlab_tfcoach.analysis.findings import Edit, Finding, Fix, RelatedLocation, Severity
from jupyterlab_tfcoach.analysis.model import Model
from jupyterlab_tfcoach.analysis.notebook import CellSyntaxError, JoinedCells, join_cells
from jupyterlab_tfcoach.analysis.positions import SourceLines
from jupyterlab_tfcoach.analysis.rules import RULES, RULES_BY_CODE, Rule, rule_by_code

__all__ = [
    "RULES",
    "AnalysisInputError",
    "AnalysisSyntaxError",
    "CellSyntaxError",
    "CellsAnalysis",
    "Config",
    "ConfigError",
    "Edit",
    "Finding",
    "Fix",
    "Rule",
    "Severity",
    "TimeBudget",
    "analyze_cells",
    "analyze_path",
    "analyze_source",
    "check_cells",
    "load_config",
    "rule_by_code",
    "time_budget",
]

_DEFAULT_CONFIG = Config()


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one analysis runs, in the main thread only.

    ``ast.parse`` allocates tens of thousands of objects that all stay alive,
    which makes the collector rescan them again and again (it more than
    doubled the time of a 5,000-line file). The analysis frees its own cycles
    (``Model.release``), so nothing piles up meanwhile.

    The collector is process-wide: paused from a worker thread of a server (the
    Jupyter server runs ``/analyze`` in an executor thread, the language server
    analyses on its own thread), it would stay paused for every other request
    of the process while the analysis runs. So only an analysis in the main
    thread (the CLI) pauses it, for that one analysis; a nested one leaves it
    to the outer one.
    """
    if threading.current_thread() is not threading.main_thread() or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _sort_key(finding: Finding) -> tuple[int, int, int, str]:
    cell = -1 if finding.cell is None else finding.cell
    return (cell, finding.line, finding.column, finding.code)


def _parse(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as error:
        raise AnalysisSyntaxError(error.msg, error.lineno, error.offset) from error
    except ValueError as error:  # "source code string cannot contain null bytes"
        raise AnalysisSyntaxError(str(error), None, None) from error
    except (RecursionError, MemoryError) as error:  # the parser's own depth limits
        raise AnalysisSyntaxError(TOO_DEEP, None, None) from error


def _run_rules(source: SourceLines, tree: ast.Module, config: Config) -> list[Finding]:
    if "tensorflow" not in source.text:
        return []  # no TensorFlow import can exist: skip building the model
    budget = current_budget()
    model = None
    findings: list[Finding] = []
    try:
        if budget is not None:
            budget.check()
        model = Model(tree, budget)
        if not model.imports.imports_tensorflow:
            return []
        context = RuleContext(source, model, RULES_BY_CODE)
        for rule in RULES:
            if not config.is_enabled(rule.code):
                continue
            if budget is not None:
                budget.check()
            for finding in rule.check(context):
                if not is_suppressed(source.line_text(finding.line), finding.code):
                    findings.append(finding)
    except BudgetExceeded:
        # Out of time: what was found so far stands (each finding is complete).
        assert budget is not None
        budget.stop()
    except RecursionError:
        return []  # pathologically nested code: better no findings than a crash
    finally:
        if model is not None:
            model.release()
    return findings


def analyze_source(
    source: str, config: Config | None = None, path: str | None = None
) -> list[Finding]:
    """Findings for one Python source; raises ``AnalysisSyntaxError`` if it does not parse."""
    if source.startswith("\ufeff"):
        source = source[1:]
    with _gc_paused():
        tree = _parse(source)
        findings = _run_rules(SourceLines(source), tree, config or _DEFAULT_CONFIG)
        # Free the tree while the collector is still paused: it has no cycles, so
        # reference counting frees it at once. Left alive past ``gc.enable()``, its
        # hundreds of thousands of nodes would all be scanned by the next collection.
        del tree
    if path is not None:
        findings = [f.with_location(path=path) for f in findings]
    return sorted(findings, key=_sort_key)


@dataclass(frozen=True)
class CellsAnalysis:
    findings: list[Finding]
    syntax_errors: tuple[CellSyntaxError, ...]  # cells left out, positions within the cell


def _join_parsable(cells: Sequence[str]) -> tuple[JoinedCells, ast.Module]:
    """Join cells; if the joined text still fails (e.g. a late ``__future__`` import),
    blank the cell holding the error and try again."""
    blank: dict[int, CellSyntaxError] = {}
    while True:
        joined = join_cells(cells, blank)
        try:
            return joined, _parse(joined.source)
        except AnalysisSyntaxError as error:
            cell, line = joined.locate(error.lineno or 1)
            if cell in blank or not joined.cell_first_line:
                raise
            blank[cell] = CellSyntaxError(cell, line, error.offset or 1, error.msg)


def _to_cell(finding: Finding, joined: JoinedCells) -> Finding:
    cell, line = joined.locate(finding.line)
    end_cell, end_line = joined.locate(finding.end_line)
    if end_cell != cell:  # cannot happen for one statement; stay inside the cell anyway
        end_line = joined.cell_line_count[cell]
    # An indented cell was analysed dedented, as IPython runs it: columns shift back.
    shift = joined.indent_of(cell)
    fix = finding.fix
    if fix is not None:
        edits = []
        for edit in fix.edits:
            edit_cell, edit_line = joined.locate(edit.line)
            edit_end_cell, edit_end_line = joined.locate(edit.end_line)
            if edit_cell != cell or edit_end_cell != cell:
                fix = None  # the fix touches another cell: not expressible per cell
                break
            edits.append(
                Edit(
                    edit_line,
                    edit.column + shift,
                    edit_end_line,
                    edit.end_column + shift,
                    edit.new_text,
                )
            )
        if fix is not None:
            fix = Fix(fix.description, tuple(edits))
    return finding.with_location(
        line=line,
        end_line=end_line,
        cell=cell,
        fix=fix,
        column=finding.column + shift,
        end_column=finding.end_column + shift,
        related=tuple(_related_to_cell(related, joined) for related in finding.related),
    )


def _related_to_cell(related: RelatedLocation, joined: JoinedCells) -> RelatedLocation:
    """A related location may sit in another cell than its finding (a call in a later
    cell): it is mapped on its own, with its own cell's indent."""
    cell, line = joined.locate(related.line)
    end_cell, end_line = joined.locate(related.end_line)
    if end_cell != cell:
        end_line = joined.cell_line_count[cell]
    shift = joined.indent_of(cell)
    return replace(
        related,
        line=line,
        end_line=end_line,
        column=related.column + shift,
        end_column=related.end_column + shift,
        cell=cell,
    )


def check_cells(
    cells: Sequence[str], config: Config | None = None, path: str | None = None
) -> CellsAnalysis:
    """Findings for notebook code cells, plus the cells left out for syntax errors."""
    with _gc_paused():
        joined, tree = _join_parsable(cells)
        findings = _run_rules(SourceLines(joined.source), tree, config or _DEFAULT_CONFIG)
        del tree  # freed while the collector is paused (see ``analyze_source``)
    located = [_to_cell(f, joined) for f in findings]
    if path is not None:
        located = [f.with_location(path=path) for f in located]
    return CellsAnalysis(sorted(located, key=_sort_key), joined.syntax_errors)


def analyze_cells(
    cells: Sequence[str], config: Config | None = None, path: str | None = None
) -> list[Finding]:
    """Findings for notebook code cells (``cell`` set, lines within the cell).

    Cells with syntax errors are left out; use ``check_cells`` to learn which.
    """
    return check_cells(cells, config, path).findings


def _read_text(path: Path, shown: str) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError as error:
        raise AnalysisInputError(shown, "no such file") from error
    except IsADirectoryError as error:
        raise AnalysisInputError(shown, "is a directory") from error
    except OSError as error:
        raise AnalysisInputError(shown, f"cannot read: {error.strerror or error}") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AnalysisInputError(
            shown,
            f"not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})",
        ) from error
    return text[1:] if text.startswith("\ufeff") else text


def _notebook_code_cells(text: str, shown: str) -> list[str] | None:
    """The code cells' sources; None for a notebook in another language.

    Format 4 (all Jupyter has written since 2015) is read with ``json`` and checked as far
    as the analysis relies on it: nbformat and jsonschema take longer to import than the
    whole check of a notebook. Older formats go through nbformat's converters, imported
    only then.
    """
    import json

    def invalid(detail: str) -> AnalysisInputError:
        return AnalysisInputError(shown, f"invalid notebook JSON: {detail}")

    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: absurd nesting
        raise invalid(str(error) or type(error).__name__) from error
    if not isinstance(notebook, dict):
        raise invalid("the top level is not an object")
    version = notebook.get("nbformat")
    if type(version) is not int:
        raise invalid("no integer 'nbformat' version")
    if version != 4:
        import nbformat  # heavy: only for the formats it converts (or rejects)

        try:
            notebook = nbformat.reads(text, as_version=4)
        except Exception as error:  # nbformat raises many types (JSON, schema, version)
            message = str(error).strip()
            raise invalid(message.splitlines()[0] if message else type(error).__name__) from error
    metadata = notebook.get("metadata", {})
    if not isinstance(metadata, dict):
        raise invalid("'metadata' is not an object")
    language_info = metadata.get("language_info") or {}
    kernelspec = metadata.get("kernelspec") or {}
    language = (language_info.get("name") if isinstance(language_info, dict) else None) or (
        kernelspec.get("language") if isinstance(kernelspec, dict) else None
    )
    if isinstance(language, str) and language.lower() not in ("python", "python3"):
        return None
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise invalid("no 'cells' list")
    sources = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise invalid(f"cells[{index}] is not an object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise invalid(f"cells[{index}]: 'source' is not text")
        sources.append(source)
    return sources


def analyze_path(path: str | Path, config: Config | None = None) -> list[Finding]:
    """Findings for a ``.py`` file or an ``.ipynb`` notebook.

    ``config`` None: read ``[tool.tfcoach]`` from the nearest ``pyproject.toml``.
    Raises ``AnalysisInputError`` for unreadable, non-UTF-8, invalid-notebook or
    syntactically invalid input (``ConfigError`` for an invalid configuration).
    """
    file_path = Path(path)
    shown = str(path)
    if config is None:
        config = load_config(file_path)
    text = _read_text(file_path, shown)
    if file_path.suffix.lower() == ".ipynb":
        cells = _notebook_code_cells(text, shown)
        if cells is None:
            return []
        result = check_cells(cells, config, shown)
        if result.syntax_errors:
            first = result.syntax_errors[0]
            more = len(result.syntax_errors) - 1
            raise AnalysisInputError(
                shown,
                f"syntax error in code cell {first.cell} at line {first.line}, column "
                f"{first.column}: {first.message}"
                + (f" (and {more} more cell(s); the other cells were checked)" if more else ""),
                result.findings,
            )
        return result.findings
    try:
        return analyze_source(text, config, shown)
    except AnalysisSyntaxError as error:
        raise AnalysisInputError(shown, str(error)) from error
