"""A statistic reduced over the wrong axis, read from a broadcast clash in the learner's line.

``(x - x.mean(axis=0)) / x.std(axis=1)`` on a ``(N, D)`` table fails to broadcast: the
spread was taken across each row (one value per sample, ``(N,)``) while the centre was
taken down each column (one value per feature, ``(D,)``). Adding an axis to the spread
(``std[..., None]``) would silence the error and scale every sample by its own spread,
so the cause to name is the reduction's axis. The evidence is the line itself: another
statistic of the same array over a different axis sits in the same expression, and the
clashing statistic taken over that axis instead broadcasts. The fix rewrites the axis
where the statistic is computed (its assignment in the cell, or the call in the line).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor.errors.cell_sources import last_assignment
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape, value_of

# Calls that collapse one axis of an array into a statistic (NumPy and TensorFlow names).
_REDUCTIONS = frozenset(
    {
        "mean",
        "std",
        "var",
        "sum",
        "max",
        "min",
        "median",
        "ptp",
        "amax",
        "amin",
        "nanmean",
        "nanstd",
        "nanvar",
        "nansum",
        "nanmax",
        "nanmin",
        "reduce_mean",
        "reduce_std",
        "reduce_variance",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
    }
)
# Calls that pick, along one axis, the position of a value: one position per entry of the
# other axes, like a statistic (``np.argmax(scores, axis=1)``: a class per example).
_PICKS = frozenset({"argmax", "argmin"})
# Module names that mark the function form ``np.std(x, axis=...)`` rather than ``x.std(...)``.
_MODULES = frozenset({"np", "numpy", "tf", "math", "jnp"})


@dataclass(frozen=True)
class Reduction:
    """One statistic: which array it reduces, over which axis, and where the axis is written."""

    array: ast.expr
    axis: int
    axis_node: ast.expr
    call: ast.Call
    assignment: ast.stmt | None  # the cell's ``name = x.std(axis=1)``, None when inline


def _module_form(func: ast.Attribute) -> bool:
    owner = func.value
    if isinstance(owner, ast.Name):
        return owner.id in _MODULES
    return isinstance(owner, ast.Attribute) and owner.attr in _MODULES


def _reduction_call(
    node: ast.AST, assignment: ast.stmt | None, picks: bool = False
) -> Reduction | None:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    if node.func.attr not in _REDUCTIONS and not (picks and node.func.attr in _PICKS):
        return None
    keywords = {keyword.arg: keyword.value for keyword in node.keywords}
    if "keepdims" in keywords:
        return None  # a kept axis already broadcasts: the clash has another cause
    if _module_form(node.func):
        if not node.args:
            return None
        array, positional = node.args[0], node.args[1:]
    else:
        array, positional = node.func.value, list(node.args)
    axis_node = keywords.get("axis") or (positional[0] if positional else None)
    if not isinstance(axis_node, ast.Constant) or type(axis_node.value) is not int:
        return None
    return Reduction(array, axis_node.value, axis_node, node, assignment)


def _assigned(name: str, line: FailingLine) -> ast.Assign | None:
    """The cell's last ``name = ...`` above the failing statement."""
    tree, statement = line.frame.tree(), line.statement
    if tree is None or statement is None:
        return None
    return last_assignment(tree, name, statement.lineno)


def reduction_of(node: ast.AST, line: FailingLine, picks: bool = False) -> Reduction | None:
    """The statistic ``node`` holds: an inline reduction, or a name the cell assigned one
    (with ``picks``, an argmax or argmin too)."""
    if isinstance(node, ast.Name):
        assignment = _assigned(node.id, line)
        return _reduction_call(assignment.value, assignment, picks) if assignment else None
    return _reduction_call(node, None, picks)


def _dims_of(node: ast.expr, line: FailingLine, context: ErrorContext) -> tuple[int, ...] | None:
    found, array = value_of(node, line.frame, context)
    shape = getattr(array, "shape", None) if found else None
    try:
        return tuple(int(size) for size in shape) if shape is not None else None
    except (TypeError, ValueError):
        return None


def reduced_shape(
    node: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[int, ...] | None:
    """The shape an inline statistic (``scores.min(axis=1)``) has, from its array's shape
    read without running the call: that axis dropped."""
    stat = _reduction_call(node, None)
    if stat is None:
        return None
    dims = _dims_of(stat.array, line, context)
    axis = _normal(stat.axis, len(dims)) if dims else None
    if dims is None or axis is None:
        return None
    return tuple(size for index, size in enumerate(dims) if index != axis)


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or 1 in (x, y) for x, y in zip(reversed(a), reversed(b), strict=False))


def _normal(axis: int, rank: int) -> int | None:
    return axis + rank if -rank <= axis < 0 else axis if 0 <= axis < rank else None


