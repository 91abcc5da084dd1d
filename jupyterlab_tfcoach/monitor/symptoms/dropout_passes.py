"""Sampling passes through a model's dropout that keep its BatchNormalization in
inference mode: the fix shared by the entries that see Monte Carlo dropout written as
``model(x, training=True)`` (or ``model.predict(x, training=True)``, which raises).

``training=True`` on the whole model turns dropout on, as meant, and BatchNormalization
too: each pass normalizes with the batch's own statistics instead of the learned ones and
moves the moving mean and variance toward the data it is given (measured on Keras 3:
they change in every such pass), so the trained model is silently altered. Only the
dropout layers should run in training mode.

For a ``Sequential`` model whose top-level layers split cleanly (every BatchNormalization
that is not frozen lies in the layers before the first one holding a dropout or noise
layer, nested or not), the passes are written in the learner's names: the layers before
the split run once in inference mode, the rest, from the first dropout on, in training
mode, as a ``Sequential`` of the same layer objects (sharing weights, nothing copied):

    features = net.layers[0](x, training=False)
    sampler = keras.Sequential(net.layers[1:])
    runs = [sampler(features, training=True) for _ in range(30)]

Anything else (a functional or subclassed model, a BatchNormalization after a dropout) is
named with no code. Read from Keras's stored layer lists (no user property runs).
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import (
    keras_layers,
    keras_sublayers,
    keras_trainable_flag,
    stored,
)
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import library_class_names

# Keras layers that only add randomness in training mode (SpatialDropout derives from
# Dropout).
RANDOM_LAYERS = ("Dropout", "GaussianDropout", "GaussianNoise", "AlphaDropout")
NORMALIZATION = "BatchNormalization"
MAX_LAYERS = 500
_MAX_NAMED = 3


@dataclass(frozen=True)
class DropoutPasses:
    """How to sample ``model`` with only its dropout in training mode."""

    normalizations: list[str]  # the BatchNormalization layers a whole-model pass moves
    setup: list[str]  # statements to run once before the passes (empty: no code)
    sampled: str  # the pass, given the inputs' text: ``sampler(features, training=True)``


def _random(layer: Any) -> bool:
    names = library_class_names(layer)
    return any(kind in names for kind in RANDOM_LAYERS)


def _moving_normalizations(layer: Any) -> list[Any]:
    """The BatchNormalization layers under ``layer`` (itself included) that are not
    frozen: Keras runs a frozen one in inference mode whatever the flag."""
    return [
        inner
        for inner in keras_layers(layer, MAX_LAYERS)
        if NORMALIZATION in library_class_names(inner) and keras_trainable_flag(inner) is not False
    ]


def _holds_random(layer: Any) -> bool:
    return any(_random(inner) for inner in keras_layers(layer, MAX_LAYERS))


def _name(layer: Any) -> str | None:
    name = stored(layer, "name")
    return name if type(name) is str and name else None


def _named(model: Any, layers: list[Any]) -> list[str]:
    """Each layer's name, with the nested model holding it: "`bn` (in `block`)"."""
    owners: dict[int, str] = {}
    for top in _top_layers(model):
        top_name = _name(top)
        for inner in keras_layers(top, MAX_LAYERS)[1:]:
            if top_name is not None:
                owners.setdefault(id(inner), top_name)
    shown: list[str] = []
    for layer in layers[:_MAX_NAMED]:
        name = _name(layer)
        if name is None:
            continue
        owner = owners.get(id(layer))
        shown.append(f"`{name}` (in `{owner}`)" if owner else f"`{name}`")
    return shown


def _top_layers(model: Any) -> list[Any]:
    """``model.layers`` as Keras keeps them (the ``InputLayer`` left out)."""
    return [
        layer for layer in keras_sublayers(model) if "InputLayer" not in library_class_names(layer)
    ]


def _free_name(wanted: str, prefix: str, namespace: Mapping[str, Any]) -> str:
    return wanted if wanted not in namespace else f"{prefix}_{wanted}"


def keras_spelling(namespace: Mapping[str, Any]) -> str:
    return "keras" if type(namespace.get("keras")) is types.ModuleType else "tf.keras"


def dropout_passes(
    model_name: str, model: Any, data: str, namespace: Mapping[str, Any]
) -> DropoutPasses | None:
    """None unless ``model`` holds both a random layer and a BatchNormalization that is
    not frozen; then the layers a whole-model training pass would move and, for a
    ``Sequential`` split as above, the passes written with ``data`` as the inputs."""
    try:
        if "Layer" not in library_class_names(model) or not _holds_random(model):
            return None
        moving = _moving_normalizations(model)
        if not moving:
            return None
        named = _named(model, moving)
        empty = DropoutPasses(named, [], "")
        if "Sequential" not in library_class_names(model):
            return empty
        top = _top_layers(model)
        split = next((i for i, layer in enumerate(top) if _holds_random(layer)), None)
        if split is None or split == 0:
            return empty
        if any(_moving_normalizations(layer) for layer in top[split:]):
            return empty  # a BatchNormalization after the first dropout: no clean split
    except Exception:
        return None
    keras_name = keras_spelling(namespace)
    features = _free_name("features", model_name, namespace)
    sampler = _free_name("sampler", model_name, namespace)
    head = (
        f"{model_name}.layers[0]"
        if split == 1
        else f"{keras_name}.Sequential({model_name}.layers[:{split}])"
    )
    setup = [
        f"{features} = {head}({data}, training=False)",
        f"{sampler} = {keras_name}.Sequential({model_name}.layers[{split}:])",
    ]
    return DropoutPasses(named, setup, f"{sampler}({features}, training=True)")


def normalization_effect(model_name: str, passes: DropoutPasses) -> str:
    """What ``training=True`` on the whole model does to its BatchNormalization."""
    layers = ", ".join(passes.normalizations) or "layers"
    plural = len(passes.normalizations) > 1
    return (
        f"`training=True` on the whole of `{model_name}` turns its dropout on, as meant, but "
        f"also its BatchNormalization layer{'s' if plural else ''} {layers}: each pass "
        "normalizes with the statistics of the data it is given instead of the learned ones, "
        "and moves the moving mean and variance toward that data, so the trained model "
        "changes with every pass. Only the dropout should run in training mode"
    )


def split_advice(model_name: str) -> str:
    """The fix in words, for a model whose passes cannot be written as code."""
    return (
        f"call the layers of `{model_name}` before its dropout with `training=False` and "
        "the dropout with `training=True`, or give the model a `Dropout` subclass whose "
        "`call` passes `training=True` to `super().call` and predict in inference mode"
    )
