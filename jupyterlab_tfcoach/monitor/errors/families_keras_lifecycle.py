"""Error families of a Keras object's life: made, built, saved, loaded (see
``family_record.py`` for a family's shape). Two mistakes of the first months that Keras 3
reports in words of its own:

- a model or layer asked for its weights or parameter count before it has any: a
  ``keras.Sequential`` without ``keras.Input`` is built (its weights made) only when it
  first sees data, so ``count_params()`` or ``layer.kernel`` before that raise;
- ``keras.models.load_model`` of a file holding a class the user wrote, in a process
  where Keras does not know that class by name (not registered, not passed as
  ``custom_objects``): the fix passes it, in the user's own call.

Read from the message and the failing line (``ast``), and the namespace's classes by
their names (``type``'s own slots): no user code runs.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.families_keras_api import class_in_namespace
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    segment_of,
)

# ------------------------------------------------------------------ not built yet
_NOT_BUILT_CALL = re.compile(
    r"You tried to call `(?P<method>\w+)` on layer '(?P<layer>[^']*)', but the layer "
    r"isn't built"
)
_NOT_BUILT_ATTRIBUTE = re.compile(r"You must build the layer before accessing `(?P<attribute>\w+)`")


def _receiver(line: FailingLine) -> str | None:
    """``model`` for ``model.count_params()`` / ``model.layers[0].kernel`` on the line."""
    for part in (line.call, line.statement):
        for node in ast.walk(part) if part is not None else ():
            if isinstance(node, ast.Attribute):
                owner = node.value
                while isinstance(owner, (ast.Attribute, ast.Subscript, ast.Call)):
                    owner = owner.func if isinstance(owner, ast.Call) else owner.value
                if isinstance(owner, ast.Name):
                    return owner.id
    return None


def _read_not_built(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding:
    asked = (
        f"`{error.group('method')}()`"
        if error.matched(_NOT_BUILT_CALL)
        else f"`{error.group('attribute')}`"
    )
    holder = _receiver(line)
    named = f"`{holder}`" if holder else "this model"
    rule = (
        f"{asked} needs the weights, and {named} has none yet: a layer makes its weights "
        "when it first learns the shape of its input, and a `keras.Sequential` without "
        "`keras.Input` learns it only when it first sees data. Give the model its input "
        "shape where it is made, `keras.Input(shape=(features,))` as the first entry of "
        f"the Sequential list (or call {named} on a batch, or `fit` it, before asking)"
    )
    return Finding(rule + ".", None)


NOT_BUILT = ErrorFamily(
    "a model or layer asked for its weights before it was built",
    messages=(Message(_NOT_BUILT_CALL), Message(_NOT_BUILT_ATTRIBUTE)),
    read=_read_not_built,
    section="keras-model-api",
)


# ------------------------------------------------------------------ load_model of a user class
_UNKNOWN_CLASS = re.compile(r"Could not locate (?:class|function) '(?P<name>\w+)'")
_LOADERS = ("load_model", "load")


def _loader_call(line: FailingLine) -> ast.Call | None:
    for part in (line.call, line.statement):
        for node in ast.walk(part) if part is not None else ():
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called in _LOADERS:
                    return node
    return None


def _read_unknown_class(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    name = error.group("name")
    if not class_in_namespace(name, context, ("layer",)):
        return None
    rule = (
        f"the saved file names the class `{name}`, and Keras rebuilds a model from such "
        "names: only classes it knows by name can be rebuilt. Register the class by "
        f"putting `@keras.saving.register_keras_serializable()` on `class {name}` (then run "
        f"that cell again, before loading), or pass it to the loader"
    )
    call = _loader_call(line)
    if call is None or any(item.arg == "custom_objects" for item in call.keywords):
        return Finding(rule + ".", None)
    written = segment_of(line, call)
    if not written.endswith(")") or "\n" in written:
        return Finding(rule + ".", None)
    opened = written[:-1].rstrip()
    separator = "" if opened.endswith("(") else ", "
    replacement = f'{opened.rstrip(",")}{separator}custom_objects={{"{name}": {name}}})'
    statement = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, statement, call, replacement)
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


UNKNOWN_CLASS = ErrorFamily(
    "loading a saved model whose class Keras does not know by name",
    messages=(Message(_UNKNOWN_CLASS),),
    read=_read_unknown_class,
    section="keras-saving",
)
