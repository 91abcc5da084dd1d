"""Which preprocessing layers each ``fit`` trained a model with (weakly, by cell).

A model's weights are learned for the numbers its preprocessing produced during ``fit``:
the token ids a ``TextVectorization``/``StringLookup``/``IntegerLookup`` gave each word,
the bins of a ``Discretization``, the mean and variance of a ``Normalization``. Adapting
such a layer again afterwards (on validation, test or new inference data) silently
changes those numbers under the trained weights (``symptoms/adapt_leaks.py`` tells it).

Around each ``fit`` (``fit_watch``'s hook, once per call, nothing per step) the adapting
layers it used are recorded: those among the model's layers (``keras_layers``, Keras's
stored lists, at most ``MAX_LAYERS``), and those a ``Dataset.map`` function of the data
given to fit calls: the mapped function itself, or a layer its code reads by a global
name or a closure cell (``ds.map(lambda x, y: (vectorize(x), y))``), walking the
dataset's ``_input_dataset`` links (at most ``MAX_LINKS``). Kept: a weak reference to
each layer and to the model, the number of the cell that ran the fit; at most
``MAX_KEPT`` layers.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    is_library_class,
    keras_layers,
    library_attribute,
)

ADAPTING_LAYERS = frozenset(
    {"Normalization", "TextVectorization", "StringLookup", "IntegerLookup", "Discretization"}
)
MAX_LAYERS = 200
MAX_LINKS = 64
MAX_KEPT = 64


def adapting_layer(value: Any) -> str | None:
    """The Keras preprocessing class (of ``ADAPTING_LAYERS``) ``value`` is an instance of."""
    try:
        for cls in type(value).__mro__:
            if cls.__name__ in ADAPTING_LAYERS and is_library_class(cls):
                return cls.__name__
    except Exception:
        return None
    return None


@dataclass
class LayerUse:
    """A preprocessing layer a fit used: through the model, or the data's map."""

    layer: weakref.ReferenceType[Any]
    model: weakref.ReferenceType[Any]
    cell: int
    through_data: bool
    state: int | None  # what the layer had learned at the fit (``learned_state``)
    # Data names a re-adapt note already told, never offered as the training data.
    told: set[str] = field(default_factory=set)


def learned_state(layer: Any) -> int | None:
    """A fingerprint of what an adapting layer has learned: a Normalization's stored mean
    and variance, a Discretization's bin boundaries, a lookup layer's table of tokens and
    ids; None when it cannot be read."""
    attributes = instance_dict(layer)
    if attributes is None:
        return None
    try:
        if "mean" in attributes and "variance" in attributes:
            parts = []
            for key in ("mean", "variance"):
                to_numpy = library_attribute(attributes[key], "numpy")
                if to_numpy is None:
                    return None
                parts.append(to_numpy().tobytes())
            return hash(tuple(parts))
        boundaries = attributes.get("bin_boundaries")
        if boundaries is not None:
            return hash(tuple(float(b) for b in boundaries))
        lookup = attributes.get("_lookup_layer", layer)  # TextVectorization's StringLookup
        table = (instance_dict(lookup) or {}).get("lookup_table")
        export = library_attribute(table, "export") if table is not None else None
        if export is not None:
            return _table_fingerprint(export())
    except Exception:
        return None
    return None


def _table_fingerprint(exported: Any) -> int | None:
    """A hash of a lookup table's exported keys and ids (TensorFlow's ``export``: ~2 ms
    for 20,000 tokens; Keras's ``get_vocabulary`` sorts them in Python, ~85 ms)."""
    keys, values = exported
    to_keys, to_values = library_attribute(keys, "numpy"), library_attribute(values, "numpy")
    if to_keys is None or to_values is None:
        return None
    key_array, value_array = to_keys(), to_values()
    if key_array.dtype.kind == "O":
        key_bytes = b"\0".join(
            k if type(k) is bytes else str(k).encode() for k in key_array.tolist()
        )
    else:
        key_bytes = key_array.tobytes()
    return hash((key_bytes, value_array.tobytes()))


def _function_layers(function: Any) -> list[Any]:
    """Adapting layers a map function is, or reads by global name or closure."""
    if adapting_layer(function) is not None:
        return [function]
    code = getattr(function, "__code__", None)
    if code is None:
        return []
    found: list[Any] = []
    namespace = getattr(function, "__globals__", None)
    if type(namespace) is dict:
        for name in code.co_names:
            value = namespace.get(name)
            if value is not None and adapting_layer(value) is not None:
                found.append(value)
    for cell in getattr(function, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if adapting_layer(value) is not None:
            found.append(value)
    return found


def _data_layers(data: Any) -> list[Any]:
    found: list[Any] = []
    current = data
    for _ in range(MAX_LINKS):
        attributes = instance_dict(current)
        if attributes is None:
            break
        wrapper = attributes.get("_map_func")
        if wrapper is not None:
            wrapped = instance_dict(wrapper) or {}
            found.extend(_function_layers(wrapped.get("_func")))
        current = attributes.get("_input_dataset")
        if current is None:
            break
    return found


class PreprocessingUse:
    """The adapting layers fits used, by the number of the cell each fit ran in."""

    def __init__(self) -> None:
        self.cell = 0
        self._uses: dict[int, LayerUse] = {}

    def begin_cell(self) -> None:
        self.cell += 1

    def fitted(self, model: Any, data: Any) -> None:
        found = [(layer, False) for layer in keras_layers(model, MAX_LAYERS)]
        found += [(layer, True) for layer in _data_layers(data)]
        for layer, through_data in found:
            if adapting_layer(layer) is None:
                continue
            if len(self._uses) >= MAX_KEPT and id(layer) not in self._uses:
                self._uses.pop(next(iter(self._uses)))
            self._uses[id(layer)] = LayerUse(
                weakref.ref(layer),
                weakref.ref(model),
                self.cell,
                through_data,
                learned_state(layer),
            )

    def used_before(self, layer: Any, this_cell: bool = False) -> LayerUse | None:
        """How a fit of an earlier cell (``this_cell``: or of this one) used ``layer``, if
        one did and the layer has learned something else since (adapted again on the
        same data, it has not)."""
        use = self._uses.get(id(layer))
        if use is None or use.layer() is not layer or use.cell > self.cell:
            return None
        if use.cell == self.cell and not this_cell:
            return None
        if use.state is not None and learned_state(layer) == use.state:
            return None
        return use
