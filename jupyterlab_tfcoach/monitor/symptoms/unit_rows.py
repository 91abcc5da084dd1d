"""A batch of embeddings L2-normalised over the examples' axis: the rows (one per
example) are not unit vectors afterwards.

``tf.math.l2_normalize(emb, axis=0)`` on an ``(N, D)`` batch of row vectors divides each
column by its length over the N examples: each feature column gets length 1, no row
does, and every example's vector now depends on the others in the batch. Cosine
similarities computed as dot products of those rows (retrieval, a siamese model's
distances, a nearest-neighbour search) come out wrong, and nothing raises.

Found after a cell that completed (a cell without ``l2_normalize`` costs a substring
test), from its top-level statements: ``tf.math.l2_normalize(E, axis=0)`` (``tf.nn``,
``keras.ops``/``keras.utils.normalize`` too; the axis as a keyword or the second
argument) where ``E`` is a name that holds, or a call that is, a batch of examples: the
result of a Keras ``predict`` or of a Keras model called on data, in this cell (its
assignment) or, by the history ``In``, an earlier one (a weight matrix, whose columns
are vectors, is not told). The symptom, measured on the statement's result (the name it
binds, a NumPy array or eager tensor of at most ``MAX_VALUES`` values, rank 2, N and D
above 1): its rows' lengths are not 1 (beyond ``TOLERANCE``). The note names the call,
the shape and the rows' lengths; fix: the statement with ``axis=-1``.

Without a batch of examples to measure, the source says it when, in any scope of the cell
(a function it defines too), the name the normalisation binds is then multiplied rows by
rows, ``tf.matmul(N, M, transpose_b=True)``, ``N @ tf.transpose(M)`` or ``N @ M.T``:
those dot products run over the last axis, which the normalisation did not make unit
length, whatever the layout; same fix. Silent: ``N^T @ N`` (columns with columns: a
cross-correlation over the batch, normalised over it on purpose).
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import NUMBERS, held_array
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    function_scopes,
    history_assignments,
    int_literal,
    parsed_source,
    scope_nodes,
)

SECTION = "class-axis"
MAX_VALUES = 1_000_000
MAX_CELL_CHARS = 50_000
MAX_ROWS_READ = 1_000
TOLERANCE = 1e-3
_HISTORY_CELLS = 30
_NORMALISERS = frozenset({"l2_normalize", "normalize"})


def _axis(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in ("axis", "dim"):
            return keyword.value
    return call.args[1] if len(call.args) >= 2 else None


def _is_examples(node: ast.expr, namespace: dict[str, Any]) -> bool:
    """Whether ``node`` is a batch of examples: a ``predict`` call or a Keras model
    called on data."""
    while isinstance(node, ast.Call) and call_name(node) in ("numpy", "asarray", "array"):
        node = node.func.value if isinstance(node.func, ast.Attribute) else node.args[0]
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "predict":
        return value_kind(_held(node.func.value, namespace)) == "model"
    return isinstance(node.func, ast.Name) and value_kind(namespace.get(node.func.id)) == "model"


def _held(node: ast.expr, namespace: dict[str, Any]) -> Any:
    return namespace.get(node.id) if isinstance(node, ast.Name) else None


def _examples_source(
    operand: ast.expr, tree: ast.Module, line: int, namespace: dict[str, Any], source: str
) -> str | None:
    """The call that made ``operand``'s batch of examples, as written."""
    if _is_examples(operand, namespace):
        return ast.get_source_segment(source, operand)
    if not isinstance(operand, ast.Name):
        return None
    for statement in reversed(tree.body):
        if statement.lineno >= line or not isinstance(statement, ast.Assign):
            continue
        if any(isinstance(t, ast.Name) and t.id == operand.id for t in statement.targets):
            value = statement.value
            return ast.get_source_segment(source, value) if _is_examples(value, namespace) else None
    for statement, cell in history_assignments(operand.id, namespace, _HISTORY_CELLS, 50_000):
        value = statement.value
        return ast.get_source_segment(cell, value) if _is_examples(value, namespace) else None
    return None


def _row_lengths(value: Any) -> tuple[tuple[int, int], float, float] | None:
    """The shape of a rank-2 array or eager tensor and its (first) rows' shortest and
    longest lengths."""
    numpy = sys.modules.get("numpy")
    values = held_array(value, MAX_VALUES, NUMBERS, ndim=2)
    if numpy is None or values is None or values.shape[0] < 2 or values.shape[1] < 2:
        return None
    lengths = numpy.linalg.norm(values[:MAX_ROWS_READ].astype("float64"), axis=1)
    return values.shape, float(lengths.min()), float(lengths.max())


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if "normalize" not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            continue
        for node in ast.walk(statement.value):
            if not isinstance(node, ast.Call) or call_name(node) not in _NORMALISERS:
                continue
            axis = _axis(node)
            if axis is None or int_literal(axis) != 0 or not node.args:
                continue
            text = _note(statement, node, axis, tree, source, namespace)
            if text is not None:
                return [reports.note(text, SECTION)]
    text = _row_gram_note(tree, source)
    return [reports.note(text, SECTION)] if text is not None else []


def _transposed(node: ast.expr) -> ast.expr | None:
    """``X`` for ``tf.transpose(X)`` or ``X.T``."""
    if isinstance(node, ast.Call) and call_name(node) == "transpose" and len(node.args) == 1:
        return node.args[0]
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return node.value
    return None


