"""One analysis pass, run on the analysis thread: snapshot -> findings ->
diagnostics. While a file (or a notebook cell) does not parse, the findings of
the last good pass are kept where their lines are untouched.

Each pass has a time budget (10 s; the environment variable
``TFCOACH_ANALYSIS_BUDGET_MS`` sets another): past it, the findings made so far
are published with one Information diagnostic on the first line of the file
(of the first cell, for a notebook) saying "analysis stopped after N ms". A
diagnostic rather than ``window/showMessage``: it belongs to that version of the
document, goes away with the next pass that finishes in time, and does not pop
up again at every keystroke while a huge file is being edited.

Syntax errors publish nothing (the editor's Python support shows them), but code nested
too deeply to check (``SyntaxProblem`` of kind ``DEPTH``) is valid Python no other tool
flags: each such problem is one Warning diagnostic on its line, published with the
findings of the rest of the file."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace import PositionCodec

from jupyterlab_tfcoach.analysis import check_source
from jupyterlab_tfcoach.analysis.budget import ANALYSIS_BUDGET_S, time_budget
from jupyterlab_tfcoach.analysis.config import Config
from jupyterlab_tfcoach.analysis.findings import Finding
from jupyterlab_tfcoach.analysis.notebook import DEPTH, SyntaxProblem
from jupyterlab_tfcoach.analysis.positions import code_points_to_units
from jupyterlab_tfcoach.course.links import CourseLinks
from lsp_server.documents import Snapshot
from lsp_server.notebooks import analyze_notebook
from lsp_server.protocol import DocumentPart, to_diagnostics

log = logging.getLogger(__name__)

BUDGET_ENV = "TFCOACH_ANALYSIS_BUDGET_MS"
DEFAULT_BUDGET_SECONDS = ANALYSIS_BUDGET_S  # the core's, as POST tfcoach/api/analyze's


def budget_seconds() -> float:
    """The time budget of one pass: ``TFCOACH_ANALYSIS_BUDGET_MS``, else the core's (10 s)."""
    raw = os.environ.get(BUDGET_ENV, "").strip()
    try:
        return max(float(raw), 0.0) / 1000 if raw else DEFAULT_BUDGET_SECONDS
    except ValueError:
        log.warning(
            "%s=%r is not a number of milliseconds; using %g s",
            BUDGET_ENV,
            raw,
            DEFAULT_BUDGET_SECONDS,
        )
        return DEFAULT_BUDGET_SECONDS


def note_diagnostic(note: str, lines: Sequence[str], codec: PositionCodec) -> types.Diagnostic:
    """The note of an analysis that ran out of time, on the first line."""
    first = lines[0] if lines else ""
    end = types.Position(line=0, character=codec.client_num_units(first))
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=end),
        message=note,
        severity=types.DiagnosticSeverity.Information,
        source="tfcoach",
    )


def depth_diagnostic(
    problem: SyntaxProblem, lines: Sequence[str], codec: PositionCodec
) -> types.Diagnostic:
    """A part of the code left out as nested too deeply to check, from where it starts (the
    first line when the analysis could not tell) to the end of that line."""
    line = min(max((problem.line or 1) - 1, 0), max(len(lines) - 1, 0))
    text = lines[line] if lines else ""
    column = max((problem.column or 1) - 1, 0) if problem.line is not None else 0
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(
                line=line, character=code_points_to_units(text, column, codec.client_num_units)
            ),
            end=types.Position(line=line, character=codec.client_num_units(text)),
        ),
        message=problem.message,
        severity=types.DiagnosticSeverity.Warning,
        source="tfcoach",
    )


@dataclass(frozen=True)
class PartResult:
    uri: str
    lines: tuple[str, ...]
    findings: tuple[Finding, ...]
    diagnostics: tuple[types.Diagnostic, ...]  # one per finding, in the same order
    # The note of a pass that ran out of time (``note_diagnostic``) and the code nested too
    # deeply to check (``depth_diagnostic``), published with them.
    notes: tuple[types.Diagnostic, ...] = ()

    @property
    def published(self) -> list[types.Diagnostic]:
        """What the client is sent: the note (if any), then the findings."""
        return [*self.notes, *self.diagnostics]


