"""A vector norm asked of ``tf.norm`` over more (or fewer) axes than it takes: one family.

``tf.norm(x, ord=np.inf, axis=(1, 2, 3))`` for one norm per image: ``tf.norm`` takes one
axis (a vector norm) or a pair of axes (a matrix norm, where ``ord=np.inf`` means the
largest row sum, not the largest entry), and refuses three with a ValueError that says
only what ``axis`` may be. What the learner wants, the norm of each example's values taken
together, is a reduction over those axes, which TensorFlow writes directly:

- ``ord=np.inf``: ``tf.reduce_max(tf.abs(x), axis=...)``;
- ``ord=1``: ``tf.reduce_sum(tf.abs(x), axis=...)``;
- ``ord=2``, ``"euclidean"``, ``"fro"`` or no ``ord``: ``tf.math.reduce_euclidean_norm(x,
  axis=...)``;
- another number p: ``tf.reduce_sum(tf.abs(x) ** p, axis=...) ** (1 / p)``.

Read from the failing line: a call of TensorFlow's own ``norm`` (``tf.norm``,
``tf.linalg.norm``, found through the modules, never called), its ``axis`` written as a
tuple or list of integer constants whose count is not 2, its ``ord`` a constant, ``np.inf``
(or ``math.inf``, ``float("inf")``) or absent. The fix is the statement with the call
rewritten, the learner's tensor and axes kept, ``keepdims`` passed on.
"""

from __future__ import annotations

import ast
import math
from types import FunctionType, ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    tf_alias,
)

SECTION = "shape-dtype-device"
_EUCLIDEAN = ("euclidean", "fro", 2)


def _norm_calls(line: FailingLine, context: ErrorContext) -> list[ast.Call]:
    """The calls of TensorFlow's ``norm`` on the failing line."""
    found = []
    for part in line.frame.header():
        for node in ast.walk(part):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "norm"
            ):
                continue
            function = through_modules(node.func, line, context)
            module = vars(type(function)).get("__module__") if function is not None else None
            if type(function) is FunctionType:
                module = function.__module__
            if type(module) is str and module.startswith("tensorflow"):
                found.append(node)
    return found


def through_modules(node: ast.expr, line: FailingLine, context: ErrorContext) -> Any:
    """What ``tf.linalg.norm`` names, read through the modules' own dicts (nothing is
    imported, no attribute hook runs); None when a step is not a module."""
    if isinstance(node, ast.Name):
        known, value = context.lookup(node.id, line.frame)
        return value if known else None
    if isinstance(node, ast.Attribute):
        owner = through_modules(node.value, line, context)
        if isinstance(owner, ModuleType):
            return vars(owner).get(node.attr)
    return None


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    return call.args[position] if len(call.args) > position else None


def _axes(node: ast.expr | None) -> list[int] | None:
    """The axes written as a tuple or list of int constants (``-1`` too)."""
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    axes = []
    for element in node.elts:
        try:
            value = ast.literal_eval(element)
        except (ValueError, SyntaxError, TypeError):
            return None
        if type(value) is not int:
            return None
        axes.append(value)
    return axes


def _order(node: ast.expr | None, line: FailingLine, context: ErrorContext) -> Any:
    """The ``ord`` asked: None for the default, a number, ``math.inf``, or a string."""
    if node is None:
        return "euclidean"
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, str):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return None  # -inf and negative orders: not a norm to rewrite
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and str(node.args[0].value).lower() in ("inf", "infinity")
    ):
        return math.inf
    value = through_modules(node, line, context)
    if type(value) is float and value == math.inf:
        return math.inf
    return None


def _reduction(tf: str, x: str, order: Any, axes: str, keep: str) -> str | None:
    if order == math.inf:
        return f"{tf}.reduce_max({tf}.abs({x}), axis={axes}{keep})"
    if order in _EUCLIDEAN and type(order) is not float:
        return f"{tf}.math.reduce_euclidean_norm({x}, axis={axes}{keep})"
    if order == 1 and type(order) is int:
        return f"{tf}.reduce_sum({tf}.abs({x}), axis={axes}{keep})"
    if type(order) in (int, float) and order > 0 and order != math.inf:
        return f"{tf}.reduce_sum({tf}.abs({x}) ** {order}, axis={axes}{keep}) ** (1 / {order})"
    return None


def _read_norm_axes(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    calls = _norm_calls(line, context)
    if len(calls) != 1:
        return None
    call = calls[0]
    tensor = _argument(call, 0, "tensor")
    axis = _argument(call, 2, "axis")
    axes = _axes(axis)
    if tensor is None or axis is None or axes is None or len(axes) == 2 or not axes:
        return None
    order = _order(_argument(call, 1, "ord"), line, context)
    x = line.frame.segment(tensor)
    written_axes = line.frame.segment(axis)
    callee = line.frame.segment(call.func)
    if order is None or not x or not written_axes or not callee or "\n" in x + written_axes:
        return None
    keep_node = _argument(call, 3, "keepdims")
    keep_text = line.frame.segment(keep_node) if keep_node is not None else None
    keep = f", keepdims={keep_text}" if keep_text else ""
    found, value = value_of(tensor, line.frame, context)
    described = describe(x, value) if found else None
    rank = len(described.shape) if described is not None and described.shape else None
    if rank is not None and any(not -rank <= a < rank for a in axes):
        return None  # an axis out of range: the generic reading says that
    rule = (
        f"{code(callee)} takes one axis (a vector norm) or a pair of axes (a matrix norm), "
        f"not {len(axes)}: {code(written_axes)} asks for one norm of all the values over "
        f"those axes together, which is a reduction over them"
    )
    reduction = _reduction(tf_alias(context), x, order, written_axes, keep)
    if reduction is None:
        return Finding(rule + ".", None, section=SECTION)
    if order == math.inf:
        rule += " (the infinity norm is the largest absolute value)"
    statement = line.statement
    fixed = rewrite(line.frame, statement, call, reduction) if statement is not None else None
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section=SECTION)


NORM_AXES = ErrorFamily(
    "a norm over more axes than tf.norm takes",
    messages=(),
    read=_read_norm_axes,
    section=SECTION,
    exception_type="ValueError",
)
