"""Error family of a learner's class overriding a Keras method with another signature
than the one Keras calls it with (see ``family_record.py`` for a family's shape).

Keras calls the methods a learner overrides with its own arguments: a callback's
``on_epoch_end(epoch, logs)``, a metric's ``update_state(y_true, y_pred,
sample_weight=...)``, a model's ``train_step(data)``, a layer's ``call(inputs)`` and
``get_config()``. A ``def`` with fewer or other parameters fails inside Keras with
Python's ``TypeError`` (``Printer.on_epoch_end() takes 1 positional argument but 3 were
given``, ``... got an unexpected keyword argument 'sample_weight'``, ``missing 1 required
positional argument``; for a layer's ``call``, Keras's own ``too many positional
arguments``), which names neither Keras's side nor the fix.

The entry names the learner's class and method and the Keras class it overrides, reads
that base method's parameters with ``inspect.signature`` (library code only: the
learner's method is read from its code object, never run), and gives the ``def`` line to
write. Where the base method takes only ``*args, **kwargs`` (``Metric.update_state``,
``Layer.call``), how Keras calls it is said from a small table.
"""

from __future__ import annotations

import abc
import ast
import inspect
import re
import types

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, class_mro, code
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import is_library_class

_WRONG_ARGUMENTS = re.compile(
    r"(?P<cls>\w+)\.(?P<method>\w+)\(\) (?:takes (?P<takes>\d+) positional arguments? but "
    r"(?P<given>\d+) (?:was|were) given|missing \d+ required (?:positional|keyword-only) "
    r"arguments?: |got an unexpected keyword argument '(?P<keyword>\w+)')"
)
# Keras's ``CallSpec`` binding a layer's ``call`` to the arguments it was given.
_LAYER_CALL = re.compile(r"^too many positional arguments$")

_class_namespace = type.__dict__["__dict__"].__get__
_type_mro = type.__dict__["__mro__"].__get__
_type_name = type.__dict__["__name__"].__get__
_type_bases = type.__dict__["__bases__"].__get__
_VARARGS, _VARKEYWORDS = 0x04, 0x08  # ``code.co_flags``

# How Keras calls a base method that itself takes only ``*args, **kwargs``.
_CALLED_WITH = {
    "update_state": ("y_true", "y_pred", "sample_weight=None"),
    "call": ("inputs",),
}
# The course section for a method, by its name (callbacks' hooks start with ``on_``).
_SECTIONS = {
    "train_step": "custom-train-step",
    "test_step": "custom-train-step",
    "predict_step": "custom-train-step",
    "update_state": "custom-train-step",
    "result": "custom-train-step",
    "reset_state": "custom-train-step",
    "call": "keras-weights-in-build",
    "build": "keras-weights-in-build",
    "get_config": "keras-saving",
    "from_config": "keras-saving",
}
_CALLBACK_SECTION = "callback-mode"  # a callback's hooks: on_epoch_end, on_train_begin...
_KERAS_SECTION = "keras-model-api"
_SAFE_DEFAULTS = (type(None), bool, int, float, str)


def _user_class(name: str, context: ErrorContext) -> type | None:
    """The namespace's class named ``name`` (the learner's, not the library's)."""
    for count, value in enumerate(context.namespace.values()):
        if count > 5000:
            break
        metaclass = type(value)
        if not isinstance(value, type):
            continue
        if metaclass not in (type, abc.ABCMeta) and not is_library_class(metaclass):
            continue  # a user metaclass could hook what is read below
        try:
            if _type_name(value) == name and not is_library_class(value):
                return value
        except Exception:
            continue
    return None


def _overridden(owner: type, method: str) -> tuple[types.FunctionType, type] | None:
    """The learner's own ``method`` of ``owner`` and the library class it overrides."""
    own = _class_namespace(owner).get(method)
    if type(own) is not types.FunctionType:
        return None
    try:
        mro = _type_mro(owner)
    except Exception:
        return None
    for base in mro[1:]:
        if is_library_class(base) and method in _class_namespace(base):
            return own, base
    return None


def _parameters(function: types.FunctionType) -> list[str] | None:
    """The learner's parameters as written (``self``, names, simple defaults), from the
    function's code object: no user code runs."""
    code_object = function.__code__
    positional = list(code_object.co_varnames[: code_object.co_argcount])
    defaults = function.__defaults__ or ()
    if any(type(value) not in _SAFE_DEFAULTS for value in defaults):
        return None
    written = list(positional)
    for index, value in enumerate(defaults):
        at = len(positional) - len(defaults) + index
        written[at] = f"{positional[at]}={value!r}"
    extra = code_object.co_argcount + code_object.co_kwonlyargcount
    if code_object.co_flags & _VARARGS:
        written.append("*" + code_object.co_varnames[extra])
        extra += 1
    if code_object.co_flags & _VARKEYWORDS:
        written.append("**" + code_object.co_varnames[extra])
    return written


