"""A Keras layer or model called with its inputs as several positional arguments:
``model(a, b)`` where ``call`` takes one ``inputs`` argument.

Keras's ``__call__`` hands the second positional value to ``call``'s second parameter
(``training`` for every built-in layer and model) and then fills ``training`` itself, so
Python raises ``Sequential.call() got multiple values for argument 'training'``: a
message about an argument the learner never wrote. The reading finds the call on the
learner's line whose callee is a layer or model given more than one positional value,
reads ``call``'s own parameters from its signature, and says where each value went. The
fix is read from the values: a model declared with as many inputs as values given takes
them as one list (``model([a, b])``); values of one shape after the batch axis and one
dtype, meant as more rows, are joined along the batch axis (``tf.concat``); otherwise the
entry says to call it once per value.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    describe,
    model_input_shapes,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    tf_alias,
)

_KERAS_SECTION = "keras-model-api"
_MULTIPLE = re.compile(
    r"^(?P<cls>\w+)\.call\(\) got multiple values for argument '(?P<argument>\w+)'"
)


def _call_parameters(value: object) -> list[str] | None:
    """The names of ``call``'s parameters after ``self``, read from the class's signature
    (static: no user code runs)."""
    try:
        method = type(value).call  # type: ignore[attr-defined]
        parameters = list(inspect.signature(method).parameters.values())
    except Exception:
        return None
    names = [
        parameter.name
        for parameter in parameters[1:]
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
    ]
    return names or None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        if any(isinstance(argument, ast.Starred) for argument in node.args):
            continue
        callee = line.frame.segment(node.func)
        try:
            found, value = value_of(node.func, line.frame, context)
        except Exception:
            continue
        kind = value_kind(value) if found else None
        if not callee or kind not in ("layer", "model"):
            continue
        parameters = _call_parameters(value)
        if parameters is None or len(parameters) < 2:
            continue
        return _finding(node, callee, value, kind, parameters, error, line, context)
    return None


def _finding(
    node: ast.Call,
    callee: str,
    value: object,
    kind: str,
    parameters: list[str],
    error: Recognised,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    written = [line.frame.segment(argument) or "" for argument in node.args]
    if not all(written) or any("\n" in text for text in written):
        return None
    held = describe(callee, value)
    described = [operand_of(argument, line, context) for argument in node.args]
    # ``pool[:5]``: rows taken from a held value keep its other axes and its dtype.
    tails = [
        (item.shape[1:], item.dtype) if item is not None and item.shape else None
        for item in described
    ]
    for index, argument in enumerate(node.args):
        if tails[index] is None and isinstance(argument, ast.Subscript):
            if isinstance(argument.slice, ast.Slice):
                base = operand_of(argument.value, line, context)
                if base is not None and base.shape:
                    tails[index] = (base.shape[1:], base.dtype)
    landed = ", ".join(
        f"{code(text)} into `{name}`"
        for text, name in zip(written[1:], parameters[1:], strict=False)
    )
    signature = ", ".join(parameters)
    rule = (
        f"{held.sentence() if held else code(callee)}. Calling a Keras {kind} runs its "
        f"`call({signature}, ...)`, which takes every input in its first argument, "
        f"`{parameters[0]}`: {code(written[0])} went there and the other positional values "
        f"went on to the next parameters ({landed}), and Keras fills "
        f"`{error.group('argument')}` itself, hence the clash."
    )
    if any(item is not None for item in described):
        rule += " " + "; ".join(item.sentence() for item in described if item is not None) + "."
    statement = line.statement
    joined = ", ".join(written)
    inputs = model_input_shapes(value) if kind == "model" else None
    replacement: str | None = None
    if inputs and len(inputs) == len(written):
        rule += (
            f" {code(callee)} was built with {len(inputs)} inputs: give them together, as "
            "one list in the order the inputs were declared"
        )
        replacement = f"{callee}([{joined}])"
    elif all(tails) and len(set(tails)) == 1:
        tf = tf_alias(context)
        imported = sys.modules.get("tensorflow")
        if imported is not None and context.namespace.get(tf) is imported:
            rule += (
                " The values have the same shape after the batch axis: to run "
                f"{code(callee)} on all their rows at once, join them along that axis (or "
                "call it once per value)"
            )
            replacement = f"{callee}({tf}.concat([{joined}], axis=0))"
    if replacement is None:
        rule += f" Call {code(callee)} once per value: " + ", ".join(
            code(f"{callee}({text})") for text in written
        )
        return Finding(rule + ".", None, section=_KERAS_SECTION)
    fixed = rewrite(line.frame, statement, node, replacement) if statement else None
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None, section=_KERAS_SECTION)
    return Finding(rule + ".", code(fixed), section=_KERAS_SECTION)


POSITIONAL_INPUTS = ErrorFamily(
    "a Keras layer or model given its inputs as several positional arguments",
    messages=(Message(_MULTIPLE),),
    exception_type="TypeError",
    read=_read,
    section=_KERAS_SECTION,
)
