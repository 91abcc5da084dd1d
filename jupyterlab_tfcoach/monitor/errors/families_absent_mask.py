"""A layer's ``call`` that reads its ``mask`` when it was called on a plain array or tensor
(issue #25): ``ops.cast(mask, x.dtype)`` raises ``Attempt to convert a value (None)``.

Keras passes ``call`` a mask only when the input carries one (it came out of a layer that
makes masks: ``Embedding(mask_zero=True)``, ``Masking``) or when the caller passes
``mask=`` itself. A NumPy array, or a tensor TensorFlow made, carries none, so ``mask`` is
None. The message names only the conversion of None; the reading claims it when the failing
line is in a ``call`` of the learner's layer, that ``call``'s parameter ``mask`` (the name
Keras fills) is on the line and holds None, and the running cell called the layer without
``mask=``. The entry says where masks come from and gives both remedies: pass a mask in the
cell's call (all steps kept, shaped as the input without its feature axis), or let ``call``
handle None.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, _shape, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import stored

_NONE_CONVERTED = re.compile(
    r"Attempt to convert a value \(None\) with an unsupported type \(<class 'NoneType'>\)"
)
_MAX_FIX = 200
_type_name = type.__dict__["__name__"].__get__


def _call_method(line: FailingLine) -> ast.FunctionDef | None:
    """The ``def call`` of a class whose body holds the failing line."""
    tree = line.frame.tree()
    if tree is None:
        return None
    row = line.frame.position.line
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef)
            and node.name == "call"
            and node.lineno <= row <= (node.end_lineno or node.lineno)
        ):
            return node
    return None


def _mask_parameter(method: ast.FunctionDef, line: FailingLine) -> str | None:
    """The ``call`` parameter ``mask`` (the one name Keras fills), read on the failing line."""
    parameters = [argument.arg for argument in (*method.args.args, *method.args.kwonlyargs)]
    masks = [name for name in parameters if name == "mask"]
    used = {
        node.id
        for part in line.frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Name)
    }
    found = [name for name in masks if name in used]
    return found[0] if len(found) == 1 else None


def _layer_call(layer: Any, context: ErrorContext) -> tuple[ast.Call, ast.expr, Any] | None:
    """The running cell's call of ``layer`` (by name, or ``Class(...)(x)``): the call, its
    first argument, and the frame."""
    frames = context.frames()
    if not frames:
        return None
    frame = frames[-1]
    cls_name = _type_name(type(layer))
    for part in frame.header():
        for node in ast.walk(part):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            callee = node.func
            if isinstance(callee, ast.Call) and isinstance(callee.func, ast.Name):
                matches = callee.func.id == cls_name
            else:
                found, value = value_of(callee, frame, context)
                matches = found and value is layer
            if matches:
                return node, node.args[0], frame
    return None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    method = _call_method(line)
    if method is None:
        return None
    parameter = _mask_parameter(method, line)
    if parameter is None:
        return None
    found, mask = context.lookup(parameter, line.frame)
    found_self, layer = context.lookup("self", line.frame)
    if not found or mask is not None or not found_self or value_kind(layer) != "layer":
        return None
    called = _layer_call(layer, context)
    if called is None:
        return None
    call, argument, frame = called
    if any(keyword.arg == parameter for keyword in call.keywords):
        return None  # the cell passed None itself
    found_input, given = value_of(argument, frame, context)
    source = frame.segment(argument)
    if not found_input or not source or "\n" in source:
        return None
    kind = value_kind(given)
    if kind == "array":
        what = "a plain NumPy array"
    elif kind in ("tensor", "variable") and stored(given, "_keras_mask") is None:
        what = "a plain tensor"
    else:
        return None
    name = f"{_type_name(type(layer))}.call"
    rule = (
        f"{code(parameter)} is None: {code(name)} reads a mask, but {code(source)} is {what}, "
        "which carries no Keras mask. Keras gives a layer's call a mask only when its input "
        "comes out of a layer that makes one (`Embedding(mask_zero=True)`, `Masking`) or "
        f"when the call passes {code(parameter + '=')} itself"
    )
    shape = _shape(given)
    np = context.module_alias("numpy", "np")
    handle = f"if {parameter} is None:"
    if shape is None or len(shape) < 2:
        return Finding(
            rule + ".", f"begin {code(name)} with {code(handle)} and compute it without a mask"
        )
    steps = f"{source}.shape[:-1]" if len(shape) >= 3 else f"{source}.shape"
    keyword = f"{parameter}={np}.ones({steps}, dtype=bool)"
    text = frame.segment(call) or ""
    fixed = f"{text[:-1]}, {keyword})" if text.endswith(")") and "\n" not in text else None
    if fixed is not None:
        whole = rewrite(frame, frame.statement() or call, call, fixed)
        fixed = whole if whole and "\n" not in whole and len(whole) <= _MAX_FIX else None
    if fixed is None:
        return Finding(
            rule + ".", f"pass {code(keyword)}, or begin {code(name)} with {code(handle)}"
        )
    fix = (
        f"either let {code(name)} work without one (begin it with {code(handle)} and "
        f"compute the plain result there), or pass a mask that keeps every step: "
        f"{code(fixed)}"
    )
    return Finding(rule + ".", fix)


ABSENT_MASK = ErrorFamily(
    "a layer's call reading a mask its plain input does not carry",
    messages=(Message(_NONE_CONVERTED),),
    read=_read,
    section="functional-api",
    exception_type="ValueError",
)
