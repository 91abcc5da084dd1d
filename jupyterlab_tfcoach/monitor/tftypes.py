"""TensorFlow and Keras classes, read from ``sys.modules`` only.

The monitor never imports TensorFlow: it looks at what the user's code already
imported. Every lookup degrades to "not available" (an empty tuple or ``None``)
when a module or name is missing, so a TensorFlow version that moved a private
name makes the monitor report less instead of failing.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

POLYMORPHIC_FUNCTION_MODULE = "tensorflow.python.eager.polymorphic_function.polymorphic_function"
BACKPROP_MODULE = "tensorflow.python.eager.backprop"

# (module, attribute) pairs, most specific first; the public name is the fallback.
_TF_VARIABLE = (("tensorflow.python.ops.variables", "Variable"), ("tensorflow", "Variable"))
_TF_TENSOR = (("tensorflow.python.framework.tensor", "Tensor"), ("tensorflow", "Tensor"))
_TF_MODULE = (("tensorflow.python.module.module", "Module"), ("tensorflow", "Module"))
_KERAS_VARIABLE = (("keras.src.backend.common.variables", "Variable"), ("keras", "Variable"))
_KERAS_LAYER = (("keras.src.layers.layer", "Layer"),)
_KERAS_MODEL = (("keras.src.models.model", "Model"),)


def tensorflow_module() -> Any | None:
    """The ``tensorflow`` module if the user imported it (a dict lookup: free without TF)."""
    return sys.modules.get("tensorflow")


def _lookup(candidates: tuple[tuple[str, str], ...]) -> type | None:
    for module_name, attribute in candidates:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        try:
            found = getattr(module, attribute, None)
        except Exception:
            continue
        if isinstance(found, type):
            return found
    return None


def loaded_class(module_name: str, class_name: str) -> type | None:
    """``module_name.class_name`` if the user's imports loaded that module and it is a class
    (the classes whose methods the monitor hooks: ``hooks.py``)."""
    return _lookup(((module_name, class_name),))


@dataclass
class TfTypes:
    """The classes the namespace scan compares ``type(obj)`` against."""

    variable: tuple[type, ...] = ()
    keras_variable: tuple[type, ...] = ()
    tensor: tuple[type, ...] = ()
    tf_module: tuple[type, ...] = ()
    keras_layer: tuple[type, ...] = ()
    keras_model: tuple[type, ...] = ()
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing

    @classmethod
    def resolve(cls) -> TfTypes:
        def one(label: str, candidates: tuple[tuple[str, str], ...]) -> tuple[type, ...]:
            found = _lookup(candidates)
            if found is None:
                types.missing.append(label)
                return ()
            return (found,)

        types = cls()
        types.variable = one("tf.Variable", _TF_VARIABLE)
        types.tensor = one("tf.Tensor", _TF_TENSOR)
        types.tf_module = one("tf.Module", _TF_MODULE)
        # Keras is imported by ``import tensorflow`` (TF >= 2.16); if it is not there
        # yet, the extension resolves again on a later cell.
        types.keras_variable = one("keras.Variable", _KERAS_VARIABLE)
        types.keras_layer = one("keras.Layer", _KERAS_LAYER)
        types.keras_model = one("keras.Model", _KERAS_MODEL)
        return types


def functions_run_eagerly() -> bool:
    """``tf.config.functions_run_eagerly()``, False when it cannot be read."""
    tf = tensorflow_module()
    if tf is None:
        return False
    try:
        return bool(tf.config.functions_run_eagerly())
    except Exception:
        return False
