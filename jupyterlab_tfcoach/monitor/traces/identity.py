"""Which function a tf.function is: its user function, where it was defined, and who
made it (the user, Keras, TensorFlow), through the wrappers TensorFlow and Keras add."""

from __future__ import annotations

import os
import sys
import types
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.locations import CellLocator

_UNWRAP_LIMIT = 8

USER = "user"
KERAS = "keras"
TENSORFLOW = "tensorflow"


@dataclass(frozen=True)
class FunctionIdentity:
    """Who a tf.function is, from the Python function it wraps (plain data only)."""

    name: str
    defined_at: str | None
    code_key: tuple[str, int, str] | None
    is_method: bool
    origin: str  # USER | KERAS | TENSORFLOW
    # Keras' outer multi-step loop: it traces exactly when the one-step function it
    # calls does, so reporting both would say the same thing twice.
    hidden: bool = False

    @property
    def recreatable(self) -> bool:
        """A plain user function: a new tf.function object for it is a recreation.

        Methods get one function per instance by design and library functions
        (Keras builds new step functions at every compile()) are not the user's
        doing, so neither is a recreation.
        """
        return self.origin == USER and not self.is_method and self.code_key is not None


def library_roots() -> dict[str, str]:
    roots: dict[str, str] = {}
    for origin, module_name in ((TENSORFLOW, "tensorflow"), (KERAS, "keras")):
        module = sys.modules.get(module_name)
        path = getattr(module, "__file__", None) if module is not None else None
        if isinstance(path, str):
            roots[origin] = os.path.dirname(path) + os.sep
    return roots


def origin_of(filename: str, roots: dict[str, str]) -> str:
    for origin, root in roots.items():
        if filename.startswith(root):
            return origin
    if f"{os.sep}site-packages{os.sep}tensorflow{os.sep}" in filename:
        return TENSORFLOW
    return USER


_KERAS_ROLES = {
    "train_step": "train step: fit(), train_on_batch()",
    "test_step": "evaluation step: evaluate(), fit(validation_data=...), test_on_batch()",
    "predict_step": "predict step: predict(), predict_on_batch()",
}
# Keras' wrapper around one_step_on_data: never reported on its own (see ``hidden``).
_KERAS_HIDDEN = frozenset({"multi_step_on_iterator", "multi_step_on_data"})


def _keras_role(target: types.FunctionType) -> str | None:
    """Which Keras step a function built by the trainer runs, read from its closure.

    ``_make_function(step_function)`` closes over ``self.train_step`` or
    ``self.test_step``; the predict functions are named after predict. Only
    exact types are looked at, so no user attribute code runs.
    """
    code = target.__code__
    if "predict" in target.__qualname__:
        return _KERAS_ROLES["predict_step"]
    closure = target.__closure__ or ()
    for name, cell in zip(code.co_freevars, closure, strict=False):
        if name not in ("step_function", "step_func"):
            continue
        content = cell.cell_contents
        if type(content) is types.MethodType:
            content = content.__func__
        if type(content) is types.FunctionType:
            return _KERAS_ROLES.get(content.__name__)
    return None


def _method_instance(method: types.MethodType) -> Any | None:
    """The object a method is bound to; TF binds per-instance methods to a TfMethodTarget
    holding a weak reference to it."""
    owner = method.__self__
    if type(owner).__name__ == "TfMethodTarget":
        try:
            owner = object.__getattribute__(owner, "weakrefself_target__")()
        except Exception:
            return None
    return owner


@dataclass
class _Unwrapped:
    target: Any
    code: types.CodeType | None
    origin: str
    is_method: bool
    instance: Any | None


def unwrap(function: Any, roots: dict[str, str]) -> _Unwrapped:
    """TF's decorators and bound-method wrappers peeled off down to the user's code."""
    target = function._python_function
    is_method = False
    instance = None
    code: types.CodeType | None = None
    origin = TENSORFLOW
    for _ in range(_UNWRAP_LIMIT):
        # Exact type checks: isinstance would fall back to a user object's __class__.
        if type(target) is types.MethodType:
            is_method = True
            instance = _method_instance(target)
            target = target.__func__
            continue
        is_function = type(target) is types.FunctionType
        code = target.__code__ if is_function else None
        if code is not None:
            origin = origin_of(code.co_filename, roots)
            if origin == USER:
                break
        # TF's per-instance method functions and Keras' autograph wrappers keep the
        # function they wrap in __wrapped__ (or __original_wrapped__).
        inner = None
        if is_function:
            # __original_wrapped__ first: AutoGraph swaps a converted copy (in a
            # generated temp file) into __wrapped__.
            inner = target.__dict__.get("__original_wrapped__") or target.__dict__.get(
                "__wrapped__"
            )
        if inner is None:
            break
        target = inner
    return _Unwrapped(target, code, origin, is_method, instance)


def identify(function: Any, locator: CellLocator) -> FunctionIdentity:
    """Who the user's code behind a tf.function is."""
    unwrapped = unwrap(function, library_roots())
    target, code, origin, is_method = (
        unwrapped.target,
        unwrapped.code,
        unwrapped.origin,
        unwrapped.is_method,
    )
    if code is None:
        name = str(getattr(function, "_name", None) or "<tf.function>")
        return FunctionIdentity(name, None, None, is_method, origin)
    qualname = target.__qualname__ if type(target) is types.FunctionType else code.co_name
    name = str(qualname)
    hidden = False
    if origin == KERAS:
        # "TensorFlowTrainer._make_function.<locals>.one_step_on_data" twice (train and
        # validation) tells a learner nothing; say which Keras step it is.
        role = None
        try:
            role = _keras_role(target) if type(target) is types.FunctionType else None
        except Exception:
            role = None
        name = f"{code.co_name} (Keras {role})" if role else name
        hidden = code.co_name in _KERAS_HIDDEN
    return FunctionIdentity(
        name=name,
        defined_at=locator.describe(code.co_filename, code.co_firstlineno),
        code_key=(code.co_filename, code.co_firstlineno, str(qualname)),
        is_method=is_method,
        origin=origin,
        hidden=hidden,
    )
