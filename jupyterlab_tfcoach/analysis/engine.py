"""One analysis: parse, run the enabled rules over one model, drop what ``# noqa`` silences;
the collector paused around it in the main thread (the CLI), or in any thread of a
process that runs nothing else (the language server).

Nesting never silences the analysis: expressions nested past ``errors.MAX_NESTING`` are
cut before the model walks them (``nesting.py``) and reported, and should the model or a
rule still exceed Python's recursion limit (or memory), that is reported too; both are
``SyntaxProblem``s of kind ``DEPTH``, given with the findings of the rest."""

from __future__ import annotations

import ast
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis.budget import (
    BudgetExceeded,
    current_budget,
)
from jupyterlab_tfcoach.analysis.config import Config
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.errors import (
    TOO_DEEP_TO_CHECK,
    AnalysisDepthError,
    AnalysisSyntaxError,
    too_deep_for,
)
from jupyterlab_tfcoach.analysis.findings import Finding
from jupyterlab_tfcoach.analysis.imports import IMPORT_MARKERS
from jupyterlab_tfcoach.analysis.model import Model
from jupyterlab_tfcoach.analysis.noqa import is_suppressed
from jupyterlab_tfcoach.analysis.notebook import DEPTH, SyntaxProblem
from jupyterlab_tfcoach.analysis.parsing import parse_module
from jupyterlab_tfcoach.analysis.positions import SourceLines
from jupyterlab_tfcoach.analysis.rules import RULES, RULES_BY_CODE

DEFAULT_CONFIG = Config()


_pause_lock = threading.Lock()
_pauses = 0  # analyses (and indexes) running with the collector paused by us
_in_any_thread = False


