"""A lookup table (embeddings, one row per item) L2-normalised over axis 0: each column gets
length 1, no item's row does.

A table whose rows the session looks up by id (``tf.gather(table, ids)``,
``tf.nn.embedding_lookup(table, ids)``, ``table[ids]``, or the ``embeddings`` of a Keras
``Embedding`` layer) holds one item per row: the length meant to be 1 is each row's.
``tf.math.l2_normalize(table, axis=0)`` divides each column by its length over all the
items instead, so the rows keep lengths of their own (and each item's vector now depends on
every other's). Distances and dot products between looked-up rows then mix short and long
vectors. Nothing raises, and a check written with the same axis (``tf.norm(table,
axis=0)``) reports lengths of 1.

Read after a cell that completed (a cell without ``normalize`` costs a substring test):
a call ``l2_normalize``/``normalize`` over axis 0 (a keyword or the second argument)
anywhere in the cell, its first argument a name or attribute path the namespace holds (not
a parameter or local name of the function it is written in): a rank-2 variable, tensor or
array of at least two rows and two columns. Then the session's cells (this one, then the
history ``In`` newest first) are searched for a lookup of that table's rows, written with
the same path: ``gather`` without an axis or with axis 0 (and no ``batch_dims``),
``embedding_lookup``, or a subscript by an index array (a name, a subscript, a call or a
list, not a slice or a number). A table read only as a matrix (a Dense kernel, normalised
per unit over axis 0 on purpose) is not told. When the result went back into the table
(``table.assign(...)``) or to a name of the cell, its rows' and columns' lengths are read
and named (told only when the rows are not already of length 1); a ``norm`` of the table
over axis 0 in the cell is named too. Fix: the statement with ``axis=-1``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro
from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.errors.held_values import NUMBERS, numpy_values
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class, library_attribute
from jupyterlab_tfcoach.monitor.syntax import (
    SCOPE_NODES,
    call_name,
    function_scopes,
    held_at,
    int_literal,
    parsed_source,
    reference_path,
    scope_nodes,
    source_segment,
)

SECTION = "class-axis"
MAX_CELL_CHARS = 50_000
MAX_HISTORY_CELLS = 200
MAX_VALUES = 1_000_000
TOLERANCE = 1e-3
_NORMALISERS = frozenset({"l2_normalize", "normalize"})
_NORMS = frozenset({"norm"})
_TABLE_KINDS = frozenset({"variable", "keras_variable", "tensor", "array"})


def _axis(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in ("axis", "dim"):
            return keyword.value
    return call.args[1] if len(call.args) >= 2 else None


def _first(call: ast.Call, keyword: str) -> ast.expr | None:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    return call.args[0] if call.args else None


def _local_names(scope: ast.AST) -> set[str]:
    """The names a ``def`` binds (its parameters and assignments): not the namespace's."""
    if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return set()
    arguments = scope.args
    names = {
        a.arg
        for a in [
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            *([arguments.vararg] if arguments.vararg else []),
            *([arguments.kwarg] if arguments.kwarg else []),
        ]
    }
    for node in scope_nodes(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    globals_named = {
        name for node in scope_nodes(scope) if isinstance(node, ast.Global) for name in node.names
    }
    return names - globals_named


def _scoped_nodes(tree: ast.Module) -> Iterator[tuple[ast.AST, ast.AST, set[str]]]:
    """Each node of the cell with its scope and the scope's own names."""
    for scope in function_scopes(tree):
        local = _local_names(scope)
        for node in scope_nodes(scope):
            yield node, scope, local


def _row_lookup(node: ast.AST, path: tuple[str, ...]) -> bool:
    """Whether ``node`` reads rows of the table written as ``path`` by id."""
    if isinstance(node, ast.Call):
        name = call_name(node)
        if name == "embedding_lookup":
            table = _first(node, "params")
            return table is not None and reference_path(table) == path
        if name == "gather":
            table = _first(node, "params")
            if table is None or reference_path(table) != path:
                return False
            keywords = {k.arg: k.value for k in node.keywords}
            if "batch_dims" in keywords:
                return False
            axis = keywords.get("axis", node.args[2] if len(node.args) >= 3 else None)
            return axis is None or int_literal(axis) == 0
        return False
    if isinstance(node, ast.Subscript) and reference_path(node.value) == path:
        return isinstance(node.slice, ast.Name | ast.Subscript | ast.Call | ast.List)
    return False


def _session_cells(source: str, namespace: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    yield "this cell", source
    history = namespace.get("In")
    if type(history) is not list:
        return
    earlier = list(enumerate(history))[-MAX_HISTORY_CELLS:]
    if earlier and earlier[-1][1] == source:
        earlier = earlier[:-1]
    for number, text in reversed(earlier):
        if type(text) is str:
            yield f"cell In[{number}]", text


class Lookup(NamedTuple):
    where: str  # ``this cell``, ``cell In[4]``
    written: str  # ``tf.gather(table, ids)``


def _looked_up(path: tuple[str, ...], source: str, namespace: Mapping[str, Any]) -> Lookup | None:
    """Where the session looks rows of ``path`` up, and the lookup as written."""
    written = ".".join(path)
    for where, text in _session_cells(source, namespace):
        if len(text) > MAX_CELL_CHARS or written not in text:
            continue
        if "gather" not in text and "lookup" not in text and f"{written}[" not in text:
            continue
        tree = parsed_source(text)
        if tree is None:
            continue
        for node, _scope, local in _scoped_nodes(tree):
            if path[0] in local or not _row_lookup(node, path):
                continue
            shown = source_segment(text, node)
            if shown is not None and "\n" not in shown:
                return Lookup(where, shown)
    return None


def _embedding_layer_table(path: tuple[str, ...], namespace: dict[str, Any]) -> tuple[str, Any]:
    """``layer`` and its table for the path ``layer.embeddings`` of a Keras ``Embedding``
    layer (the table read as Keras stores it: a property of Keras's own code)."""
    if len(path) < 2 or path[-1] != "embeddings":
        return "", None
    found, layer = held_at(path[:-1], namespace)
    if not found:
        return "", None
    if not any(
        klass.__name__ == "Embedding" and is_library_class(klass) for klass in class_mro(layer)
    ):
        return "", None
    return ".".join(path[:-1]), library_attribute(layer, "embeddings")


def _lengths(value: Any) -> tuple[float, float, float, float] | None:
    """The shortest and longest row lengths, and column lengths, of a rank-2 value."""
    operand = describe("", value)
    if operand is None or operand.shape is None or len(operand.shape) != 2:
        return None
    if not (operand.dtype or "").startswith(NUMBERS):
        return None
    values = numpy_values(operand, MAX_VALUES)
    if values is None:
        return None
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    values = values.astype("float64")
    rows = numpy.linalg.norm(values, axis=1)
    columns = numpy.linalg.norm(values, axis=0)
    return float(rows.min()), float(rows.max()), float(columns.min()), float(columns.max())


def _statement_of(tree: ast.Module, node: ast.AST) -> ast.stmt | None:
    found = None
    for candidate in ast.walk(tree):
        if isinstance(candidate, ast.stmt) and not isinstance(candidate, SCOPE_NODES):
            if any(inner is node for inner in ast.walk(candidate)):
                if found is None or candidate.lineno >= found.lineno:
                    found = candidate
    return found


def _replaced(source: str, statement: ast.stmt, node: ast.expr, new: str) -> str | None:
    whole = source_segment(source, statement)
    if whole is None or "\n" in whole or node.lineno != statement.lineno:
        return None
    if node.end_col_offset is None:
        return None
    raw = whole.encode("utf-8")
    begin = node.col_offset - statement.col_offset
    end = node.end_col_offset - statement.col_offset
    return (raw[:begin] + new.encode("utf-8") + raw[end:]).decode("utf-8")


def _measured(
    tree: ast.Module, call: ast.Call, path: tuple[str, ...], namespace: dict[str, Any]
) -> tuple[str, Any] | None:
    """Where the normalised table went, and what it holds now: the table itself, for
    ``table.assign(<call>)``; a name, for ``name = <call>`` outside any function."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "assign"
            and node.args
            and node.args[0] is call
            and reference_path(node.func.value) == path
        ):
            layer, table = _embedding_layer_table(path, namespace)
            return ".".join(path), table if layer else held_at(path, namespace)[1]
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and statement.value is call
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            name = statement.targets[0].id
            return name, namespace.get(name)
    return None


def _column_norm(tree: ast.Module, source: str, path: tuple[str, ...]) -> str | None:
    """A ``norm`` of the table over axis 0 written in the cell, as written."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and call_name(node) in _NORMS and node.args):
            continue
        # A norm's second argument is its order: the axis is read by keyword only.
        axis = {k.arg: k.value for k in node.keywords}.get("axis")
        if axis is None or int_literal(axis) != 0:
            continue
        if reference_path(node.args[0]) != path:
            continue
        shown = source_segment(source, node)
        if shown is not None and "\n" not in shown:
            return shown
    return None


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if "normalize" not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node, scope, local in _scoped_nodes(tree):
        if not (isinstance(node, ast.Call) and call_name(node) in _NORMALISERS and node.args):
            continue
        axis = _axis(node)
        if axis is None or int_literal(axis) != 0:
            continue
        path = reference_path(node.args[0])
        if path is None or path[0] in local:
            continue
        layer, table = _embedding_layer_table(path, namespace)
        if not layer:
            table = held_at(path, namespace)[1]
        operand = describe("", table)
        if operand is None or operand.kind not in _TABLE_KINDS or operand.shape is None:
            continue
        shape = operand.shape
        if len(shape) != 2 or not all(isinstance(n, int) and n >= 2 for n in shape):
            continue
        lookup = None if layer else _looked_up(path, source, namespace)
        if not layer and lookup is None:
            continue
        text = _note(tree, source, node, axis, scope, path, shape, layer, lookup, namespace)
        if text is not None:
            return [reports.note(text, SECTION)]
    return []


def _note(
    tree: ast.Module,
    source: str,
    call: ast.Call,
    axis: ast.expr,
    scope: ast.AST,
    path: tuple[str, ...],
    shape: tuple[int, ...],
    layer: str,
    lookup: Lookup | None,
    namespace: dict[str, Any],
) -> str | None:
    statement = _statement_of(tree, call)
    written = source_segment(source, call)
    if statement is None or written is None or "\n" in written:
        return None
    fixed = _replaced(source, statement, axis, "-1")
    if fixed is None:
        return None
    table = ".".join(path)
    where = (
        f", in `{scope.name}`" if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) else ""
    )
    if layer:
        rows = f"`{table}` is the table of the Embedding layer `{layer}`: each of its rows is "
        rows += "one token's vector"
    else:
        assert lookup is not None
        rows = (
            f"the session looks rows of `{table}` up by id (`{lookup.written}`, {lookup.where}): "
        )
        rows += "each row is one item's vector"
    measured = _measured(tree, call, path, namespace)
    values = ""
    if measured is not None:
        lengths = _lengths(measured[1])
        if lengths is not None:
            row_low, row_high, column_low, column_high = lengths
            if abs(row_low - 1) <= TOLERANCE and abs(row_high - 1) <= TOLERANCE:
                return None  # the rows are of length 1: nothing is wrong to see
            if abs(column_low - 1) <= TOLERANCE and abs(column_high - 1) <= TOLERANCE:
                values = (
                    f" After this cell the columns of `{measured[0]}` have length 1 and its "
                    f"rows lengths from {row_low:.3g} to {row_high:.3g}."
                )
    check = _column_norm(tree, source, path)
    checked = ""
    if check is not None:
        checked = (
            f" `{check}` measures the columns too, so it shows lengths of 1: give it "
            "`axis=-1` as well."
        )
    return (
        f"`{written}` (line {call.lineno}{where}) normalises the {show_shape(shape)} "
        f"`{table}` over axis 0: each column gets length 1 across all the rows, not each "
        f"row. But {rows}, and that row's length is the one meant to be 1; each row now "
        f"also depends on every other row.{values} Distances and dot products between "
        f"looked-up rows mix short and long vectors, and nothing raises.{checked} Normalise "
        f"each row, over the last axis: `{fixed}`."
    )
