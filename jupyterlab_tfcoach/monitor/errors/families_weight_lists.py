"""Several weight lists averaged as one array: one family (issue #25).

Weight averaging (a model soup, stochastic weight averaging, federated averaging) keeps
one ``get_weights()`` list per model or snapshot: a kernel, a bias, another kernel... of
different shapes. ``np.mean(snapshots, axis=0)`` first makes one NumPy array of the
whole nesting, and arrays of different shapes cannot stack into one block: NumPy raises
``setting an array element with a sequence ... inhomogeneous shape`` and says nothing of
weights. A teacher sees that the average must be taken weight by weight: ``zip(*lists)``
groups each weight's copies, and each group does stack.

Recognised by reading, for NumPy's inhomogeneous-shape refusal (claimed without the
library: NumPy raises it in the learner's line): a NumPy reduction on the failing line
(``mean``, ``average``, ``sum``, ``median``) over ``axis=0`` whose first argument holds a
list (or tuple) of two or more lists of the same length, each of arrays or tensors, where
each position has one shape in every list and the positions' shapes differ. The fix is the
call made per weight, ``[np.mean(group, axis=0) for group in zip(*snapshots)]``, a list of
averaged arrays (what ``set_weights`` takes).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
)

SECTION = "keras-model-api"
_INHOMOGENEOUS = re.compile(
    r"setting an array element with a sequence\. The requested array has an inhomogeneous "
    r"shape"
)
_AVERAGES = frozenset({"mean", "average", "sum", "median", "nanmean"})
_MAX_LISTS = 1000
_MAX_WEIGHTS = 500
_GROUP_NAMES = ("same_weight", "copies", "weight_copies")


def _weight_shapes(value: object) -> list[tuple[int | None, ...]] | None:
    """The shapes of a list or tuple of arrays or tensors; None for anything else."""
    if type(value) not in (list, tuple) or not value or len(value) > _MAX_WEIGHTS:  # type: ignore[arg-type]
        return None
    shapes = []
    for item in value:  # type: ignore[attr-defined]
        described = describe("weight", item)
        if described is None or described.shape is None:
            return None
        shapes.append(described.shape)
    return shapes


def _lists_of_weights(value: object) -> tuple[int, list[tuple[int | None, ...]]] | None:
    """(how many lists, the shapes of one) when ``value`` holds lists of weights that
    line up position by position and differ from one position to the next."""
    if type(value) not in (list, tuple) or not 2 <= len(value) <= _MAX_LISTS:  # type: ignore[arg-type]
        return None
    first: list[tuple[int | None, ...]] | None = None
    for item in value:  # type: ignore[attr-defined]
        shapes = _weight_shapes(item)
        if shapes is None or (first is not None and shapes != first):
            return None
        first = first or shapes
    if first is None or len(first) < 2 or len(set(first)) < 2:
        return None
    return len(value), first  # type: ignore[arg-type]


def _axis_zero(call: ast.Call) -> bool:
    axis = next((k.value for k in call.keywords if k.arg == "axis"), None)
    if axis is None and len(call.args) > 1:
        axis = call.args[1]
    return isinstance(axis, ast.Constant) and type(axis.value) is int and axis.value == 0


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    del error
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _AVERAGES
            and node.args
            and not isinstance(node.args[0], ast.Starred)
            and _axis_zero(node)
        ):
            continue
        listed = operand_of(node.args[0], line, context)
        if listed is None:
            continue
        found = _lists_of_weights(listed.value)
        if found is None:
            continue
        count, shapes = found
        source, function = line.frame.segment(node.args[0]), line.frame.segment(node.func)
        whole = line.frame.segment(node)
        if not source or not function or not whole or "\n" in whole:
            return None
        group = next((name for name in _GROUP_NAMES if name not in context.namespace), None)
        if group is None:
            return None
        shown = ", ".join(show_shape(shape) for shape in shapes[:4])
        if len(shapes) > 4:
            shown += ", ..."
        rule = (
            f"{code(source)} holds {count} lists of {len(shapes)} weights each (shapes "
            f"{shown}), as `get_weights()` gives them: {code(function)} first makes one "
            "NumPy array of the whole nesting, and weights of different shapes cannot stack "
            f"into one block. Average weight by weight: `zip(*{source})` groups the "
            f"{count} copies of each weight, which have one shape and stack, and the result "
            "is a list of arrays, one per weight, as `set_weights` takes it"
        )
        # The call itself, its other arguments kept, on each group.
        arguments = whole[len(function) :]
        inner = rewrite(line.frame, node, node.args[0], group)
        if not inner or not arguments.startswith("("):
            return None
        replacement = f"[{inner} for {group} in zip(*{source})]"
        fixed = rewrite(line.frame, statement, node, replacement)
        if not fixed or "\n" in fixed:
            return Finding(rule + ".", code(replacement))
        return Finding(rule + ".", code(fixed))
    return None


WEIGHT_LISTS = ErrorFamily(
    "several weight lists averaged as one array",
    messages=(Message(_INHOMOGENEOUS),),
    read=_read,
    section=SECTION,
    exception_type="ValueError",
    without_library=True,
)
