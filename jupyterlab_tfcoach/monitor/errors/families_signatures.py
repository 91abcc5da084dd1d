"""Error families from calling a function whose inputs were fixed when it was traced
(see ``family_record.py`` for a family's shape): a ``tf.function`` with an
``input_signature``, a loaded SavedModel's functions and its ``signatures``, a
``keras.layers.TFSMLayer``, a ``get_concrete_function`` result.

- a tensor of another dtype given to a concrete function (a SavedModel signature,
  ``get_concrete_function``): TensorFlow runs the traced graph and reports the graph
  function's input (``cannot compute __inference_... as input #0 ... expected to be a
  float tensor but is a double tensor``); the dtype explainer leaves these to this family;
- a SavedModel signature called with positional arguments: signatures take keyword
  arguments only, named by the signature (``structured_input_signature``);
- a signature called with a keyword it does not have (a Keras export names its input
  ``keras_tensor``), or a restored function with positional inputs (``serve``) called
  with a keyword: the names it takes, and the call with the right name or none.

``cast_fix`` is shared with the input_signature family (``families_shapes.SIGNATURE``):
a tensor's dtype is never converted on the way in (NumPy arrays and Python numbers are),
so the fix casts the argument of that dtype, in the learner's names.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

# Eager kernels name float32 "float" and float64 "double".
_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": "float16"}
_TENSOR_KINDS = ("tensor", "variable")


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(item.value for item in call.keywords if item.arg)]


def cast_fix(
    line: FailingLine,
    context: ErrorContext,
    given: str,
    wanted: str,
    shape: tuple[int | None, ...] | None = None,
) -> tuple[str, str] | None:
    """(the argument, the failing statement with it cast to ``wanted``) for the one
    tensor argument of the failing call whose dtype is ``given`` (and whose shape is
    ``shape`` when known); None when there is not exactly one."""
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    found = []
    for node in _arguments(call):
        operand = operand_of(node, line, context)
        if operand is None or operand.kind not in _TENSOR_KINDS or operand.dtype != given:
            continue
        if shape is not None and operand.shape is not None and operand.shape != shape:
            continue
        found.append((node, operand.source))
    if len(found) != 1:
        return None
    node, source = found[0]
    tf = tf_alias(context)
    outer = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, outer, node, f"{tf}.cast({source}, {tf}.{wanted})")
    if not fixed or "\n" in fixed:
        return None
    return source, fixed


# ------------------------------------------------------------------ concrete function dtype
_GRAPH_FUNCTION_DTYPE = re.compile(
    r"cannot compute (?P<op>__inference_\w+) as input #(?P<index>\d+)\(zero-based\) was "
    r"expected to be an? (?P<expected>\w+) tensor but is an? (?P<actual>\w+) tensor"
)


def is_graph_function_input(message: str) -> bool:
    """Whether a dtype message is about a traced function's input (this family's), not
    about an op's two operands (the dtype explainer's)."""
    return _GRAPH_FUNCTION_DTYPE.search(message) is not None


def _callee(line: FailingLine) -> str | None:
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    return line.frame.segment(call.func)


def _read_function_dtype(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    expected = _DTYPE_NAMES.get(error.group("expected"), error.group("expected"))
    actual = _DTYPE_NAMES.get(error.group("actual"), error.group("actual"))
    function = _callee(line)
    if not function or "\n" in function:
        return None
    rule = (
        f"`{function}` runs a graph traced once for {expected} inputs (a saved model's "
        f"function or signature, or a concrete function), and its input "
        f"#{error.group('index')} got a {actual} tensor: a traced function never converts "
        "a tensor's dtype (NumPy arrays and Python numbers are converted, tensors are not)"
    )
    fixed = cast_fix(line, context, actual, expected)
    if fixed is None:
        return Finding(rule + f"; cast the {actual} tensor to {expected} first.", None)
    source, statement = fixed
    return Finding(f"{rule}; `{source}` is that {actual} tensor.", code(statement))


FUNCTION_INPUT_DTYPE = ErrorFamily(
    "a tensor of another dtype given to a saved or concrete function",
    messages=(Message(_GRAPH_FUNCTION_DTYPE),),
    read=_read_function_dtype,
    section="input-signature",
)


# ------------------------------------------------------------------ signatures by keyword
_POSITIONAL = re.compile(r"Binding inputs to tf\.function failed due to `too many positional")
_MAX_INPUTS = 20


def _keyword_names(function: Any) -> list[str] | None:
    """The keyword names a signature function takes (a SavedModel's ``signatures``
    entry): its ``structured_input_signature`` has no positional part."""
    signature = library_attribute(function, "structured_input_signature")
    if type(signature) is not tuple or len(signature) != 2:
        return None
    positional, keywords = signature
    if type(positional) is not tuple or positional or type(keywords) is not dict:
        return None
    names = [name for name in list(keywords)[:_MAX_INPUTS] if type(name) is str]
    return names if names and len(names) == len(keywords) else None


def _read_positional(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or not call.args or call.keywords:
        return None
    found, function = value_of(call.func, line.frame, context)
    names = _keyword_names(function) if found else None
    shown = line.frame.segment(call.func)
    if names is None or not shown:
        return None
    listed = ", ".join(f"`{name}`" for name in names)
    rule = (
        f"`{shown}` is a SavedModel signature: it takes keyword arguments only, named by "
        f"the signature ({listed}), and `{line.frame.segment(call)}` passed "
        f"{len(call.args)} positional argument{'s' if len(call.args) > 1 else ''}"
    )
    if len(names) != 1 or len(call.args) != 1:
        return Finding(rule + "; name each input.", None)
    argument = line.frame.segment(call.args[0])
    outer = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, outer, call.args[0], f"{names[0]}={argument}")
    if not argument or not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


_KEYWORD = re.compile(
    r"Binding inputs to tf\.function failed due to `(?:missing a required argument: "
    r"'(?P<missing>\w+)'|got an unexpected keyword argument '(?P<unexpected>\w+)')`"
)


def _positional_count(function: Any) -> int | None:
    """How many inputs a restored function takes positionally (a loaded SavedModel's
    ``serve`` or other tf.function attribute: its ``input_signature``), or None."""
    signature = library_attribute(function, "input_signature")
    if type(signature) is not tuple or not signature or len(signature) > _MAX_INPUTS:
        return None
    return len(signature)


def _read_keywords(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    """A signature called with a keyword it does not have, or without one it needs; a
    restored function with positional inputs called with keywords."""
    call = line.call
    if not isinstance(call, ast.Call) or not call.keywords or call.args:
        return None
    if any(item.arg is None for item in call.keywords):
        return None
    found, function = value_of(call.func, line.frame, context)
    shown = line.frame.segment(call.func)
    if not found or not shown or "\n" in shown:
        return None
    given = [item.arg for item in call.keywords]
    names = _keyword_names(function)
    if names is not None:
        wrong = [name for name in given if name not in names]
        unused = [name for name in names if name not in given]
        if not wrong:
            return None
        listed = ", ".join(f"`{name}`" for name in names)
        rule = (
            f"`{shown}` is a SavedModel signature: it takes keyword arguments named by the "
            f"signature's inputs ({listed}, its `structured_input_signature`"
            f"{keras_export_name(names)}), and "
            f"{' and '.join(f'`{name}`' for name in wrong)} "
            f"{'are' if len(wrong) > 1 else 'is'} not one of them"
        )
        if len(wrong) != 1 or len(unused) != 1:
            return Finding(rule + ".", None)
        keyword = next(item for item in call.keywords if item.arg == wrong[0])
        value = line.frame.segment(keyword.value)
        outer = line.statement if line.statement is not None else call
        fixed = rewrite(line.frame, outer, keyword, f"{unused[0]}={value}") if value else None
        if not fixed or "\n" in fixed:
            return Finding(rule + ".", None)
        return Finding(rule + ".", code(fixed))
    if type(function).__name__ != "RestoredFunction":  # a learner's own tf.function
        return None
    count = _positional_count(function)
    if count is None or error.group("missing") is None:
        return None
    rule = (
        f"`{shown}` is a function restored from a SavedModel whose inputs are positional "
        f"({count} in its `input_signature`; the loader names them `args_0`, ...): it takes "
        "no keyword arguments"
    )
    if count != 1 or len(call.keywords) != 1:
        return Finding(rule + "; pass the inputs in order, without names.", None)
    value = line.frame.segment(call.keywords[0].value)
    outer = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, outer, call.keywords[0], value) if value else None
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


SIGNATURE_KEYWORDS = ErrorFamily(
    "a SavedModel signature called with positional arguments",
    messages=(Message(_POSITIONAL),),
    exception_type="TypeError",
    read=_read_positional,
    section="input-signature",
)

SIGNATURE_NAMES = ErrorFamily(
    "a SavedModel signature or restored function called with names it does not take",
    messages=(Message(_KEYWORD),),
    exception_type="TypeError",
    read=_read_keywords,
    section="input-signature",
)


def keras_export_name(names: list[str]) -> str:
    """Where the odd name comes from, when it is the one Keras's export gives."""
    if "keras_tensor" not in names:
        return ""
    return "; Keras names an exported input so, whatever its Input was called"
