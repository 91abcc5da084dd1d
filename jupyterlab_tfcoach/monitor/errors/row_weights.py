"""A vector of one value per row multiplying (or dividing) a table of rows (issue #25).

``scaled = tf.gather(feats, ids) * weight`` with the gathered rows ``(N, F)`` and
``weight`` ``(N,)``: one weight per row, meant to scale that whole row. Broadcasting lines
shapes up from the right, so the ``N`` weights meet the ``F`` columns and TensorFlow
raises ``Incompatible shapes: [N,F] vs. [N]``. The weight needs an axis of 1 after its
own, ``weight[:, None]``, to line up with the rows.

Read from the failing element-wise op and its values: a product or a quotient (``*``,
``/``, ``tf.multiply``, ``tf.divide``) whose one side is a vector of ``N`` floats and
whose other side has two axes or more, ``N`` rows first and another size last. The
vector's own value must be readable and hold floats: a vector of integer class ids
against the columns of scores is a labels problem upstream (``one_hot``), where an axis
would make the line run and weigh every score by a class id, so nothing is told. Sums
and differences are left to the broadcast family's own reading: a per-row vector added
to scores is as often labels against predictions.
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    is_postfix_safe,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import operand_of

_SCALING_OPERATORS = (ast.Mult, ast.Div)
_SCALING_FUNCTIONS = ("multiply", "divide", "truediv")
_FLOATS = ("float", "bfloat", "half")
_MAX_WRITTEN = 60


def _is_scaling(node: ast.expr) -> bool:
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _SCALING_OPERATORS)
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in _SCALING_FUNCTIONS and len(node.args) >= 2
    return False


def _side(node: ast.expr, index: int) -> ast.expr:
    if isinstance(node, ast.BinOp):
        return (node.left, node.right)[index]
    return node.args[index]  # type: ignore[attr-defined,no-any-return]


def per_row_vector(
    node: ast.expr | None,
    shapes: tuple[tuple[int | None, ...], tuple[int | None, ...]],
    line: FailingLine,
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    """(the reading, the fix) when ``node`` scales rows of ``(N, ...)`` by an ``(N,)``
    vector of floats written without its trailing axis; None otherwise."""
    if node is None or not _is_scaling(node):
        return None
    for vector_index in (0, 1):
        vector, table = shapes[vector_index], shapes[1 - vector_index]
        if len(vector) != 1 or len(table) < 2:
            continue
        rows = vector[0]
        if rows is None or rows in (0, 1) or table[0] != rows or table[-1] in (rows, 1, None):
            continue
        found = _reading(node, vector_index, rows, table, line, context)
        if found is not None:
            return found
    return None


def _reading(
    node: ast.expr,
    vector_index: int,
    rows: int,
    table: tuple[int | None, ...],
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
    operand = operand_of(vector_node, line, context)
    # Only a vector whose values are known to be floats: integer ids are labels.
    if operand is None or operand.shape != (rows,):
        return None
    if not (operand.dtype or "").startswith(_FLOATS):
        return None
    held = vector_written if is_postfix_safe(vector_node) else f"({vector_written})"
    axes = ", ".join([":"] + ["None"] * (len(table) - 1))
    replacement = f"{held}[{axes}]"
    verb = "scale" if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) else "divide"
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        verb = "scale" if name == "multiply" else "divide"
    width = table[-1]
    row = f"{table[1]} values" if len(table) == 2 else f"shape {show_shape(table[1:])}"
    last = f"its {width} columns" if len(table) == 2 else f"of size {width}"
    reading = (
        f"{code(vector_written)} holds one value per row of {code(table_written)} ({rows} "
        f"values for its {rows} rows of {row}), but a vector lines up with the last axis, "
        f"{last}, not with the rows. To {verb} each row by its "
        f"own value, give the vector an axis of 1 after its own, {code(replacement)}, so "
        "that each value is repeated along its row"
    )
    statement = line.statement
    outer: ast.AST = statement if statement is not None else node
    fixed = rewrite(frame, outer, vector_node, replacement)
    if not fixed or "\n" in fixed:
        fixed = rewrite(frame, node, vector_node, replacement)
    if not fixed or "\n" in fixed:
        return reading, None
    return reading, code(fixed)
