"""Notebook cells: joined into one module (names flow between cells), analysed once, each
finding mapped back to its cell with lines and columns as the cell shows them.

A fix is kept only when its edits replace text the cell holds as the analysis read it: a
masked magic reads otherwise (``w = %time w - 0.1`` is read as ``w =       w - 0.1``), and
an edit across it would drop the magic from the cell."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from jupyterlab_tfcoach.analysis.config import Config
from jupyterlab_tfcoach.analysis.engine import (
    DEFAULT_CONFIG,
    Analysis,
    gc_paused,
    run_rules,
    sort_key,
    unparsed,
)
from jupyterlab_tfcoach.analysis.errors import AnalysisSyntaxError
from jupyterlab_tfcoach.analysis.findings import Edit, Finding, Fix, RelatedLocation
from jupyterlab_tfcoach.analysis.notebook import CellPositions, JoinedCells
from jupyterlab_tfcoach.analysis.parsing import parse_cells
from jupyterlab_tfcoach.analysis.positions import SourceLines, split_lines


class _AsWritten:
    """Whether an edit (positions in the joined source) replaces text its cell holds
    exactly as the analysis read it."""

    def __init__(self, cells: Sequence[str], joined: JoinedCells) -> None:
        self._cells = cells
        self._positions = joined.positions
        self._read = joined.source.split("\n")
        self._written: dict[int, list[str]] = {}  # cell index -> its lines, split on demand

    def covers(self, edit: Edit) -> bool:
        for joined_line in range(edit.line, edit.end_line + 1):
            cell, line = self._positions.locate(joined_line)
            written = self._written.get(cell)
            if written is None:
                written = self._written[cell] = split_lines(self._cells[cell])
            read = self._read[joined_line - 1] if joined_line <= len(self._read) else ""
            start = edit.column - 1 if joined_line == edit.line else 0
            end = edit.end_column - 1 if joined_line == edit.end_line else len(read)
            shift = self._positions.indent_of(cell)
            as_written = written[line - 1] if line <= len(written) else ""
            if read[start:end] != as_written[start + shift : end + shift]:
                return False
        return True


def _to_cell(finding: Finding, cells: CellPositions, as_written: _AsWritten) -> Finding:
    cell, line, end_line = cells.locate_span(finding.line, finding.end_line)
    # An indented cell was analysed dedented, as IPython runs it: columns shift back.
    shift = cells.indent_of(cell)
    fix = finding.fix
    if fix is not None:
        edits = []
        for edit in fix.edits:
            edit_cell, edit_line = cells.locate(edit.line)
            edit_end_cell, edit_end_line = cells.locate(edit.end_line)
            if edit_cell != cell or edit_end_cell != cell:
                fix = None  # the fix touches another cell: not expressible per cell
                break
            if not as_written.covers(edit):
                fix = None  # it would replace a masked magic (``w = %time ...``)
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
        related=tuple(_related_to_cell(related, cells) for related in finding.related),
    )


def _related_to_cell(related: RelatedLocation, cells: CellPositions) -> RelatedLocation:
    """A related location may sit in another cell than its finding (a call in a later
    cell): it is mapped on its own, with its own cell's indent."""
    cell, line, end_line = cells.locate_span(related.line, related.end_line)
    shift = cells.indent_of(cell)
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
) -> Analysis:
    """Findings for notebook code cells, plus the cells left out for syntax errors (all of
    them, as one problem with ``cell`` None, when leaving cells out cannot help)."""
    with gc_paused():
        try:
            joined, tree = parse_cells(cells)
        except AnalysisSyntaxError as error:
            return unparsed(error)
        findings, unchecked = run_rules(
            SourceLines(joined.source),
            tree,
            config or DEFAULT_CONFIG,
            joined.cell_first_line,
        )
        del tree  # freed while the collector is paused (see ``analyze_source``)
    as_written = _AsWritten(cells, joined)
    located = [_to_cell(f, joined.positions, as_written) for f in findings]
    if path is not None:
        located = [f.with_location(path=path) for f in located]
    return Analysis(sorted(located, key=sort_key), joined.problems_with(unchecked))


def analyze_cells(
    cells: Sequence[str], config: Config | None = None, path: str | None = None
) -> list[Finding]:
    """Findings for notebook code cells (``cell`` set, lines within the cell).

    Cells with syntax errors are left out; use ``check_cells`` to learn which.
    """
    return check_cells(cells, config, path).findings