def _base_parameters(base: type, method: str) -> list[str] | None:
    """Keras's parameters for ``method`` (without ``self``), read from the base class."""
    try:
        signature = inspect.signature(_class_namespace(base)[method])
    except (TypeError, ValueError, KeyError):
        return None
    parameters = list(signature.parameters.values())[1:]
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    if parameters and all(parameter.kind in variadic for parameter in parameters):
        called = _CALLED_WITH.get(method)
        return list(called) if called is not None else None
    return [str(parameter) for parameter in parameters]


def _keras_called_it(context: ErrorContext) -> bool:
    """Whether the call that failed is not the learner's own: the innermost frame of the
    traceback is outside their cells (Keras, or what Keras filtered its traceback to),
    so Keras called the method; a learner calling it with the wrong arguments fails in
    the cell."""
    traceback = context.exception.__traceback__
    innermost = None
    for _ in range(500):
        if traceback is None:
            break
        innermost = traceback.tb_frame
        traceback = traceback.tb_next
    if innermost is None:
        return False
    module = innermost.f_globals.get("__name__")
    return module != "__main__" and innermost.f_code.co_filename not in context.cell_files


def _finding(owner: type, method: str, keyword: str | None) -> Finding | None:
    overridden = _overridden(owner, method)
    if overridden is None:
        return None
    own, base = overridden
    written = _parameters(own)
    wanted = _base_parameters(base, method)
    if written is None or wanted is None or not written:
        return None
    cls = _type_name(owner)
    # The public class the learner derived from (``Model``), not Keras's inner base
    # that defines the method (``TensorFlowTrainer``).
    derived = next(
        (cls for cls in (*_type_bases(owner), *_type_mro(owner)) if is_library_class(cls)), base
    )
    base_name = _type_name(derived)
    if keyword is not None:
        # Keras passes a keyword the def lacks: keep the learner's parameters, add it.
        added = next((p for p in wanted if p.split("=")[0] == keyword), f"{keyword}=None")
        position = next((i for i, p in enumerate(written) if p.startswith("*")), len(written))
        fixed = [*written[:position], added, *written[position:]]
    else:
        fixed = [written[0], *wanted]
    shown = ", ".join(wanted) or "no arguments but self"
    rule = (
        f"`{cls}.{method}` overrides `{base_name}.{method}`, and Keras calls it "
        f"as it calls its own: `{method}(self, {', '.join(wanted)})`"
        if wanted
        else f"`{cls}.{method}` overrides `{base_name}.{method}`, which Keras calls with {shown}"
    )
    rule += (
        f"; your `def {method}({', '.join(written)})` does not take those arguments, so the "
        "call fails inside Keras, not in your line"
    )
    fix = (
        f"write the method's `def` line as Keras calls it (keep its body), then run the class's "
        f"cell and this line again: {code(f'def {method}(' + ', '.join(fixed) + '):')}"
    )
    return Finding(rule + ".", fix, section=_section(method))


def _section(method: str) -> str:
    if method.startswith("on_"):
        return _CALLBACK_SECTION
    return _SECTIONS.get(method, _KERAS_SECTION)


def _read_override(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if not _keras_called_it(context):
        return None
    if error.matched(_LAYER_CALL):
        call = line.call
        if not isinstance(call, ast.Call):
            return None
        found, layer = value_of(call.func, line.frame, context)
        mro = class_mro(layer) if found else ()
        if not found and isinstance(call.func, ast.Call):
            # ``Ident()(x)``: the class called, read without making an instance.
            found, made = value_of(call.func.func, line.frame, context)
            mro = _type_mro(made) if found and isinstance(made, type) else ()
        owner = next((cls for cls in mro if not is_library_class(cls)), None)
        if owner is None or not any(is_library_class(cls) for cls in mro):
            return None
        return _finding(owner, "call", None)
    if error.group("method") == "__init__":
        return None  # a constructor: the families of what was passed explain it
    owner = _user_class(error.group("cls"), context)
    if owner is None:
        return None
    return _finding(owner, error.group("method"), error.group("keyword"))


OVERRIDE_SIGNATURE = ErrorFamily(
    "a Keras method overridden with another signature than Keras calls it with",
    messages=(Message(_WRONG_ARGUMENTS), Message(_LAYER_CALL)),
    exception_type="TypeError",
    read=_read_override,
    section=_KERAS_SECTION,
)