def pause_gc_in_any_thread() -> None:
    """Let analyses on worker threads pause the collector too (see ``gc_paused``).

    For a process that runs the analysis and its protocol only, the language server:
    nothing else waits on the collector there, and its analyses and hover indexes run
    on worker threads, where each collection would rescan every syntax tree it keeps.
    """
    global _in_any_thread
    _in_any_thread = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one analysis runs.

    ``ast.parse`` allocates tens of thousands of objects that all stay alive,
    which makes the collector rescan them again and again (it more than
    doubled the time of a 5,000-line file), together with everything else the
    process keeps (the language server's hover indexes: 60 ms more per analysis
    for one 5,000-line file kept). The analysis frees its own cycles
    (``Model.release``), so nothing piles up meanwhile.

    The collector is process-wide: paused from a worker thread of a server that
    also serves others (the Jupyter server runs ``/analyze`` in an executor
    thread), it would stay paused for every other request of the process while the
    analysis runs. So only the main thread (the CLI) pauses it, unless the process
    said it runs nothing else (``pause_gc_in_any_thread``). Pauses from several
    threads nest: the collector resumes when the last one ends, and is left alone
    when something else had disabled it.
    """
    global _pauses
    if not _in_any_thread and threading.current_thread() is not threading.main_thread():
        yield
        return
    with _pause_lock:
        owned = _pauses > 0 or gc.isenabled()
        if owned:
            _pauses += 1
            gc.disable()
    try:
        yield
    finally:
        if owned:
            with _pause_lock:
                _pauses -= 1
                if _pauses == 0:
                    gc.enable()


def sort_key(finding: Finding) -> tuple[int, int, int, str]:
    cell = -1 if finding.cell is None else finding.cell
    return (cell, finding.line, finding.column, finding.code)


def _unchecked(part: str) -> SyntaxProblem:
    return SyntaxProblem(None, None, None, too_deep_for(part), DEPTH)


def run_rules(
    source: SourceLines,
    tree: ast.Module,
    config: Config,
    cell_first_lines: tuple[int, ...] = (),
) -> tuple[list[Finding], tuple[SyntaxProblem, ...]]:
    """The findings, and the ``DEPTH`` problems (``cell`` None, lines of ``source``): one
    for each statement whose expressions nested too deeply were cut (``Model.cut``), and
    one for each part of the analysis (the model, a rule) that exceeded Python's
    recursion limit or memory anyway. Never an empty answer that hides either.
    ``cell_first_lines``: where each notebook cell starts in ``source`` (joined cells)."""
    text = source.text
    if not any(marker in text for marker in IMPORT_MARKERS):
        return [], ()  # no TensorFlow or Keras import can exist: skip building the model
    budget = current_budget()
    model = None
    findings: list[Finding] = []
    unchecked: list[SyntaxProblem] = []
    try:
        if budget is not None:
            budget.check()
        try:
            model = Model(tree, budget, source.lines)
        except (RecursionError, MemoryError):
            return [], (_unchecked("the model of the code"),)
        if not model.imports.imports_tensorflow:
            return [], ()
        for node in model.cut:
            line: int = node.lineno  # type: ignore[attr-defined]
            column = source.char_column(line, node.col_offset) + 1  # type: ignore[attr-defined]
            unchecked.append(SyntaxProblem(None, line, column, TOO_DEEP_TO_CHECK, DEPTH))
        context = RuleContext(source, model, RULES_BY_CODE, cell_first_lines)
        for rule in RULES:
            if not config.is_enabled(rule.code):
                continue
            if budget is not None:
                budget.check()
            try:
                for finding in rule.check(context):
                    if not is_suppressed(source.line_text(finding.line), finding.code):
                        findings.append(finding)
            except (RecursionError, MemoryError):
                # Its findings so far stand (each is complete); the next rules start from
                # a fresh context, as the binding caches may be half built.
                unchecked.append(_unchecked(f"rule {rule.code}"))
                context = RuleContext(source, model, RULES_BY_CODE, cell_first_lines)
    except BudgetExceeded:
        # Out of time: what was found so far stands (each finding is complete).
        assert budget is not None
        budget.stop()
    finally:
        if model is not None:
            model.release()
    return findings, tuple(unchecked)


def _check(source: str, config: Config | None, path: str | None) -> Analysis:
    """``check_source``, raising ``AnalysisSyntaxError`` for a source that does not parse."""
    if source.startswith("\ufeff"):
        source = source[1:]
    with gc_paused():
        tree = parse_module(source)
        findings, unchecked = run_rules(SourceLines(source), tree, config or DEFAULT_CONFIG)
        # Free the tree while the collector is still paused: it has no cycles, so
        # reference counting frees it at once. Left alive past ``gc.enable()``, its
        # hundreds of thousands of nodes would all be scanned by the next collection.
        del tree
    if path is not None:
        findings = [f.with_location(path=path) for f in findings]
    return Analysis(sorted(findings, key=sort_key), unchecked)


def analyze_source(
    source: str, config: Config | None = None, path: str | None = None
) -> list[Finding]:
    """Findings for one Python source; raises ``AnalysisSyntaxError`` if it does not parse,
    and its subclass ``AnalysisDepthError`` (with the findings of the rest in
    ``.findings``) if part of it nests too deeply to check."""
    analysis = _check(source, config, path)
    if analysis.syntax_errors:
        first, *others = analysis.syntax_errors
        message = first.message + (f" (and in {len(others)} more place(s))" if others else "")
        raise AnalysisDepthError(message, first.line, first.column, analysis.findings)
    return analysis.findings


@dataclass(frozen=True)
class Analysis:
    """What one analysis found, for a source and for notebook cells alike."""

    findings: list[Finding]
    # Code left out: cells that do not parse (the others were analysed), or the whole
    # source (then there are no findings); and, kind ``DEPTH``, expressions nested too
    # deeply to check (the code around them was analysed).
    syntax_errors: tuple[SyntaxProblem, ...]


def unparsed(error: AnalysisSyntaxError) -> Analysis:
    """The analysis of code that does not parse at all: no findings, one problem."""
    return Analysis([], (SyntaxProblem(None, error.lineno, error.offset, error.msg),))


def check_source(source: str, config: Config | None = None, path: str | None = None) -> Analysis:
    """Findings for one Python source, and what was left out: all of it when it does not
    parse, an expression nested too deeply (never raises for either)."""
    try:
        return _check(source, config, path)
    except AnalysisSyntaxError as error:
        return unparsed(error)
