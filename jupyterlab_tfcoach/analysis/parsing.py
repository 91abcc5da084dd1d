"""Source text -> ``ast``: the one place a file or a notebook's cells are parsed, for the
analysis and for hover cards alike (so both see the same cells and the same lines)."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from jupyterlab_tfcoach.analysis.errors import TOO_DEEP, AnalysisSyntaxError
from jupyterlab_tfcoach.analysis.notebook import JoinedCells, SyntaxProblem, join_cells


def parse_module(text: str) -> ast.Module:
    """``ast.parse``, with every way it refuses text as an ``AnalysisSyntaxError``."""
    try:
        return ast.parse(text)
    except SyntaxError as error:
        raise AnalysisSyntaxError(error.msg, error.lineno, error.offset) from error
    except ValueError as error:  # "source code string cannot contain null bytes"
        raise AnalysisSyntaxError(str(error), None, None) from error
    except (RecursionError, MemoryError) as error:  # the parser's own depth limits
        raise AnalysisSyntaxError(TOO_DEEP, None, None) from error


def parse_cells(cells: Sequence[str]) -> tuple[JoinedCells, ast.Module]:
    """Join notebook cells (each that does not parse on its own left out) and parse them.

    If the joined text still fails (an error only the whole shows, e.g. a late
    ``__future__`` import), the cell holding the error is blanked and the rest tried
    again; ``AnalysisSyntaxError`` only when that cannot help.
    """
    blank: dict[int, SyntaxProblem] = {}
    while True:
        joined = join_cells(cells, blank)
        try:
            return joined, parse_module(joined.source)
        except AnalysisSyntaxError as error:
            cell, line = joined.positions.locate(error.lineno or 1)
            if cell in blank or not joined.cell_first_line:
                raise
            blank[cell] = SyntaxProblem(cell, line, error.offset or 1, error.msg)
