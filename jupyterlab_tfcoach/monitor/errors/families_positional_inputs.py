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


# ------------------------------------------------------------------ a number by position
_NUMBER_BY_POSITION = re.compile(
    r"Only input tensors may be passed as positional arguments\. The following argument "
    r"value should be passed as a keyword argument: (?P<value>-?[\d.e+-]+) "
    r"\(of type <class '(?P<type>int|float)'>\)"
)
_MAX_FUNCTIONS = 50
_type_name = type.__dict__["__name__"].__get__


def _function_defs(context: ErrorContext) -> dict[str, ast.FunctionDef]:
    """The cells' top-level functions and methods by name (newest cell first wins)."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import nodes_in_cells

    found: dict[str, ast.FunctionDef] = {}
    for _cell, node in nodes_in_cells(context):
        if isinstance(node, ast.FunctionDef) and node.name not in found:
            found[node.name] = node
            if len(found) >= _MAX_FUNCTIONS:
                break
    return found


def _class_call(class_name: str, context: ErrorContext) -> ast.FunctionDef | None:
    from jupyterlab_tfcoach.monitor.errors.cell_sources import nodes_in_cells

    for _cell, node in nodes_in_cells(context):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "call":
                    return item
            return None
    return None


def _sliced(body: ast.AST, name: str) -> bool:
    """Whether ``name`` is indexed in ``body`` (``t[:, None]``, ``tf.cast(t)[:, 0]``)."""
    for node in ast.walk(body):
        if isinstance(node, ast.Subscript) and any(
            isinstance(inner, ast.Name) and inner.id == name for inner in ast.walk(node.value)
        ):
            return True
    return False


def _used_per_example(method: ast.FunctionDef, name: str, context: ErrorContext) -> bool:
    """Whether ``call`` indexes ``name`` along an axis, itself or in a function of the
    cells it hands ``name`` to (one level deep): then it needs a tensor, one value per
    example, not a number."""
    if _sliced(method, name):
        return True
    functions = _function_defs(context)
    for node in ast.walk(method):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        helper = functions.get(node.func.id)
        if helper is None:
            continue
        for index, argument in enumerate(node.args):
            if (
                isinstance(argument, ast.Name)
                and argument.id == name
                and index < len(helper.args.args)
                and _sliced(helper, helper.args.args[index].arg)
            ):
                return True
    return False


def _batch_size(node: ast.expr, line: FailingLine, context: ErrorContext) -> str | None:
    """How many examples the first input holds: an int when its shape is known (a name,
    or a name sliced ``[:n]``), else ``tf.shape(<input>)[0]``."""
    sliced_to = None
    base = node
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.step is None
        and isinstance(node.slice.upper, ast.Constant)
        and type(node.slice.upper.value) is int
        and node.slice.upper.value >= 0
    ):
        sliced_to, base = node.slice.upper.value, node.value
    found, value = value_of(base, line.frame, context)
    described = describe("input", value) if found else None
    shape = described.shape if described is not None else None
    if shape and shape[0] is not None:
        return str(shape[0] if sliced_to is None else min(sliced_to, shape[0]))
    source = line.frame.segment(node)
    return f"{tf_alias(context)}.shape({source})[0]" if source else None


def _read_number_by_position(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or len(call.args) < 2:
        return None
    callee = operand_of(call.func, line, context)
    if callee is None or callee.kind not in ("layer", "model"):
        return None
    written = error.group("value")
    position = next(
        (
            index
            for index, argument in enumerate(call.args)
            if index > 0
            and isinstance(argument, ast.Constant)
            and type(argument.value) in (int, float)
            and str(argument.value) == written
        ),
        None,
    )
    parameters = _call_parameters(callee.value)
    class_name = _type_name(type(callee.value))
    method = _class_call(class_name, context)
    if position is None or parameters is None or position >= len(parameters) or method is None:
        return None
    parameter = parameters[position]
    number = call.args[position]
    callee_source = line.frame.segment(call.func)
    if not callee_source:
        return None
    keyworded = rewrite(line.frame, call, number, f"{parameter}={written}")
    rule = (
        f"Keras takes only tensors by position: {code(written)} is a Python "
        f"{error.group('type')}, which {code(class_name + '.call')} receives as "
        f"{code(parameter)}"
    )
    if not _used_per_example(method, parameter, context):
        if not keyworded or "\n" in keyworded:
            return Finding(rule + ".", None)
        return Finding(rule + ": pass it by name.", code(keyworded))
    batch = _batch_size(call.args[0], line, context)
    filled = rewrite(line.frame, call, number, f"{tf_alias(context)}.fill([{batch}], {written})")
    rule += (
        f", and {code(class_name + '.call')} indexes {code(parameter)} along an axis (it "
        f"takes one value per example, a (batch,) tensor), so passing "
        f"{code(f'{parameter}={written}')} as the message advises still fails on the number"
    )
    if batch is None or not filled or "\n" in filled:
        return Finding(rule + ".", None)
    return Finding(rule + ".", f"give one value per example: {code(filled)}")


POSITIONAL_NUMBER = ErrorFamily(
    "a number given by position to a Keras model or layer whose call takes a tensor there",
    messages=(Message(_NUMBER_BY_POSITION),),
    exception_type="ValueError",
    read=_read_number_by_position,
    section=_KERAS_SECTION,
)
