"""NumPy's random draws inside a traced function: one family (issue #25).

A function given to ``Dataset.map``, or decorated with ``tf.function``, is traced into a
graph once, with symbolic tensors: ``x.shape`` may hold None (the batch size after
``batch``), and NumPy cannot draw an array of an unknown size, so
``np.random.normal(0.0, 0.05, size=x.shape)`` raises while the function is traced (a
TypeError about None, whose message says nothing of tracing). Even a draw that ran would be
frozen into the graph: the same noise for every batch. A teacher names the draw and
TensorFlow's random op, which runs at every call and takes the dynamic shape
``tf.shape(x)``.

Recognised by reading, for an error raised inside a traced function (``in user code``):
the failing call is ``np.random.normal`` or ``np.random.uniform`` (the function of
``numpy.random``, through the learner's alias of NumPy). The draw is written with
``tf.random.normal(tf.shape(x), loc, scale)`` / ``tf.random.uniform(tf.shape(x), low,
high)`` when its ``size`` is ``x.shape``, else with the size as written; the fix is the
learner's statement with the draw replaced when the statement is one line, else the
two calls in the rule (the statement cannot be shown whole).
"""

from __future__ import annotations

import ast
import sys
import types

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    operand_of,
    tf_alias,
)

SECTION = "numpy-in-graphs"
# NumPy's parameters of each draw, in order, with TensorFlow's op and its defaults.
_DRAWS: dict[str, tuple[tuple[str, str, str], str, tuple[str, str]]] = {
    "normal": (("loc", "scale", "size"), "normal", ("0.0", "1.0")),
    "uniform": (("low", "high", "size"), "uniform", ("0.0", "1.0")),
}


def _numpy_random(node: ast.expr, line: FailingLine, context: ErrorContext) -> bool:
    """Whether ``node`` is NumPy's ``random`` module (``np.random``, or ``random`` imported
    from NumPy); NumPy loads it lazily, so it is read from the name the learner wrote."""
    numpy = sys.modules.get("numpy")
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "random"
        and isinstance(node.value, ast.Name)
    ):
        found, module = context.lookup(node.value.id, line.frame)
        return found and numpy is not None and module is numpy
    if isinstance(node, ast.Name):
        found, module = context.lookup(node.id, line.frame)
        return (
            found
            and type(module) is types.ModuleType
            and getattr(module, "__name__", None) == "numpy.random"
        )
    return False


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if not error.parsed.inside_tf_function:
        return None
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _DRAWS
        and _numpy_random(call.func.value, line, context)
        and not any(isinstance(a, ast.Starred) for a in call.args)
        and all(k.arg is not None for k in call.keywords)
    ):
        return None
    parameters, op, defaults = _DRAWS[call.func.attr]
    given: dict[str, ast.expr] = dict(zip(parameters, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg not in parameters or keyword.arg in given:
            return None
        given[keyword.arg] = keyword.value  # type: ignore[index]
    size = given.get("size")
    if size is None:
        return None
    tf = tf_alias(context)
    if isinstance(size, ast.Attribute) and size.attr == "shape":
        tensor = line.frame.segment(size.value)
        shape = f"{tf}.shape({tensor})" if tensor else None
        described = operand_of(size.value, line, context)
    else:
        shape, described = line.frame.segment(size), None
    first = given.get(parameters[0])
    second = given.get(parameters[1])
    low = line.frame.segment(first) if first is not None else defaults[0]
    high = line.frame.segment(second) if second is not None else defaults[1]
    written = line.frame.segment(call)
    if not shape or not low or not high or not written or "\n" in written:
        return None
    dtype = (
        f", dtype={line.frame.segment(size.value)}.dtype"  # type: ignore[union-attr]
        if described is not None and described.dtype not in (None, "float32")
        else ""
    )
    draw = f"{tf}.random.{op}({shape}, {low}, {high}{dtype})"
    rule = (
        f"{code(written)} is NumPy's draw, and this line runs while a function is traced "
        "into a graph (a function given to `Dataset.map`, or a tf.function): its tensors are "
        "symbolic, their static shape may hold None (the batch size), and NumPy cannot draw "
        "an array of an unknown size. A NumPy draw that did run would be frozen into the "
        "graph, the same numbers at every call. TensorFlow's random ops draw at every call "
        f"and take the shape the tensor has then ({code(f'{tf}.shape(...)')})"
    )
    statement = line.statement
    fixed = rewrite(line.frame, statement, call, draw) if statement is not None else None
    if fixed and "\n" not in fixed:
        return Finding(rule + ".", code(fixed))
    return Finding(rule + f": write {code(draw)} in place of {code(written)}.", None)


NUMPY_RANDOM_TRACED = ErrorFamily(
    "NumPy's random draws inside a traced function",
    messages=(),
    read=_read,
    section=SECTION,
)
