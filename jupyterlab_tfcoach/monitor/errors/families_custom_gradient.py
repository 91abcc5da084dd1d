"""A ``@tf.custom_gradient`` function that does not return its (result, gradient
function) pair: one family (issue "explain code it has never seen").

TensorFlow unpacks what the decorated function returns into the forward result and the
function that computes the gradient. A function that returns the result alone (``return
tf.round(x)``) has its result unpacked instead, and the message depends on that result's
shape: "too many values to unpack (expected 2)" for a vector of three values,
"unsupported callable" for one of two (the second value is taken for the gradient
function), "Cannot iterate over a scalar tensor", or, inside a ``tf.function``,
"Iterating over a symbolic `tf.Tensor`". None of them names the decorator, so the family
is recognised by its reading alone: a call on the failing statement whose callee is a
function TensorFlow's ``custom_gradient`` wrapped (its ``Bind`` object, read from its
``__dict__``), whose own ``return`` statements (read with ``ast`` from its source, never
run) do not return two values, or return the gradient function first.

The gradient function is the function defined in its body (the one not returned, when it
returns one; named ``grad...`` when several are): the fix returns the pair,
``return tf.round(x), grad`` (swapped: the two in their order).
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import ErrorFamily, Finding, Recognised
from jupyterlab_tfcoach.monitor.stored_state import stored
from jupyterlab_tfcoach.monitor.training.user_code import method_source

SECTION = "gradient-tape"
_BIND_MODULE = "tensorflow.python.ops.custom_gradient"
_MAX_CALLS = 12
_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def _wrapped_function(callee: Any) -> Any | None:
    """The user's function under ``@tf.custom_gradient`` (TensorFlow's ``Bind`` keeps it as
    ``_f``), else None."""
    cls = type(callee)
    if cls.__name__ != "Bind" or cls.__module__ != _BIND_MODULE:
        return None
    function = stored(callee, "_f")
    return function if getattr(function, "__code__", None) is not None else None


def _own_returns(definition: _FunctionNode) -> list[ast.Return]:
    """The ``return`` statements of ``definition`` itself (not of functions inside it)."""
    found: list[ast.Return] = []
    pending: list[ast.AST] = list(definition.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return):
            found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda node: node.lineno)


def _inner_functions(definition: _FunctionNode) -> list[str]:
    return [
        node.name
        for node in definition.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def _gradient_name(inner: list[str]) -> str | None:
    if len(inner) == 1:
        return inner[0]
    named = [name for name in inner if name.lower().startswith("grad")]
    return named[-1] if len(named) == 1 else None


class _Reading:
    """What the decorated function's ``return`` does wrong, and the ``return`` to write."""

    def __init__(self, name: str, source: str, returned: ast.Return, fix: str | None) -> None:
        self.name = name
        self.written = (ast.get_source_segment(source, returned) or "").strip()
        self.swapped = False
        self.fix = fix


def _read_function(function: Any) -> _Reading | None:
    method = method_source(function)
    if method is None:
        return None
    definition = next(
        (n for n in method.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
        None,
    )
    if definition is None:
        return None
    inner = _inner_functions(definition)
    source = method.source
    for returned in _own_returns(definition):
        value = returned.value
        if isinstance(value, ast.Tuple) and len(value.elts) == 2:
            first, second = value.elts
            if (
                isinstance(first, ast.Name)
                and first.id in inner
                and not (isinstance(second, ast.Name) and second.id in inner)
            ):
                result = ast.get_source_segment(source, second)
                reading = _Reading(
                    definition.name, source, returned, f"return {result}, {first.id}"
                )
                reading.swapped = True
                return reading
            continue
        if (
            value is None
            or isinstance(value, ast.Tuple)
            or "\n" in (ast.get_source_segment(source, value) or "\n")
        ):
            gradient = None
        else:
            gradient = _gradient_name(inner)
        result = ast.get_source_segment(source, value) if value is not None else None
        fix = f"return {result}, {gradient}" if gradient and result else None
        return _Reading(definition.name, source, returned, fix)
    return None


def _decorated_calls(line: FailingLine, context: ErrorContext) -> list[Any]:
    """The user's functions under ``@tf.custom_gradient`` that the failing statement calls."""
    functions: list[Any] = []
    calls = [
        node
        for part in line.frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
    ]
    for call in calls[:_MAX_CALLS]:
        found, callee = value_of(call.func, line.frame, context)
        function = _wrapped_function(callee) if found else None
        if function is not None and all(function is not f for f in functions):
            functions.append(function)
    return functions


def _read_custom_gradient(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    for function in _decorated_calls(line, context):
        reading = _read_function(function)
        if reading is None:
            continue
        name = reading.name
        if reading.swapped:
            said = (
                f"returns the gradient function first ({code(reading.written)}), and "
                "TensorFlow takes the first value for the result"
            )
        else:
            said = (
                f"returns one value ({code(reading.written)}), so TensorFlow unpacked that "
                "result itself as the pair, and failed"
            )
        rule = (
            f"{code(name)} is decorated with `@tf.custom_gradient`, which needs it to return "
            "a pair: the forward result, then the function that turns the upstream gradient "
            f"into the gradient of its inputs. {code(name)} {said}"
        )
        if reading.fix is None:
            return Finding(
                rule + ". Define the gradient function inside it and return both, the result "
                "first.",
                None,
            )
        return Finding(rule + ".", f"in {code(name)}, {code(reading.fix)}")
    return None


CUSTOM_GRADIENT_RETURN = ErrorFamily(
    "a @tf.custom_gradient function that does not return (result, gradient function)",
    messages=(),
    read=_read_custom_gradient,
    section=SECTION,
)
