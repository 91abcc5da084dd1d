"""A string given by position where the library function's parameter at that place is a
size or a shape, or where the function takes nothing but ``*args`` before its keywords
(``self.add_weight("scale", shape=(n,))`` in Keras 3).

Libraries reorder and rename parameters across versions: Keras 3's ``add_weight`` takes
``shape`` first, so a name written first (as tf.keras 2 took it) lands in ``shape``, and
the message (a type error deep in the library, or Keras's own wording) does not say where
each value went. The reading binds the failing call's positional arguments to the
callee's real signature (``inspect.signature`` of the function the call names, found
without calling anything), and claims the error only when a string written as a literal
lands in a parameter that holds a size, a shape or a count (``shape``, ``units``,
``filters``, ...), where a text never belongs, or in the ``*args`` of a function whose
settings are keyword-only (Keras 3's ``add_weight(self, *args, shape=None, ...)``). The
callee must take ``name``; a text in ``*args``, or in ``shape`` when the call also gives
``shape`` by keyword, is then that name (tf.keras 2 took it first), and the fix passes it
by keyword (``name="scale"``), the rest of the call kept; otherwise (``Dense("relu")``,
``tf.zeros("3")``) what the text meant is not known: no fix.
"""

from __future__ import annotations

import ast
import inspect
import types
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.families_arguments import library_callable
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    raised_through_library,
    segment_of,
)

# Parameters that hold a size, a shape or a count: never a text.
_SIZED = frozenset(
    {
        "shape",
        "units",
        "filters",
        "size",
        "kernel_size",
        "pool_size",
        "input_dim",
        "output_dim",
        "num_classes",
        "depth",
        "rank",
    }
)
_MAX_FIX = 200
# Where tf.keras 2 took the name first and Keras 3 takes a shape: the text is a name when
# the call gives the shape by keyword as well (``tf.zeros("3")`` meant a size).
_NAME_PLACES = ("shape",)
_LIBRARIES = ("keras.", "tensorflow.", "tf_keras.")


def _library_method(
    func: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[Any, bool] | None:
    """``self.add_weight`` in a layer of the learner's class: the method its class
    inherits from TensorFlow or Keras (read statically on the class), bound."""
    if not isinstance(func, ast.Attribute):
        return None
    found, owner = value_of(func.value, line.frame, context)
    if not found:
        return None
    try:
        method = inspect.getattr_static(type(owner), func.attr)
    except AttributeError:
        return None
    module = getattr(method, "__module__", "")
    if not isinstance(method, types.FunctionType) or type(module) is not str:
        return None
    return (method, True) if module.startswith(_LIBRARIES) else None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or not call.args:
        return None
    if not raised_through_library(context, error.parsed):
        return None
    if any(isinstance(argument, ast.Starred) for argument in call.args):
        return None
    found = library_callable(call.func, line.frame, context) or _library_method(
        call.func, line, context
    )
    if found is None:
        return None
    callee, bound = found
    try:
        parameters = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return None
    if bound and parameters:
        parameters = parameters[1:]
    positional = [
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    takes_name = any(
        p.name == "name"
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        for p in parameters
    )
    if not takes_name or any(keyword.arg == "name" for keyword in call.keywords):
        return None
    rest = next((p.name for p in parameters if p.kind == inspect.Parameter.VAR_POSITIONAL), None)
    landed = [
        (argument, positional[index] if index < len(positional) else f"*{rest}")
        for index, argument in enumerate(call.args)
        if isinstance(argument, ast.Constant)
        and type(argument.value) is str
        and (
            (index < len(positional) and positional[index] in _SIZED)
            or (index >= len(positional) and rest is not None)
        )
    ]
    if len(landed) != 1:
        return None
    argument, parameter = landed[0]
    if call.args.index(argument) != len(call.args) - 1:
        return None  # later positional values would shift: no one keyword fixes it
    written, function = segment_of(line, argument), segment_of(line, call.func)
    whole = segment_of(line, call)
    if not (written and function and whole):
        return None
    place = call.args.index(argument) + 1
    also = (
        f", and the call gives {code(parameter)} by keyword too"
        if any(keyword.arg == parameter for keyword in call.keywords)
        else ""
    )
    ordinal = {1: "first", 2: "second", 3: "third"}.get(place, f"number {place}")
    if parameter.startswith("*"):
        keywords = [p.name for p in parameters if p.kind == inspect.Parameter.KEYWORD_ONLY]
        shown = ", ".join(keywords[:3]) + (", ..." if len(keywords) > 3 else "")
        rule = (
            f"{code(function)} takes its settings by keyword only (its signature: "
            f"{parameter}, then {shown}, name): the text {code(written)}, given by "
            f"position, lands in {code(parameter)}, not in {code('name')} as it did in "
            f"older versions"
        )
    else:
        signature = ", ".join(positional[:4]) + (", ..." if len(positional) > 4 else "")
        rule = (
            f"{code(function)} takes {code(parameter)} as its {ordinal} positional "
            f"parameter (its signature: {signature}), so the text {code(written)} lands in "
            f"{code(parameter)}, which holds a size or a shape{also}"
        )
    given_by_keyword = any(keyword.arg == parameter for keyword in call.keywords)
    if not parameter.startswith("*") and not (parameter in _NAME_PLACES and given_by_keyword):
        # ``Dense("relu")``, ``tf.zeros("3")``: the text may be an activation, a size
        # written as text, a name: which it meant is the learner's to say.
        return Finding(rule + ": pass the text by keyword, to the parameter it is for.", None)
    rule += f". A name goes in {code('name')}, given by keyword"
    parts = [segment_of(line, other) for other in call.args if other is not argument]
    parts += [segment_of(line, keyword) for keyword in call.keywords]
    if any(not part for part in parts):
        return Finding(rule + ".", None)
    parts.append(f"name={written}")
    fixed_call = f"{function}({', '.join(parts)})"
    statement = line.frame.statement()
    fixed = None
    if statement is not None and not hasattr(statement, "body"):
        fixed = rewrite(line.frame, statement, call, fixed_call)
    if not fixed or "\n" in fixed or len(fixed) > _MAX_FIX:
        fixed = fixed_call if "\n" not in fixed_call else None
    return Finding(rule + ".", code(fixed) if fixed else None)


KEYWORD_BINDING = ErrorFamily(
    "a text given by position where a size or shape parameter is",
    messages=(),
    read=_read,
    section="keras-model-api",
)
