"""NumPy's broadcast error in the learner's own line: ``a - b`` on two arrays (often a
model's output made NumPy with ``.numpy()`` or ``predict``) whose shapes cannot line up.

NumPy raises ``operands could not be broadcast together with shapes (1000,2) (8,2)``
without naming the values, and the traceback never enters TensorFlow, so TensorFlow's
broadcast family (``families_shapes.BROADCAST``) never sees it. This reading finds the
operation on the line whose two operands hold exactly the shapes in the message, says
which value has which shape and where they clash, then reads the usual intent from the
shapes:

- two tables of rows with the same width and different row counts, ``(N, D)`` and
  ``(M, D)``: every row of one compared with every row of the other, which needs an axis
  of its own for each (``a[:, None, :] - b[None, :, :]`` gives ``(N, M, D)``);
- two vectors of different lengths: every pair, ``a[:, None] - b[None, :]``;
- one the transpose of the other: ``a - b.T``;
- one missing the last axis of the other: that axis added with ``[..., None]``.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, Operand, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
)
from jupyterlab_tfcoach.monitor.errors.reduced_axis import (
    batch_axis_reduced,
    reduced_shape,
    wrong_axis,
)

_BROADCAST_SECTION = "broadcasting"
_NUMPY_BROADCAST = re.compile(
    r"^operands could not be broadcast together with shapes "
    r"\((?P<a>[\d,]*)\) \((?P<b>[\d,]*)\)\s*$"
)
_OPERATORS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}
# Operands shown as written in a fix need no parentheses around them when indexed.
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


def _shape(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        return None


def _indexed(node: ast.expr, source: str, index: str) -> str:
    """``source`` comes from ``_operand``: already parenthesised when it is an operation."""
    return f"{source}{index}"


def _operand(node: ast.expr, source: str) -> str:
    """An operand as written, parenthesised when it is itself an operation: ``x - m`` put
    back beside ``/`` must stay ``(x - m)``, or the fix would compute ``x - m / s``."""
    return source if isinstance(node, (*_ATOMS, ast.Constant)) else f"({source})"


_COMPARISONS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}


def _sides(node: ast.AST) -> tuple[ast.expr, ast.expr, str] | None:
    """(left, right, symbol) of an arithmetic ``a <op> b`` or a one-operator comparison."""
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return node.left, node.right, _OPERATORS[type(node.op)]
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS:
        return node.left, node.comparators[0], _COMPARISONS[type(node.ops[0])]
    return None


def _pairs(
    line: FailingLine, context: ErrorContext, shapes: tuple[tuple[int, ...], tuple[int, ...]]
) -> tuple[ast.expr, ast.expr, str, ast.AST, Operand, Operand] | None:
    """The ``a <op> b`` (or ``a == b``) of the failing statement whose operands have the
    two shapes. An operand the monitor cannot read without running code (``table[ids]``,
    fancy indexing) takes the message's shape when the other one is read and matches,
    and that operation is the only one on the line that fits."""
    statement = line.statement
    if statement is None:
        return None
    guessed: list[tuple[ast.expr, ast.expr, str, ast.AST, Operand, Operand]] = []
    for node in ast.walk(statement):
        sides = _sides(node)
        if sides is None:
            continue
        left_node, right_node, symbol = sides
        left, right = _read_side(left_node, line, context), _read_side(right_node, line, context)
        left_shape = tuple(left.shape) if left is not None and left.shape is not None else None
        right_shape = tuple(right.shape) if right is not None and right.shape is not None else None
        if (left_shape, right_shape) == shapes and left is not None and right is not None:
            return left_node, right_node, symbol, node, left, right
        if left_shape is None and right_shape == shapes[1] and right is not None:
            left = _unread(left_node, line, shapes[0])
            if left is not None:
                guessed.append((left_node, right_node, symbol, node, left, right))
        elif right_shape is None and left_shape == shapes[0] and left is not None:
            right = _unread(right_node, line, shapes[1])
            if right is not None:
                guessed.append((left_node, right_node, symbol, node, left, right))
    return guessed[0] if len(guessed) == 1 else None


def _read_side(node: ast.expr, line: FailingLine, context: ErrorContext) -> Operand | None:
    """An operand's value, or for an inline statistic (``t.max(axis=0)``) the shape it has
    from its array's, so a clash between two statistics can be read."""
    known = operand_of(node, line, context)
    if known is not None:
        return known
    shape = reduced_shape(node, line, context)
    return _unread(node, line, shape) if shape is not None else None


def _unread(node: ast.expr, line: FailingLine, shape: tuple[int, ...]) -> Operand | None:
    source = line.frame.segment(node)
    if not source or "\n" in source:
        return None
    return Operand(source, "array", f"a {show_shape(shape)} array", shape=shape)