@dataclass(frozen=True)
class AnalysisResult:
    key: str
    version: int | None
    generation: int
    parts: dict[str, PartResult]


def _spans(finding: Finding) -> list[tuple[int, int]]:
    spans = [(finding.line, finding.end_line)]
    if finding.fix is not None:
        spans += [(edit.line, edit.end_line) for edit in finding.fix.edits]
    return spans


def keep_untouched(previous: PartResult | None, lines: Sequence[str]) -> tuple[Finding, ...]:
    """The previous findings whose lines (and fix lines) are unchanged."""
    if previous is None:
        return ()
    kept = []
    for finding in previous.findings:
        if all(
            1 <= first <= last <= min(len(lines), len(previous.lines))
            and all(lines[n - 1] == previous.lines[n - 1] for n in range(first, last + 1))
            for first, last in _spans(finding)
        ):
            kept.append(finding)
    return tuple(kept)


class Analyzer:
    """Lives on the (single) analysis thread; remembers the last good results."""

    def __init__(self, budget: float | None = None) -> None:
        self._last_good: dict[str, PartResult] = {}
        self.budget = budget_seconds() if budget is None else budget

    def forget(self, uris: Sequence[str]) -> None:
        for uri in uris:
            self._last_good.pop(uri, None)

    def run(
        self, snap: Snapshot, config: Config, codec: PositionCodec, generation: int
    ) -> AnalysisResult:
        links = CourseLinks(config.course_base_url)
        path = str(snap.path) if snap.path else None
        with time_budget(self.budget) as budget:
            by_uri, broken, too_deep = self._findings(snap, config, path)
        note = budget.note
        parts: dict[str, PartResult] = {}
        # Every part's document, in the order the analysis numbers notebook cells: a
        # finding's related locations may point into another cell.
        documents = [DocumentPart(part.uri, tuple(part.lines)) for part in snap.parts]
        cells = documents if snap.is_notebook else None
        for part, document in zip(snap.parts, documents, strict=True):
            lines = tuple(document.lines)
            if part.uri in broken:
                findings = keep_untouched(self._last_good.get(part.uri), lines)
            else:
                findings = tuple(by_uri.get(part.uri, ()))
            diagnostics = tuple(to_diagnostics(findings, lines, codec, links, part.uri, cells))
            notes: tuple[types.Diagnostic, ...] = ()
            if note is not None:
                notes = (note_diagnostic(note, lines, codec),)
                note = None  # once, on the first part
            notes += tuple(depth_diagnostic(p, lines, codec) for p in too_deep.get(part.uri, ()))
            result = PartResult(part.uri, lines, findings, diagnostics, notes)
            parts[part.uri] = result
            if part.uri not in broken:
                self._last_good[part.uri] = result
        return AnalysisResult(snap.key, snap.version, generation, parts)

    @staticmethod
    def _findings(
        snap: Snapshot, config: Config, path: str | None
    ) -> tuple[dict[str, list[Finding]], set[str], dict[str, list[SyntaxProblem]]]:
        """Findings and ``DEPTH`` problems by document URI, and the documents that do not
        parse."""
        if not snap.is_notebook:
            (part,) = snap.parts
            checked = check_source(part.source, config, path)
            too_deep = [p for p in checked.syntax_errors if p.kind == DEPTH]
            if len(too_deep) < len(checked.syntax_errors):
                log.debug("%s does not parse: %s", part.uri, checked.syntax_errors[0].message)
                return {}, {part.uri}, {}
            return {part.uri: list(checked.findings)}, set(), {part.uri: too_deep}
        cells = [(part.uri, part.source) for part in snap.parts]
        result = analyze_notebook(cells, config, path)
        return result.by_uri, result.broken, result.too_deep
