"""A statistic taken over every axis where one axis was meant: one family (issue #25).

``mean_scores = np.mean(member_scores)`` on a list of several members' (N, C) score arrays
averages members, examples and classes together: one number. The error comes a line or a
cell later, where that number is used as the array it was meant to be
(``np.argmax(mean_scores, axis=1)``: ``axis 1 is out of bounds for array of dimension 0``),
and its message says nothing of the reduction. A teacher reads back from the operand to
the statement that made it and names the axis the statistic forgot.

Recognised by reading, for NumPy's AxisError and TensorFlow's "Expected dimension in the
range" refusal: a plain name on the failing line holds a value with as many axes as the
message says (0 for one number), and its newest assignment (``origins.newest_assignment``)
is a reduction (``np.mean``, ``x.sum()``, ``tf.reduce_mean``, ...) written with no axis, of
a list of equal-shaped arrays or of an array with two axes or more, so that reducing one
axis would have left the axis the call asks for. The fix (the axis added to that
assignment) is printed only when the reduced value is a Python list or tuple of arrays:
the list's own axis, 0, is the one its items are averaged over. For an array, which axis
was meant cannot be read from the values, so the rule names the cause without a fix.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import cell_frame
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.errors.origins import newest_assignment

SECTION = "class-axis"
_NUMPY_AXIS = re.compile(
    r"axis (?P<axis>-?\d+) is out of bounds for array of dimension (?P<ndim>\d+)"
)
# TensorFlow's argmax / reduction given an axis past a scalar's (or a vector's) rank.
_TF_AXIS = re.compile(
    r"Expected dimension in the range \[-?(?P<ndim>\d+), (?P=ndim)\), but got (?P<axis>-?\d+)"
)
# Calls that reduce every axis when none is given (NumPy's, TensorFlow's, keras.ops').
_REDUCTIONS = frozenset(
    {
        "mean",
        "average",
        "sum",
        "median",
        "std",
        "var",
        "max",
        "min",
        "prod",
        "nanmean",
        "nansum",
        "reduce_mean",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_std",
        "reduce_variance",
    }
)
_MODULE_ROOTS = frozenset({"np", "numpy", "tf", "tensorflow", "ops", "keras", "math", "jnp"})
_MAX_ITEMS = 1000


def _reduced_input(call: ast.expr) -> tuple[ast.Call, ast.expr] | None:
    """``np.mean(x)`` / ``x.mean()`` written with no axis: (the call, ``x``)."""
    if not isinstance(call, ast.Call) or any(k.arg in ("axis", "keepdims") for k in call.keywords):
        return None
    if any(k.arg is None for k in call.keywords) or any(
        isinstance(a, ast.Starred) for a in call.args
    ):
        return None
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in _REDUCTIONS:
        return None
    root = func.value if isinstance(func, ast.Attribute) else None
    while isinstance(root, ast.Attribute):
        root = root.value
    function_form = isinstance(func, ast.Name) or (
        isinstance(root, ast.Name) and root.id in _MODULE_ROOTS
    )
    if function_form:
        # ``np.mean(x)``: one argument; a second positional one is the axis.
        return (call, call.args[0]) if len(call.args) == 1 else None
    if call.args or not isinstance(func, ast.Attribute):
        return None  # ``x.mean(1)``: an axis
    return call, func.value


def _rank_and_list(value: object) -> tuple[int, bool, str] | None:
    """(number of axes, whether a Python list/tuple of equal-shaped arrays, its words)."""
    if type(value) in (list, tuple):
        items = list(value[:_MAX_ITEMS])  # type: ignore[index]
        if len(items) < 2 or len(value) > _MAX_ITEMS:  # type: ignore[arg-type]
            return None
        described = [describe("item", item) for item in items]
        shapes = {d.shape if d is not None else None for d in described}
        if None in shapes or len(shapes) != 1 or described[0] is None:
            return None
        first = described[0]
        shape = first.shape or ()
        if any(size is None for size in shape):
            return None
        kind = "list" if type(value) is list else "tuple"
        words = first.description.removeprefix("a ")
        return 1 + len(shape), True, f"a {kind} of {len(value)} {words}s"  # type: ignore[arg-type]
    found = describe("value", value)
    if found is None or found.shape is None:
        return None
    return len(found.shape), False, found.description


def _ndim(value: object) -> int | None:
    """The number of axes of an array, tensor or NumPy scalar (0); None for others."""
    if type(value) in (int, float):
        return 0
    found = describe("value", value)
    if found is not None and found.shape is not None:
        return len(found.shape)
    try:
        ndim = value.ndim  # type: ignore[attr-defined]
    except Exception:
        return None
    module = getattr(type(value), "__module__", "")
    return ndim if type(ndim) is int and type(module) is str and module == "numpy" else None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    axis, ndim = int(error.group("axis")), int(error.group("ndim"))
    # NumPy's argmax sees one number as a vector of one (``dimension 1``).
    if axis < 0 or ndim > 1:
        return None
    statement = line.statement
    if statement is None:
        return None
    names = [
        node
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    ]
    seen: set[str] = set()
    for node in names:
        if node.id in seen:
            continue
        seen.add(node.id)
        found, value = context.lookup(node.id, line.frame)
        if not found or _ndim(value) != 0:
            continue
        made = newest_assignment(node.id, line.frame, context)
        if made is None:
            continue
        reduced = _reduced_input(made.assignment.value)
        if reduced is None:
            continue
        call, array = reduced
        frame = cell_frame(made.cell)
        array_source = made.cell.segment(array)
        function = made.cell.segment(call.func)
        if not array_source or not function or not isinstance(array, ast.Name):
            continue
        held_found, held = context.lookup(array.id, line.frame)
        if not held_found:
            continue
        read = _rank_and_list(held)
        if read is None:
            continue
        rank, is_list, words = read
        # One axis reduced must leave the axis the failing call asks for.
        if rank < 2 or rank - 1 <= axis:
            continue
        number = "one number"
        rule = (
            f"`{node.id}` was set by {code(made.statement)} ({made.where}): with no axis, "
            f"{code(function)} reduces over every axis of {code(array_source)} ({words}), "
            f"so `{node.id}` is {number}, with no axis {axis} for this line to use. A "
            f"statistic over one axis names it (axis=...)"
        )
        if not is_list:
            return Finding(
                rule + f"; pick the axis of {code(array_source)} to reduce (the others stay).",
                None,
                section=SECTION,
            )
        inside = made.cell.segment(call)
        if not inside or not inside.endswith(")"):
            return None
        with_axis = inside[:-1] + ", axis=0)" if call.args else inside[:-1] + "axis=0)"
        fixed = rewrite(frame, made.assignment, call, with_axis)
        if not fixed or "\n" in fixed:
            return None
        item_shape = show_shape(_item_shape(held))
        rule += (
            f": over axis 0, the list's own axis, it reduces the {len(held)} items to one "  # type: ignore[arg-type]
            f"{item_shape} array, which has axis {axis}."
        )
        return Finding(rule, code(fixed), section=SECTION)
    return None


def _item_shape(value: object) -> tuple[int | None, ...]:
    first = describe("item", value[0])  # type: ignore[index]
    return first.shape if first is not None and first.shape is not None else ()


REDUCED_WHOLE = ErrorFamily(
    "a statistic taken over every axis where one axis was meant",
    messages=(Message(_NUMPY_AXIS), Message(_TF_AXIS)),
    read=_read,
    section=SECTION,
    without_library=True,
)