def _clash(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    for axis in range(-1, -min(len(a), len(b)) - 1, -1):
        if a[axis] != b[axis] and 1 not in (a[axis], b[axis]):
            return axis
    return -1


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    a, b = _shape(error.group("a")), _shape(error.group("b"))
    if a is None or b is None:
        return None
    picked = _pairs(line, context, (a, b))
    if picked is None:
        return None
    left_node, right_node, symbol, node, left, right = picked
    axis = _clash(a, b)
    rule = (
        f"{left.sentence()}; {right.sentence()}. NumPy lines shapes up from the right, and "
        "along each axis the sizes must be equal or one of them 1: "
        f"{code(left.source)} {show_shape(a)} and {code(right.source)} {show_shape(b)} differ "
        f"at axis {axis} ({a[axis]} vs {b[axis]})."
    )
    statement = line.statement
    written = (line.frame.segment(left_node), line.frame.segment(right_node))
    if statement is None or not written[0] or not written[1]:
        return Finding(rule, None, section=_BROADCAST_SECTION)
    reduced = _reduced_axis(line, context, left_node, right_node, a, b)
    if reduced is None:
        reduced = _batch_axis(line, context, (left_node, left), (right_node, right), a, b)
    if reduced is not None:
        cause, fixed = reduced
        found = rule + cause + "."
        if not fixed or "\n" in fixed:
            return Finding(found, None, section=_BROADCAST_SECTION)
        return Finding(found, code(fixed), section=_BROADCAST_SECTION)
    left_text, right_text = (
        _operand(left_node, written[0]),
        _operand(right_node, written[1]),
    )
    replaced: str | None = None
    if len(a) == len(b) == 2 and a[1] == b[1] and a[0] != b[0] and 1 not in (a[0], b[0]):
        rule += (
            f" Both are tables of rows {a[1]} wide with different numbers of rows, so they "
            "cannot be paired row by row. To combine every row of "
            f"{code(left.source)} with every row of {code(right.source)} (a "
            f"{show_shape((a[0], b[0], a[1]))} result), give each its own axis"
        )
        replaced = (
            f"{_indexed(left_node, left_text, '[:, None, :]')} {symbol} "
            f"{_indexed(right_node, right_text, '[None, :, :]')}"
        )
    elif len(a) == len(b) == 1 and symbol in ("==", "!="):
        # Two vectors of different lengths compared: predictions against labels, almost
        # always, where an every-pair comparison would run and mean nothing.
        rule += (
            f" An element-wise comparison pairs entry i of {code(left.source)} with entry i "
            f"of {code(right.source)}: both must hold one entry per example."
        )
    elif len(a) == len(b) == 1 and a[0] != b[0] and 1 not in (a[0], b[0]):
        rule += (
            f" To combine every entry of {code(left.source)} with every entry of "
            f"{code(right.source)} (a {show_shape((a[0], b[0]))} result), give each its own axis"
        )
        replaced = (
            f"{_indexed(left_node, left_text, '[:, None]')} {symbol} "
            f"{_indexed(right_node, right_text, '[None, :]')}"
        )
    elif len(a) == len(b) == 2 and a == b[::-1]:
        rule += f" {code(right.source)} is laid out the other way round: transpose it"
        replaced = f"{left_text} {symbol} {_indexed(right_node, right_text, '.T')}"
    elif len(b) == len(a) - 1 and b == a[: len(b)]:
        rule += f" {code(right.source)} lacks {code(left.source)}'s last axis: add it"
        replaced = f"{left_text} {symbol} {_indexed(right_node, right_text, '[..., None]')}"
    elif len(a) == len(b) - 1 and a == b[: len(a)]:
        rule += f" {code(left.source)} lacks {code(right.source)}'s last axis: add it"
        replaced = f"{_indexed(left_node, left_text, '[..., None]')} {symbol} {right_text}"
    fixed = rewrite(line.frame, statement, node, replaced) if replaced else None
    if not fixed or "\n" in fixed:
        return Finding(rule if replaced is None else rule + ".", None, section=_BROADCAST_SECTION)
    return Finding(rule + ".", code(fixed), section=_BROADCAST_SECTION)


def _reduced_axis(
    line: FailingLine,
    context: ErrorContext,
    left_node: ast.expr,
    right_node: ast.expr,
    a: tuple[int, ...],
    b: tuple[int, ...],
) -> tuple[str, str | None] | None:
    """A side that is a statistic reduced over the wrong axis (``reduced_axis``): its axis,
    not a missing one, is the cause. When both sides could be, the one whose axis fewer
    statistics in the line share is; a tie names neither."""
    found = [
        reading
        for stat_node, other_shape in ((right_node, a), (left_node, b))
        if (reading := wrong_axis(line, context, stat_node, other_shape)) is not None
    ]
    if not found:
        return None
    if len(found) == 2 and found[0][2] == found[1][2]:
        return None
    text, fixed, _ = min(found, key=lambda reading: reading[2])
    return text, fixed


def _batch_axis(
    line: FailingLine,
    context: ErrorContext,
    left: tuple[ast.expr, Operand],
    right: tuple[ast.expr, Operand],
    a: tuple[int, ...],
    b: tuple[int, ...],
) -> tuple[str, str | None] | None:
    """A side that is a statistic or an argmax over the axis the other side keeps one entry
    per (``reduced_axis.batch_axis_reduced``); when both sides could be, neither is named."""
    found = [
        reading
        for (stat_node, _), (_, other), other_shape in ((right, left, a), (left, right, b))
        if (reading := batch_axis_reduced(line, context, stat_node, other_shape, other.source))
        is not None
    ]
    return found[0] if len(found) == 1 else None


NUMPY_BROADCAST = ErrorFamily(
    "NumPy arrays whose shapes cannot broadcast, in the learner's own line",
    messages=(Message(_NUMPY_BROADCAST),),
    exception_type="ValueError",
    read=_read,
    section=_BROADCAST_SECTION,
    without_library=True,
)
