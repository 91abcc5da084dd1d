"""Variables replaced by tensors on tf.Module objects and Keras layers, seen as it happens.

``self.w -= lr * g`` on a Keras 3 variable (which has no in-place ``-=``),
``lm.w = tf.clip_by_norm(lm.w, 3.0)`` on a ``tf.Module``, or a layer that
stores ``self.mean = 0.9 * self.mean + ...`` in ``call()`` all replace a
variable with a tensor through the object's ``__setattr__``. A hook on the two
``__setattr__`` methods those objects use (TensorFlow's ``AutoTrackable``, and
Keras' ``Layer`` on top of it) compares the old and the new value's *type*
before the assignment and, when a variable is being replaced by a tensor from
user code, remembers where (plain data only). It works whether the object was
made in this cell or earlier, and inside loops and traced ``call()`` methods.

The hook adds one dict lookup per attribute assignment and always performs the
assignment itself, whatever happens in the check. It reads the object's ``__dict__``
and, of the variable, only what TensorFlow's and Keras's own descriptors return
(``library_attribute``): no property of the user's classes runs in it.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.hooks import MethodHooks
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute
from jupyterlab_tfcoach.monitor.tftypes import loaded_class

AUTOTRACKABLE_MODULE = "tensorflow.python.trackable.autotrackable"
KERAS_LAYER_MODULE = "keras.src.layers.layer"
MAX_EVENTS_PER_CELL = 50


@dataclass(frozen=True)
class AttributeRebind:
    """One variable attribute replaced by a tensor, as plain data."""

    holder_id: int
    holder_class: str
    holder_name: str | None  # a Keras layer's name
    holder_kind: str | None  # "tf.Module", "keras.Layer", "keras.Model"
    attribute: str
    before: str  # the old value's kind ("tf.Variable" / "keras.Variable")
    filename: str
    line: int
    in_function: str  # the code that ran the assignment ("call", "train")
    tensor_id: int  # id of the tensor that took the variable's place
    variable_id: int  # id of the variable it replaced
    # What the fix needs (``assign_sub(step)`` fails for a single-number step on a variable
    # with dimensions): the variable's number of dimensions, and the local names of the
    # assigning code that held a Python number (``lr``).
    rank: int | None = None
    number_locals: frozenset[str] = frozenset()


def rank_of(value: Any) -> int | None:
    """Dimensions of a variable or tensor the monitor identified by its type; None when
    unknown (or when its ``shape`` is not TensorFlow's or Keras's own)."""
    shape = library_attribute(value, "shape")
    if shape is None:
        return None
    try:
        return len(shape)
    except Exception:  # unknown rank
        return None


def _number_locals(frame: Any) -> frozenset[str]:
    try:
        return frozenset(
            name for name, value in frame.f_locals.items() if type(value) in (int, float)
        )
    except Exception:
        return frozenset()


def _library_dirs() -> tuple[str, ...]:
    dirs = []
    for name in ("tensorflow", "keras"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None) if module is not None else None
        if isinstance(path, str):
            dirs.append(os.path.dirname(path) + os.sep)
    return tuple(dirs)


class AttributeWatcher:
    """Installs the ``__setattr__`` hooks and collects what they saw during a cell."""

    def __init__(self, kind_of: Any, variable_kinds: frozenset[str], tensor_kind: str) -> None:
        self.kind_of = kind_of
        self._variable_kinds = variable_kinds
        self._tensor_kind = tensor_kind
        self._events: list[AttributeRebind] = []
        self._seen: set[tuple[int, str]] = set()
        self._lock = threading.Lock()
        self._hooks = MethodHooks()
        self._library_dirs: tuple[str, ...] = ()

    def install(self) -> bool:
        self._library_dirs = _library_dirs()
        for module_name, class_name in (
            (AUTOTRACKABLE_MODULE, "AutoTrackable"),
            (KERAS_LAYER_MODULE, "Layer"),
        ):
            owner = loaded_class(module_name, class_name)
            if owner is not None:
                self._hooks.install(owner, "__setattr__", self._setattr_hook)
        return bool(self._hooks)

    def _setattr_hook(self, original: Any) -> Any:
        watcher = self

        def setattr_hook(obj: Any, name: Any, value: Any) -> None:
            __tracebackhide__ = True  # IPython leaves this frame out of user tracebacks
            try:
                watcher._check(obj, name, value)
            except Exception:
                pass
            original(obj, name, value)

        return setattr_hook

    def uninstall(self) -> None:
        self._hooks.restore()

    def _check(self, obj: Any, name: Any, value: Any) -> None:
        if type(name) is not str:
            return
        attributes = instance_dict(obj)
        if attributes is None:
            return
        old = attributes.get(name)
        if old is None:
            return
        kind_of = self.kind_of
        if kind_of(value) != self._tensor_kind:
            return
        before = kind_of(old)
        if before not in self._variable_kinds:
            return
        frame = sys._getframe(2)  # the frame that ran ``obj.name = value``
        code = frame.f_code
        if code.co_filename.startswith(self._library_dirs):
            return  # Keras's own bookkeeping (and the inner of the two hooks)
        key = (id(obj), name)
        holder_name = attributes.get("name")
        event = AttributeRebind(
            holder_id=id(obj),
            holder_class=type(obj).__name__,
            holder_name=holder_name if type(holder_name) is str else None,
            holder_kind=kind_of(obj),
            attribute=name,
            before=before,
            filename=code.co_filename,
            line=frame.f_lineno,
            in_function=code.co_name,
            tensor_id=id(value),
            variable_id=id(old),
            rank=rank_of(old),
            number_locals=_number_locals(frame),
        )
        with self._lock:
            if key in self._seen or len(self._events) >= MAX_EVENTS_PER_CELL:
                return
            self._seen.add(key)
            self._events.append(event)

    def take(self) -> list[AttributeRebind]:
        with self._lock:
            events, self._events = self._events, []
            self._seen = set()
        return events