def wrong_axis(
    line: FailingLine,
    context: ErrorContext,
    stat_node: ast.expr,
    other_shape: tuple[int, ...],
) -> tuple[str, str | None, int] | None:
    """(explanation, fixed statement, votes) when ``stat_node`` is a statistic reduced over
    an axis other than the one a sibling statistic of the same array uses in the failing
    line, and reducing over the sibling's axis would broadcast with ``other_shape``. Votes
    counts the statistics of that array in the line reduced over the same axis as
    ``stat_node``: when both sides of the clash could be the wrong one, the odd one out is."""
    statement = line.statement
    stat = reduction_of(stat_node, line)
    if stat is None or statement is None:
        return None
    array_text = ast.dump(stat.array)
    dims = _dims_of(stat.array, line, context)
    if not dims:
        return None
    wrong = _normal(stat.axis, len(dims))
    if wrong is None:
        return None
    siblings: list[tuple[ast.AST, int]] = []
    for node in ast.walk(statement):
        if node is stat_node or not isinstance(node, ast.Name | ast.Call):
            continue
        sibling = reduction_of(node, line)
        if sibling is not None and ast.dump(sibling.array) == array_text:
            axis = _normal(sibling.axis, len(dims))
            if axis is not None:
                siblings.append((node, axis))
    votes = 1 + sum(1 for _, axis in siblings if axis == wrong)
    for node, axis in siblings:
        if axis == wrong:
            continue
        kept = tuple(size for index, size in enumerate(dims) if index != axis)
        if not _broadcasts(kept, other_shape):
            continue
        text, fixed = _explain(line, stat, stat_node, node, dims, wrong, axis)
        return text, fixed, votes
    return None


def _explain(
    line: FailingLine,
    stat: Reduction,
    stat_node: ast.expr,
    sibling_node: ast.AST,
    dims: tuple[int, ...],
    wrong: int,
    right: int,
) -> tuple[str, str | None]:
    frame = line.frame
    array = frame.segment(stat.array) or "the array"
    name = frame.segment(stat_node) or "the statistic"
    sibling = frame.segment(sibling_node) or "the other statistic"
    left = tuple(size for index, size in enumerate(dims) if index != wrong)
    kept = tuple(size for index, size in enumerate(dims) if index != right)
    made = f" is {code(frame.segment(stat.call) or name)}," if stat.assignment else " is"
    text = (
        f" {code(name)}{made} reduced over axis "
        f"{stat.axis} of {code(array)} {show_shape(dims)}: that leaves one value per entry "
        f"of the other axes, {show_shape(left)}, while {code(sibling)} is reduced over axis "
        f"{right} and leaves {show_shape(kept)}. The axis of {code(name)} is the mistake: "
        "adding an axis to it would run but scale each entry by a statistic of the wrong "
        f"slice. Reduce over axis {right} where it is computed"
    )
    outer = stat.assignment or line.statement
    fixed = rewrite(frame, outer, stat.axis_node, str(right)) if outer is not None else None
    return text, fixed


def batch_axis_reduced(
    line: FailingLine,
    context: ErrorContext,
    stat_node: ast.expr,
    other_shape: tuple[int, ...],
    other_source: str,
) -> tuple[str, str | None] | None:
    """(explanation, fixed statement) when ``stat_node`` is a statistic or an argmax taken
    over axis k of an array X whose other operand in the clash has exactly X's shape without
    another axis j: ``np.argmax(scores, axis=0) == labels`` with ``scores`` (N, C) and
    ``labels`` (N,). The other operand holds one entry per row of X, so the reduction was
    meant to keep that axis and collapse axis j; adding axes to make the two broadcast
    would run and compare every prediction with every label. Only one such j may exist."""
    statement = line.statement
    stat = reduction_of(stat_node, line, picks=True)
    if stat is None or statement is None:
        return None
    dims = _dims_of(stat.array, line, context)
    if not dims or len(dims) < 2:
        return None
    wrong = _normal(stat.axis, len(dims))
    if wrong is None:
        return None
    left = tuple(size for index, size in enumerate(dims) if index != wrong)
    if _broadcasts(left, other_shape):
        return None
    meant = [
        axis
        for axis in range(len(dims))
        if axis != wrong and tuple(s for i, s in enumerate(dims) if i != axis) == other_shape
    ]
    if len(meant) != 1:
        return None
    right = meant[0]
    frame = line.frame
    array = frame.segment(stat.array) or "the array"
    name = frame.segment(stat_node) or "the statistic"
    made = f" is {code(frame.segment(stat.call) or name)}," if stat.assignment else " is"
    text = (
        f" {code(name)}{made} taken over axis {stat.axis} of {code(array)} "
        f"{show_shape(dims)}: one value per entry of its other axes, {show_shape(left)}. "
        f"{code(other_source)} {show_shape(other_shape)} is {code(array)}'s shape without "
        f"axis {right}: one entry for each of the {dims[wrong]} entries along axis {wrong}, "
        f"so axis {wrong} is the one to keep and the axis of {code(name)} is the mistake "
        "(adding axes to make the two broadcast would run and pair every value with every "
        f"other). Take it over axis {right} where it is computed"
    )
    outer = stat.assignment or statement
    fixed = rewrite(frame, outer, stat.axis_node, str(right))
    return text, fixed
