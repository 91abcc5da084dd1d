"""What kind of TensorFlow or Keras value an object is, by its type alone, and what a
tf.Module's or Keras layer's trainable variables are, from what the libraries store.

Every watcher asks ``KindClassifier.kind_of``: the namespace diff, the attribute hook, the
rebinding and learning reports and the gradient notes. It looks at ``type(value)`` only
(never ``value.__class__``, ``isinstance`` or ``repr``: a hostile object's
``__getattr__``/``__class__``/``__eq__`` must not run) against the classes ``TfTypes``
found in ``sys.modules``, and caches the answer per type, holding types only weakly.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import keras_trainable_variables, module_variables
from jupyterlab_tfcoach.monitor.tftypes import TfTypes

TF_VARIABLE = "tf.Variable"
KERAS_VARIABLE = "keras.Variable"
TENSOR = "tf.Tensor"
TF_MODULE = "tf.Module"
KERAS_LAYER = "keras.Layer"
KERAS_MODEL = "keras.Model"

VARIABLE_KINDS = frozenset({TF_VARIABLE, KERAS_VARIABLE})
HOLDER_KINDS = frozenset({TF_MODULE, KERAS_LAYER, KERAS_MODEL})
# Values looked at (layers, variables, list items) to list one holder's trainable
# variables: beyond this, its count is unknown rather than slow.
MAX_TRAINABLE_WALK = 20_000


class KindClassifier:
    """``type -> kind`` with a cache that holds the types only weakly."""

    def __init__(self, types: TfTypes) -> None:
        self._order: tuple[tuple[str, tuple[type, ...]], ...] = (
            # Variables first: a keras.Variable is also a tf.types Tensor subclass.
            (TF_VARIABLE, types.variable),
            (KERAS_VARIABLE, types.keras_variable),
            (TENSOR, types.tensor),
            (KERAS_MODEL, types.keras_model),
            (KERAS_LAYER, types.keras_layer),
            (TF_MODULE, types.tf_module),
        )
        # id(type) -> (weak ref to the type, kind): never keeps a user class alive.
        self.cache: dict[int, tuple[weakref.ReferenceType[type], str | None]] = {}

    def kind_of_type(self, value_type: type) -> str | None:
        cached = self.cache.get(id(value_type))
        if cached is not None and cached[0]() is value_type:
            return cached[1]
        kind: str | None = None
        for name, classes in self._order:
            if classes and issubclass(value_type, classes):
                kind = name
                break
        try:
            self.cache[id(value_type)] = (weakref.ref(value_type), kind)
        except TypeError:
            pass
        return kind

    def kind_of(self, value: Any) -> str | None:
        # The hot path of every scan: a dict lookup and a weakref call per value.
        value_type = type(value)
        cached = self.cache.get(id(value_type))
        if cached is not None and cached[0]() is value_type:
            return cached[1]
        try:
            return self.kind_of_type(value_type)
        except Exception:
            return None


def trainable_variables_of(
    holder: Any, kind: str | None, kind_of: Callable[[Any], str | None]
) -> list[Any] | None:
    """``holder.trainable_variables`` as TensorFlow or Keras computes it, from what they
    store, without running any property of the holder or its layers (a user's override
    included); None when unknown or too big to list (``MAX_TRAINABLE_WALK``)."""
    if kind == TF_MODULE:
        return module_variables(
            holder,
            lambda value: kind_of(value) == TF_VARIABLE,
            lambda value: kind_of(value) == TF_MODULE,
            MAX_TRAINABLE_WALK,
        )
    if kind in (KERAS_LAYER, KERAS_MODEL):
        return keras_trainable_variables(holder, MAX_TRAINABLE_WALK)
    return None
