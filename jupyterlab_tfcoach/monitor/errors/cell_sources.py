"""The cells' source an error family reads, and text written back into it.

An error raised through user code is read from the cells it went through (the running
one first) and then the cell history ``In``, newest first, each once and bounded in total
size (``error_cells``), every node of them in that order (``nodes_in_cells``), a name's
top-level assignments in that order (``assignments_in_cells``; of one syntax tree:
``top_assignments``, also read by ``syntax.history_assignments``); a fix rewrites a node
of one of them (``cell_frame`` gives ``rewrite`` a frame over its source) and writes
strings in the user's own quotes (``string_literal``). Shared by the families of
``families_keras_api.py`` and ``families_arguments.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, Position

# How much of the cell history ``In`` a family reads (newest first), in characters.
_HISTORY_CHARS = 200_000
_HISTORY_CELLS = 200


class SourceCell:
    """A cell's source and how text for people names it (``this cell``, ``cell In[4]``)."""

    def __init__(self, label: str, source: str) -> None:
        self.label = label
        self.source = source
        self._tree: ast.Module | None = None
        self._parsed = False

    def tree(self) -> ast.Module | None:
        if not self._parsed:
            self._parsed = True
            try:
                self._tree = ast.parse(self.source)
            except (SyntaxError, ValueError):
                self._tree = None
        return self._tree

    def segment(self, node: ast.AST) -> str | None:
        return ast.get_source_segment(self.source, node)


def error_cells(context: ErrorContext) -> list[SourceCell]:
    """The cells the error went through (the running one first), then the cell history
    ``In`` newest first, each once and bounded in total size."""
    cells: list[SourceCell] = []
    seen: set[str] = set()
    latest = max(context.cell_files.values()) if context.cell_files else None
    for frame in reversed(context.frames()):
        source = frame.source()
        if source and source not in seen:
            seen.add(source)
            number = context.cell_files.get(frame.filename)
            label = "this cell" if number is None or number == latest else f"cell In[{number}]"
            cells.append(SourceCell(label, source))
    history = context.namespace.get("In")
    if type(history) is list:
        budget = _HISTORY_CHARS
        start = max(0, len(history) - _HISTORY_CELLS)
        for index in range(len(history) - 1, start - 1, -1):
            text = history[index]
            if type(text) is not str or text in seen:
                continue
            budget -= len(text)
            if budget < 0:
                break
            seen.add(text)
            label = "this cell" if index == latest else f"cell In[{index}]"
            cells.append(SourceCell(label, text))
    return cells


def top_assignments(tree: ast.Module, name: str) -> Iterator[ast.Assign]:
    """The top-level statements ``name = ...`` of ``tree``, the last first."""
    for statement in reversed(tree.body):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name
        ):
            yield statement


def assignments_in_cells(
    name: str, context: ErrorContext
) -> Iterator[tuple[SourceCell, ast.Assign]]:
    """The statements ``name = ...`` at the top level of the cells, newest first (the
    cells in ``error_cells``' order, each read from its end)."""
    for cell in error_cells(context):
        tree = cell.tree()
        if tree is not None:
            for statement in top_assignments(tree, name):
                yield cell, statement


def nodes_in_cells(context: ErrorContext) -> Iterator[tuple[SourceCell, ast.AST]]:
    """Every node of each cell's syntax tree (``ast.walk``), the cells in ``error_cells``'
    order."""
    for cell in error_cells(context):
        tree = cell.tree()
        if tree is not None:
            for node in ast.walk(tree):
                yield cell, node


def cell_frame(cell: SourceCell) -> CellFrame:
    """A frame over a cell's source, for ``rewrite``."""

    return CellFrame("<cell>", Position(1), None, cell.tree(), cell.source)


def string_literal(written: str | None, text: str) -> str:
    """``text`` as a string literal in the quotes the user wrote ``written`` in."""
    quote = '"' if not written or written[:1] != "'" else "'"
    if quote in text or "\\" in text or "\n" in text:
        return repr(text)
    return f"{quote}{text}{quote}"


def last_assignment(tree: ast.AST, target: str, before_line: int) -> ast.Assign | None:
    """The last ``<target> = <value>`` anywhere in ``tree`` before line ``before_line``."""
    found: ast.Assign | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == target
            and node.lineno < before_line
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
    return found
