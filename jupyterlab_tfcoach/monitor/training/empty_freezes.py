"""``trainable = False`` set on a model's layer that holds no weights: nothing is frozen.

``transfer.layers[0].trainable = False`` meant to freeze the pretrained base, but in a
functional model ``layers[0]`` is the ``InputLayer``: it holds no weights, so nothing is
frozen, and the base's weights change while the new head trains. The same for any layer
without weights picked by index (``Flatten``, ``Dropout``, a pooling layer). Nothing raises.

After a completed cell holding ``.trainable = False`` (one substring test otherwise): each
such assignment whose object is written ``<model>.layers[<int>]``, with ``<model>`` a
Keras model of Keras's own class (``Functional``, ``Sequential``: their ``layers`` is
Keras's code, no user property runs). When the layer it picks holds no weights, the note
names it, the layer of that model holding the most trainable weights (by the learner's
name when a namespace name is bound to it) and the fix: set ``trainable`` on that layer.
Weights are counted from the variable lists Keras stores on each layer and its sublayers
(``stored_state.keras_variables``), never through a ``weights`` property a sublayer of the
learner's class could override.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    is_library_class,
    keras_trainable_variables,
    keras_variables,
    library_attribute,
)
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "trainable-weights"
MAX_CELL_CHARS = 50_000
MAX_LAYERS = 500
MAX_WEIGHTS = 10_000


def _picked_layer(target: ast.AST) -> tuple[str, int] | None:
    """``("transfer", 0)`` for ``transfer.layers[0].trainable``."""
    if not isinstance(target, ast.Attribute) or target.attr != "trainable":
        return None
    picked = target.value
    if not isinstance(picked, ast.Subscript):
        return None
    index = picked.slice
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
        sign = -1
    else:
        sign = 1
    holder = picked.value
    if (
        isinstance(holder, ast.Attribute)
        and holder.attr == "layers"
        and isinstance(holder.value, ast.Name)
        and isinstance(index, ast.Constant)
        and type(index.value) is int
    ):
        return holder.value.id, sign * index.value
    return None


def _weight_count(layer: Any) -> int | None:
    """How many weights a layer of Keras's own class holds, read from the variable lists
    Keras stores on it and its sublayers (never a ``weights`` property, which asks each
    sublayer, the learner's too); None for the learner's class or too many to list."""
    if not is_library_class(type(layer)):
        return None
    weights = keras_variables(layer, with_seed_state=False, limit=MAX_WEIGHTS)
    return len(weights) if len(weights) <= MAX_WEIGHTS else None


def _trainable_count(layer: Any) -> int:
    if not is_library_class(type(layer)):
        return 0
    found = keras_trainable_variables(layer, limit=MAX_WEIGHTS)
    return len(found) if found is not None else 0


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if ".trainable = False" not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        if not (isinstance(node.value, ast.Constant) and node.value.value is False):
            continue
        picked = _picked_layer(node.targets[0])
        if picked is None:
            continue
        model_name, index = picked
        model = namespace.get(model_name)
        if model is None or not is_library_class(type(model)):
            continue
        # Keras's own ``layers`` (the model's class is Keras's): its stored list of layers.
        layers = library_attribute(model, "layers")
        if type(layers) is not list or not layers or len(layers) > MAX_LAYERS:
            continue
        if not -len(layers) <= index < len(layers):
            continue
        layer = layers[index]
        if _weight_count(layer) != 0:
            continue
        found.append(_note(node, source, model_name, index, layer, layers, namespace))
    return found


def _note(
    node: ast.Assign,
    source: str,
    model_name: str,
    index: int,
    layer: Any,
    layers: list[Any],
    namespace: Mapping[str, Any],
) -> Note:
    written = ast.get_source_segment(source, node) or f"{model_name}.layers[{index}].trainable"
    kind = type(layer).__name__
    heaviest = max(layers, key=_trainable_count)
    count = _trainable_count(heaviest)
    text = (
        f"`{written}` (line {node.lineno} of this cell) sets `trainable` on "
        f"`{model_name}.layers[{index}]` (`{kind}`), which holds no weights: nothing is "
        "frozen, and every weight of the model still trains"
    )
    if count:
        position = next(i for i, candidate in enumerate(layers) if candidate is heaviest)
        name = name_bound_to(id(heaviest), namespace)
        which = f"`{name}`" if name else f"`{model_name}.layers[{position}]`"
        text += f" ({which}, `{model_name}.layers[{position}]`, holds {count} trainable weights). "
        if kind == "InputLayer":
            text += "In a functional model `layers[0]` is the input, not the first block. "
        target = name or f"{model_name}.layers[{position}]"
        text += f"Freeze the layer itself, before compile: `{target}.trainable = False`."
    else:
        text += "."
    return reports.note(text, SECTION)
