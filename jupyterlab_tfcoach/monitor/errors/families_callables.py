"""A function called where TensorFlow or Keras wanted the function itself (issue #25).

``Dataset.from_generator(make_rows(20), ...)``, ``ds.map(normalize(x))``,
``tf.function(step(x))``, ``keras.layers.Lambda(scale(x))``: the learner wrote the
parentheses, so Python called the function at once and passed what it returned (a
generator, a tensor, a number) to an API that calls the function itself, later (each
time the dataset is iterated, once per element, at every call). TensorFlow and Keras
say the argument "must be a callable"; the message does not say why it is not one.

Read from the failing call: its one argument that is itself a call of a Python function
(a ``def`` or a lambda of the learner's), and what that call returned. The fix passes
the function: ``ds.map(normalize)``; for ``from_generator``, whose function takes no
arguments, ``lambda: make_rows(20)``, so each pass over the dataset starts a fresh
generator.
"""

from __future__ import annotations

import ast
import re
from types import FunctionType, ModuleType

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

DATA_SECTION = "tf-data"
KERAS_SECTION = "keras-model-api"
_NOT_CALLABLE = re.compile(
    r"`(?P<generator>generator)` must be a Python callable"
    r"|Argument `(?P<func>\w+)` must be a callable"
    r"|Expected (?P<expected>\w+) to be callable"
    r"|is not a callable object"
    r"|unsupported callable"
)
_type_name = type.__dict__["__name__"].__get__


def _called_arguments(call: ast.Call, line: FailingLine, context: ErrorContext) -> list[ast.Call]:
    """The arguments of ``call`` that are calls of a Python function of the learner's."""
    found: list[ast.Call] = []
    for argument in [*call.args, *(k.value for k in call.keywords)]:
        if not isinstance(argument, ast.Call):
            continue
        known, function = value_of(argument.func, line.frame, context)
        if known and type(function) is FunctionType:
            found.append(argument)
    return found


def _read_called_function(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    called = _called_arguments(call, line, context)
    if len(called) != 1:
        return None
    argument = called[0]
    written = line.frame.segment(argument)
    name = line.frame.segment(argument.func)
    callee = line.frame.segment(call.func) or "the call"
    if not written or not name or "\n" in written:
        return None
    wants_generator = bool(error.match and error.match.groupdict().get("generator"))
    rule = (
        f"{code(written)} calls {code(name)} right here and passes what it returned to "
        f"{code(callee)}, which wants the function itself: "
    )
    if wants_generator:
        rule += (
            "it calls the function each time the dataset is iterated, to get a fresh "
            "generator (a generator object runs out after one pass)"
        )
        replacement = f"lambda: {written}" if argument.args or argument.keywords else name
    else:
        rule += "it calls the function on its own inputs when it runs"
        replacement = name
    statement = line.statement
    fixed = rewrite(line.frame, statement, argument, replacement) if statement else None
    fix = code(fixed) if fixed and "\n" not in fixed else None
    if fix is None:
        # A call written over several lines: the one edit, in words.
        rule += f"; write {code(replacement)} in place of {code(written)}"
    section = _section(call, line, context)
    return Finding(rule + ".", fix, section=section)


def _section(call: ast.Call, line: FailingLine, context: ErrorContext) -> str | None:
    """Datasets link to tf.data, Keras to its model API; anything else (tf.function,
    py_function) to the family's section, tracing."""
    func = call.func
    if "keras" in (line.frame.segment(func) or ""):
        return KERAS_SECTION
    if isinstance(func, ast.Attribute):
        found, owner = value_of(func.value, line.frame, context)
        if found and (value_kind(owner) == "dataset" or owner is _dataset_class(context)):
            return DATA_SECTION
        if isinstance(func.value, ast.Attribute) and func.value.attr == "Dataset":
            return DATA_SECTION
    return None


def _dataset_class(context: ErrorContext) -> object:
    """``tf.data.Dataset`` as the learner's namespace reaches it (None without TF)."""
    tf = context.namespace.get(context.module_alias("tensorflow", "tf"))
    data = vars(tf).get("data") if isinstance(tf, ModuleType) else None
    return vars(data).get("Dataset") if isinstance(data, ModuleType) else None


CALLED_FUNCTION = ErrorFamily(
    "a function called where the function itself was wanted",
    messages=(Message(_NOT_CALLABLE),),
    read=_read_called_function,
    section="tracing",
    without_library=True,
)
