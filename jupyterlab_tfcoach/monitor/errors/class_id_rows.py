"""Class ids, one per row, set against a table of one score per class (issue #25).

``preds - labels`` with ``preds`` ``(N, C)`` (a score or probability per class) and
``labels`` ``(N,)`` holding class ids: TensorFlow lines shapes up from the right, meets
``N`` against ``C`` and raises ``Incompatible shapes: [N,C] vs. [N]``. The broadcast
family's usual fix, an axis added to the vector, would make the line run and subtract
each row's class id from every one of its scores: a number that means nothing. The ids
meet the scores as one-hot rows (``tf.one_hot(labels, C)``: 1 in the column of the
class, 0 elsewhere), or go as they are to a sparse loss, which takes one id per row.

Read from the failing element-wise op and its values: a difference, product or squared
difference (``-``, ``*``, ``tf.subtract``, ``tf.multiply``, ``tf.math.squared_difference``)
of a 2-D ``(N, C)`` side and an ``(N,)`` side whose values are class ids. Ids are known
by their values: an integer vector (NumPy's, which TensorFlow converts to the scores'
float dtype; or the integer value inside ``tf.cast(ids, ...)``) of whole numbers in
``[0, C)``; or, for a difference, floats that are all whole numbers in ``[0, C)`` with at
least two different values. A product with whole-number floats (counts, multiplicities)
and a vector of one repeated value say nothing about classes: they keep the broadcast
family's reading, as do real-valued per-row values (a weight, an offset).
"""

from __future__ import annotations

import ast
import sys

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import operand_of, tf_alias
from jupyterlab_tfcoach.monitor.errors.held_values import INTEGERS, numpy_values
from jupyterlab_tfcoach.monitor.errors.mixed_class_ids import classes_name

SECTION = "labels-and-loss"
MAX_IDS = 1_000_000
_MAX_WRITTEN = 60
# (operator, function names) of the ops read here, and what each does to a row's scores.
_DIFFERENCES = (ast.Sub,)
_PRODUCTS = (ast.Mult,)
_DIFFERENCE_FUNCTIONS = frozenset({"subtract", "squared_difference"})
_PRODUCT_FUNCTIONS = frozenset({"multiply"})
_FLOATS = ("float", "bfloat", "half")
_CASTS = frozenset({"cast"})


def _function_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _kind(node: ast.expr) -> str | None:
    """``difference`` or ``product`` for the ops read here; None for any other."""
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, _DIFFERENCES):
            return "difference"
        if isinstance(node.op, _PRODUCTS):
            return "product"
        return None
    if isinstance(node, ast.Call) and len(node.args) >= 2:
        name = _function_name(node)
        if name in _DIFFERENCE_FUNCTIONS:
            return "difference"
        if name in _PRODUCT_FUNCTIONS:
            return "product"
    return None


def _side(node: ast.expr, index: int) -> ast.expr:
    if isinstance(node, ast.BinOp):
        return (node.left, node.right)[index]
    return node.args[index]  # type: ignore[attr-defined,no-any-return]