def _row_gram(node: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    """The two operands of a product of rows with rows, ``A @ B^T`` (contracting both last
    axes): ``tf.matmul(A, B, transpose_b=True)``, ``A @ tf.transpose(B)``, ``A @ B.T``."""
    if isinstance(node, ast.Call) and call_name(node) == "matmul" and len(node.args) == 2:
        flags = {k.arg: k.value for k in node.keywords}
        flag, other = flags.get("transpose_b"), flags.get("transpose_a")
        if isinstance(flag, ast.Constant) and flag.value is True and other is None:
            return node.args[0], node.args[1]
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        right = _transposed(node.right)
        if right is not None and _transposed(node.left) is None:
            return node.left, right
    return None


def _row_gram_note(tree: ast.Module, source: str) -> str | None:
    """In any scope of the cell: ``N = l2_normalize(E, axis=0)`` and, later in that scope
    with ``N`` not bound again before it, a product of rows with rows of ``N`` (``N @
    N^T``). The product's dot products run over the last axis, the normalisation made
    axis 0 unit length: whatever the layout, the two disagree and the products are not
    cosine similarities. Read from the source alone (a function is told where it is
    defined)."""
    for scope in function_scopes(tree):
        nodes = scope_nodes(scope)
        for index, statement in enumerate(nodes):
            found = _normalised_over_examples(statement)
            if found is None:
                continue
            name, call, axis = found
            inside = {id(node) for node in ast.walk(statement)}
            for later in nodes[index + 1 :]:
                if id(later) in inside:
                    continue
                if (
                    isinstance(later, ast.Name)
                    and later.id == name
                    and isinstance(later.ctx, ast.Store)
                ):
                    break
                operands = _row_gram(later)
                if operands is None or not any(
                    isinstance(o, ast.Name) and o.id == name for o in operands
                ):
                    continue
                return _row_gram_text(scope, statement, call, axis, later, name, source)
    return None


def _normalised_over_examples(node: ast.AST) -> tuple[str, ast.Call, ast.expr] | None:
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and call_name(node.value) in _NORMALISERS
        and node.value.args
    ):
        return None
    axis = _axis(node.value)
    if axis is None or int_literal(axis) != 0:
        return None
    return node.targets[0].id, node.value, axis


def _row_gram_text(
    scope: ast.AST,
    statement: ast.Assign,
    call: ast.Call,
    axis: ast.expr,
    product: ast.AST,
    name: str,
    source: str,
) -> str | None:
    written = ast.get_source_segment(source, call)
    whole = ast.get_source_segment(source, statement)
    gram = ast.get_source_segment(source, product)
    if None in (written, whole, gram) or axis.end_col_offset is None:
        return None
    assert whole is not None
    if axis.lineno != statement.lineno or "\n" in whole or "\n" in (gram or ""):
        return None
    raw = whole.encode("utf-8")
    begin = axis.col_offset - statement.col_offset
    end = axis.end_col_offset - statement.col_offset
    fixed = (raw[:begin] + b"-1" + raw[end:]).decode("utf-8")
    where = (
        f"In `{scope.name}`, `{written}`"
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef)
        else f"`{written}`"
    )
    return (
        f"{where} (line {call.lineno}) normalises over axis 0: each column of `{name}` gets "
        f"length 1, not each row. `{gram}` (line {getattr(product, 'lineno', 0)}) then takes "
        f"dot products of rows of `{name}` (over its last axis), so they are not cosine "
        "similarities, and with one row per example each example's vector depends on the "
        "rest of the batch. Nothing raises. Normalise each row, over the last axis: "
        f"`{fixed}`."
    )


def _note(
    statement: ast.Assign,
    call: ast.Call,
    axis: ast.expr,
    tree: ast.Module,
    source: str,
    namespace: dict[str, Any],
) -> str | None:
    target = statement.targets[0]
    assert isinstance(target, ast.Name)
    operand = call.args[0]
    made_by = _examples_source(operand, tree, statement.lineno, namespace, source)
    if made_by is None:
        return None
    result = namespace.get(target.id)
    lengths = _row_lengths(result)
    if lengths is None:
        return None
    shape, low, high = lengths
    if abs(low - 1) <= TOLERANCE and abs(high - 1) <= TOLERANCE:
        return None
    written = ast.get_source_segment(source, call)
    whole = ast.get_source_segment(source, statement)
    operand_text = ast.get_source_segment(source, operand)
    if None in (written, whole, operand_text) or axis.end_col_offset is None:
        return None
    assert whole is not None
    if axis.lineno != statement.lineno or "\n" in whole:
        return None
    raw = whole.encode("utf-8")
    begin = axis.col_offset - statement.col_offset
    end = axis.end_col_offset - statement.col_offset
    fixed = (raw[:begin] + b"-1" + raw[end:]).decode("utf-8")
    return (
        f"`{written}` (line {call.lineno}) normalises `{operand_text}`, a "
        f"{show_shape(tuple(shape))} batch of vectors, one row per example (from "
        f"`{made_by}`), over axis 0, across the examples: each column (feature) gets "
        f"length 1, not each row. After it the rows of `{target.id}` have lengths from "
        f"{low:.3g} to {high:.3g}, so their dot products are not cosine similarities, "
        "and each example's vector depends on the rest of the batch. Nothing raises. "
        f"Normalise each row, over the last axis: `{fixed}`."
    )
