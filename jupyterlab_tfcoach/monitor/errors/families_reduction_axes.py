"""A reduction asked for an axis its input does not have: one family.

``tf.reduce_mean(err, axis=[0, 2])`` on a (301, 12) tensor: the learner expected a third
axis (features, channels) that this tensor never had. TensorFlow answers
``Invalid reduction dimension (2 for input with 2 dimension(s)`` and NumPy ``axis 2 is
out of bounds for array of dimension 2``; neither says which of the written axes is the
missing one nor what reducing over the others would give.

Read from the failing line: one reduction call (``tf.reduce_*``, ``tf.math.reduce_*``,
NumPy's and ``keras.ops``' ``mean``/``sum``/``max``/..., or the array method
``x.mean(axis=...)``) whose ``axis`` is written as an int constant or a tuple or list of
them that holds the axis the message names, on an input of the rank the message names.
The rule names the input's axes (0 to rank - 1, or counted from the end) and the axis
that does not exist. When a list or tuple also names axes that do exist, the fix is the
statement with those alone (one left is written as a plain number, ``axis=0``), and the
text says what is kept; the learner is told that a tensor meant to have that axis is to
be fixed where it was made (the reduction then stays as written). A single axis out of
range is left to the refused-argument reading, with no fix: which existing axis was meant
is the learner's.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
)

SECTION = "reducing-tensors"
_TF_AXIS = re.compile(
    r"Invalid reduction dimension \(?(?P<axis>-?\d+) for input with (?P<rank>\d+) dimension"
)
_NUMPY_AXIS = re.compile(
    r"axis (?P<axis>-?\d+) is out of bounds for array of dimension (?P<rank>\d+)"
)
_REDUCTIONS = frozenset(
    {
        "reduce_mean",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_std",
        "reduce_variance",
        "reduce_any",
        "reduce_all",
        "reduce_logsumexp",
        "reduce_euclidean_norm",
        "mean",
        "sum",
        "max",
        "min",
        "amax",
        "amin",
        "prod",
        "std",
        "var",
        "median",
        "nanmean",
        "nansum",
        "logsumexp",
    }
)
_MODULE_ROOTS = frozenset({"tf", "np", "numpy", "ops", "keras", "tensorflow", "jnp"})


def _written_axes(node: ast.expr | None) -> list[int] | None:
    """``2`` -> [2]; ``[0, 2]`` or ``(0, -1)`` -> their ints; None for anything else."""
    if node is None:
        return None
    elements = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    axes = []
    for element in elements:
        try:
            value = ast.literal_eval(element)
        except (ValueError, SyntaxError, TypeError):
            return None
        if type(value) is not int:
            return None
        axes.append(value)
    return axes or None


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _reductions(line: FailingLine) -> list[tuple[ast.Call, ast.expr, ast.expr]]:
    """(call, its input, its axis node) for each reduction written on the failing line."""
    found = []
    for part in line.frame.header():
        for node in ast.walk(part):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in _REDUCTIONS:
                continue
            axis = next((k.value for k in node.keywords if k.arg == "axis"), None)
            if _root_name(node.func.value) in _MODULE_ROOTS or node.func.attr.startswith("reduce_"):
                # A library function: the input first, the axis second.
                if not node.args or isinstance(node.args[0], ast.Starred):
                    continue
                if axis is None and len(node.args) > 1:
                    axis = node.args[1]
                if axis is not None:
                    found.append((node, node.args[0], axis))
            else:
                # A method of the array (``errs.mean(axis=2)``): the axis first.
                if axis is None and node.args:
                    axis = node.args[0]
                if axis is not None:
                    found.append((node, node.func.value, axis))
    return found


def _read_reduction_axes(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    bad, rank = int(error.group("axis")), int(error.group("rank"))
    if rank < 1:
        return None
    chosen = []
    for call, source, axis_node in _reductions(line):
        axes = _written_axes(axis_node)
        if axes is None or not any(a == bad or a + rank == bad for a in axes):
            continue
        held = operand_of(source, line, context)
        if held is not None and held.shape is not None and len(held.shape) != rank:
            continue
        chosen.append((call, source, axis_node, axes))
    if len(chosen) != 1:
        return None
    call, source, axis_node, axes = chosen[0]
    name = line.frame.segment(source) or "the input"
    written = line.frame.segment(axis_node) or ""
    missing = [a for a in axes if not -rank <= a < rank]
    kept = [a for a in axes if -rank <= a < rank]
    numbered = (
        "axis 0 (or -1 counted from the end)"
        if rank == 1
        else f"axes 0 to {rank - 1} (or {-rank} to -1 counted from the end)"
    )
    absent = ", ".join(str(a) for a in missing)
    rule = (
        f"{code(name)} has {rank} ax{'is' if rank == 1 else 'es'}, {numbered}: "
        f"ax{'is' if len(missing) == 1 else 'es'} {absent} in {code(written)} "
        f"do{'es' if len(missing) == 1 else ''} not exist"
    )
    if not kept:
        # One axis past the rank and nothing else written: the refused-argument reading
        # (the argument as written, the range the input's rank gives) says it; this family
        # is for a list whose other axes exist, which it can keep.
        return None
    if len(set(a % rank for a in kept)) != len(kept):
        return Finding(
            rule + f". Name only axes {code(name)} has; if it was meant to have more, the "
            "cause is where it was made.",
            None,
            SECTION,
        )
    remaining = [a % rank for a in kept]
    left = [i for i in range(rank) if i not in remaining]
    replacement = str(kept[0]) if len(kept) == 1 else f"[{', '.join(str(a) for a in kept)}]"
    if left:
        keeps = ", ".join(str(i) for i in left)
        result = f"it keeps ax{'is' if len(left) == 1 else 'es'} {keeps}"
    else:
        result = "it reduces every axis"
    rule += (
        f". Reduced over the axes it has, {code(replacement)}, {result}. If {code(name)} was "
        "meant to have the missing axis, fix the statement that made it instead"
    )
    statement = line.statement
    fixed = rewrite(line.frame, statement, axis_node, replacement) if statement else None
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None, SECTION)
    return Finding(rule + ".", code(fixed), SECTION)


REDUCTION_AXES = ErrorFamily(
    "a reduction over an axis its input does not have",
    messages=(Message(_TF_AXIS), Message(_NUMPY_AXIS)),
    read=_read_reduction_axes,
    section=SECTION,
    # NumPy's AxisError never passes through TensorFlow.
    without_library=True,
)