def _ids(
    vector_node: ast.expr, classes: int, kind: str, line: FailingLine, context: ErrorContext
) -> tuple[ast.expr, bool] | None:
    """(the node holding the ids, whether it holds integers) when the vector
    side's values are class ids in ``[0, classes)``; None otherwise."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    held_node = vector_node
    if (
        isinstance(vector_node, ast.Call)
        and _function_name(vector_node) in _CASTS
        and vector_node.args
    ):
        held_node = vector_node.args[0]  # the ids before ``tf.cast`` made them floats
    operand = operand_of(held_node, line, context)
    if operand is None or operand.shape is None or len(operand.shape) != 1:
        return None
    dtype = operand.dtype or ""
    integers = dtype.startswith(INTEGERS)
    if not integers and (not dtype.startswith(_FLOATS) or kind != "difference"):
        return None
    values = numpy_values(operand, MAX_IDS)
    if values is None or values.size < 2:
        return None
    if not integers:
        if not bool(numpy.all(numpy.isfinite(values))):
            return None
        if not bool(numpy.all(values == numpy.round(values))):
            return None
        if numpy.unique(values).size < 2:
            return None
    if bool(numpy.any(values < 0)) or bool(numpy.any(values >= classes)):
        return None
    return held_node, integers


def _cast_dtype(cast: ast.expr) -> str:
    """``float32`` for ``tf.cast(x, tf.float32)`` or ``dtype="float32"``, else ``float``."""
    if not isinstance(cast, ast.Call):
        return "float"
    given = cast.args[1] if len(cast.args) > 1 else None
    for keyword in cast.keywords:
        if keyword.arg == "dtype":
            given = keyword.value
    if isinstance(given, ast.Attribute):
        return given.attr
    if isinstance(given, ast.Constant) and type(given.value) is str:
        return given.value
    return "float"


def class_ids_against_scores(
    node: ast.expr | None,
    shapes: tuple[tuple[int | None, ...], tuple[int | None, ...]],
    line: FailingLine,
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    """(the reading, the fix) when ``node`` sets ``(N,)`` class ids against ``(N, C)``
    scores; None otherwise."""
    if node is None:
        return None
    kind = _kind(node)
    if kind is None:
        return None
    for vector_index in (0, 1):
        vector, table = shapes[vector_index], shapes[1 - vector_index]
        if len(vector) != 1 or len(table) != 2:
            continue
        rows, classes = vector[0], table[1]
        if rows is None or classes is None or table[0] != rows or classes in (rows, 1):
            continue
        if classes < 2:
            continue
        found = _reading(node, vector_index, rows, classes, kind, line, context)
        if found is not None:
            return found
    return None


def _reading(
    node: ast.expr,
    vector_index: int,
    rows: int,
    classes: int,
    kind: str,
    line: FailingLine,
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    vector_node, table_node = _side(node, vector_index), _side(node, 1 - vector_index)
    frame = line.frame
    vector_written, table_written = frame.segment(vector_node), frame.segment(table_node)
    if not vector_written or not table_written:
        return None
    if "\n" in vector_written + table_written or len(table_written) > _MAX_WRITTEN:
        return None
    found = _ids(vector_node, classes, kind, line, context)
    if found is None:
        return None
    held_node, integers = found
    ids_written = frame.segment(held_node) or vector_written
    tf = tf_alias(context)
    depth = classes_name(classes, context, frame)
    ids = ids_written if integers else f"{tf}.cast({ids_written}, {tf}.int32)"
    table = operand_of(table_node, line, context)
    dtype = ""
    if table is not None and table.kind in ("tensor", "variable", "keras_variable"):
        table_dtype = table.dtype or ""
        if table_dtype.startswith(_FLOATS) and table_dtype != "float32":
            dtype = f", dtype={tf}.{table_dtype}"
    one_hot = f"{tf}.one_hot({ids}, {depth}{dtype})"
    numbers = "integers" if integers else "whole numbers"
    what = (
        "subtract each row's class id from every one of its scores"
        if kind == "difference"
        else "multiply every score of a row by the row's class id"
    )
    held = code(ids_written)
    if held_node is not vector_node:
        held += f" (cast to {_cast_dtype(vector_node)} there)"
    reading = (
        f"{held} holds {rows} {numbers} from 0 to {classes - 1}, one per row "
        f"of {code(table_written)}, which has {classes} columns: class ids set against one "
        f"score per class. An axis added to the ids would make the line run and {what}, a "
        "number that means nothing. Ids meet scores as one-hot rows (1 in the column of "
        "the row's class, 0 elsewhere); a loss on the ids as they are is a sparse one "
        "(`SparseCategoricalCrossentropy`), which takes one id per row"
    )
    statement = line.statement
    outer: ast.AST = statement if statement is not None else node
    fixed = rewrite(frame, outer, vector_node, one_hot)
    if not fixed or "\n" in fixed:
        fixed = rewrite(frame, node, vector_node, one_hot)
    if not fixed or "\n" in fixed:
        return reading, None
    return reading, f"the ids as one-hot rows, {code(fixed)}"
