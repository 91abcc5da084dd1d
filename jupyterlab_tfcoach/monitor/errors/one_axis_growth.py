"""An operand of a shape error grown along one axis where two needed it (issue #25).

``wide = tf.repeat(small, 2, axis=1)`` doubles the height only; compared with an image
twice as large on both axes, ``wide`` still has the old width and an element-wise op
refuses it. Read from the cells: the operand is a name of the failing line whose shape is
one side of the error; its last top-level assignment is a ``repeat`` (TensorFlow's or
NumPy's function: ``repeat(x, k, axis=a)``) or a ``tile`` (``tile(x, [1, k, 1, 1])``) of a
source whose shape is read from the namespace; the axis the error names is not the one
grown, and the other operand's size there is the source's times the same factor. Then
the entry names the statement, the axis it grew and the one it left, and the fix grows
that axis too: the repeat repeated along it, the tile's multiple for it set to the
factor. Any other origin (an intended size, a factor that would not match) says nothing.
"""

from __future__ import annotations

import ast
import sys
from types import ModuleType

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine

_MODULES = ("tensorflow", "numpy")
_MAX_OPERANDS = 6


def _whole(node: ast.expr | None, context: ErrorContext) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _whole(node.operand, context)
        return -inner if inner is not None else None
    if isinstance(node, ast.Name):
        known, value = context.lookup(node.id, None)
        return value if known and type(value) is int else None
    return None


def _library_function(call: ast.Call, context: ErrorContext) -> str | None:
    """``repeat``/``tile`` when the call is TensorFlow's or NumPy's function of that name."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("repeat", "tile"):
        return None
    root = func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    known, module = context.lookup(root.id, None)
    if not known or not isinstance(module, ModuleType):
        return None
    name = str(vars(module).get("__name__") or "").partition(".")[0]
    if name not in _MODULES or sys.modules.get(name) is None:
        return None
    return func.attr


def _argument(call: ast.Call, index: int, keywords: tuple[str, ...]) -> ast.expr | None:
    found = call.args[index] if len(call.args) > index else None
    return next((k.value for k in call.keywords if k.arg in keywords), found)


def _source_shape(node: ast.expr, context: ErrorContext) -> tuple[int, ...] | None:
    if not isinstance(node, ast.Name):
        return None
    known, value = context.lookup(node.id, None)
    if not known:
        return None
    try:
        shape = tuple(value.shape)
    except Exception:
        return None
    return shape if all(type(size) is int for size in shape) else None


def grown_one_axis(
    shapes: tuple[tuple[int | None, ...], tuple[int | None, ...]],
    axis: int,
    line: FailingLine,
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    """(what to say, the fix or None) when an operand of the failing line was grown by a
    repeat or a tile along another axis than ``axis`` (negative, from the right)."""
    for operand in line.operands[:_MAX_OPERANDS]:
        if operand.shape is None or not operand.source.isidentifier():
            continue
        for side in (0, 1):
            if tuple(operand.shape) != shapes[side]:
                continue
            other = shapes[1 - side]
            found = _read(operand.source, operand.shape, other, axis, context)
            if found is not None:
                return found
    return None


def _read(
    name: str,
    shape: tuple[int | None, ...],
    other: tuple[int | None, ...],
    axis: int,
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    rank = len(shape)
    if len(other) != rank or not -rank <= axis < 0:
        return None
    at = rank + axis  # the axis the error names, counted from the left
    for cell, assignment in assignments_in_cells(name, context):
        call = assignment.value
        if not isinstance(call, ast.Call):
            return None
        kind = _library_function(call, context)
        source = _argument(call, 0, ("input", "a", "A"))
        if kind is None or source is None:
            return None
        before = _source_shape(source, context)
        wanted, have = other[at], shape[at]
        if before is None or len(before) != rank or before[at] != have or not wanted:
            return None
        if wanted % have or wanted == have:
            return None
        factor = wanted // have
        written = cell.segment(assignment) or ""
        if not written or "\n" in written:
            return None
        frame = cell_frame(cell)
        if kind == "repeat":
            count = _argument(call, 1, ("repeats",))
            axis_node = _argument(call, 2, ("axis",))
            grown = _whole(axis_node, context)
            times = _whole(count, context)
            if grown is None or times != factor or count is None:
                return None
            grown %= rank
            if grown == at:
                return None
            call_text = cell.segment(call) or ""
            function = cell.segment(call.func) or ""
            count_text = cell.segment(count) or str(factor)
            fixed = rewrite(
                frame, assignment, call, f"{function}({call_text}, {count_text}, axis={at})"
            )
            said = f"repeats along axis {grown} only"
        else:
            multiples = _argument(call, 1, ("multiples", "reps"))
            if not isinstance(multiples, (ast.List, ast.Tuple)) or len(multiples.elts) != rank:
                return None
            values = [_whole(element, context) for element in multiples.elts]
            if values[at] != 1 or factor not in values:
                return None
            grown = values.index(factor)
            element = multiples.elts[grown]
            fixed = rewrite(frame, assignment, multiples.elts[at], cell.segment(element) or "")
            said = f"tiles axis {grown} only"
        rule = (
            f"{code(name)} was made by {code(written)} (line {assignment.lineno} of "
            f"{cell.label}), which {said}: from {code(cell.segment(source) or '')}'s "
            f"{tuple(before)} it made {tuple(shape)}, so axis {at} still has {have} where "
            f"the other operand has {wanted}, {factor} times as many. Grow axis {at} by "
            f"{factor} too"
        )
        if fixed is None or "\n" in fixed:
            return rule, None
        label = "" if cell.label == "this cell" else f"in {cell.label}, "
        return rule, f"{label}{code(fixed)}"
    return None
