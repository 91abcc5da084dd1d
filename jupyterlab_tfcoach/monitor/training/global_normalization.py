"""A ``Normalization(axis=None)`` layer fit on features of very different scales.

``keras.layers.Normalization(axis=None)`` learns one mean and one variance over every
value it is adapted on, where the default (``axis=-1``) learns one per feature. On an
``(N, F)`` table whose columns are on very different scales, the single statistics keep
those scales: the small-scale features stay nearly constant and barely train. It is the
layer spelling of ``(X - X.mean()) / X.std()`` (``symptoms/whole_array_scaling.py``).
Nothing raises.

Read around each ``fit`` (``fit_watch``'s hook, once per call, nothing per step): among
the model's layers (``keras_layers``, at most ``MAX_LAYERS``), an adapted
``Normalization`` whose stored ``axis`` is ``()`` (Keras 3.15 stores ``axis=None`` so)
and whose stored mean is a single number, while fit's ``x`` is a float NumPy array or
tensor ``(N, F)``, 2 <= F <= 100, whose columns' spreads (read on at most 10,000 rows)
differ ``SPREAD_RATIO`` times or more (``whole_array_scaling.uneven_spreads``). The note
names the layer, the model and the columns' spreads; fix: the layer's construction
statement from the cell history ``In`` without ``axis=None``, then adapt it again and
build and compile the model again.
"""

from __future__ import annotations

import ast
import sys
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    is_library_class,
    keras_layers,
    library_attribute,
)
from jupyterlab_tfcoach.monitor.symptoms.whole_array_scaling import uneven_spreads
from jupyterlab_tfcoach.monitor.syntax import history_assignments

SECTION = "preprocessing-adapt"
MAX_LAYERS = 50
MAX_FEATURES = 100
MAX_ROWS_READ = 10_000
_HISTORY_CELLS = 100
_HISTORY_CHARS = 50_000


@dataclass
class GlobalNormalization:
    layer: weakref.ReferenceType[Any]
    model: weakref.ReferenceType[Any]
    data_id: int
    spreads: tuple[float, int, float, int]  # narrowest, its column, widest, its column


def _is_normalization(layer: Any) -> bool:
    try:
        return any(
            k.__name__ == "Normalization" and is_library_class(k) for k in type(layer).__mro__
        )
    except Exception:
        return False


def _column_spreads(data: Any) -> list[float] | None:
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    values = data
    if type(values) is not numpy.ndarray:
        to_numpy = library_attribute(data, "numpy")
        shape = getattr(data, "shape", None)
        if to_numpy is None or shape is None or len(tuple(shape)) != 2:
            return None
        values = to_numpy()
    if values.ndim != 2 or values.dtype.kind != "f":
        return None
    rows, features = values.shape
    if rows < 2 or not 2 <= features <= MAX_FEATURES:
        return None
    if rows > MAX_ROWS_READ:
        values = values[:: rows // MAX_ROWS_READ + 1]
    with numpy.errstate(all="ignore"):
        return [float(s) for s in values.std(axis=0)]


def global_normalization(model: Any, data: Any) -> GlobalNormalization | None:
    """The model's ``Normalization(axis=None)`` when fit's inputs have columns on very
    different scales."""
    layer = None
    for candidate in keras_layers(model, MAX_LAYERS)[1:]:
        if not _is_normalization(candidate):
            continue
        attributes = instance_dict(candidate) or {}
        if attributes.get("axis") == () and attributes.get("input_mean") is None:
            layer = candidate
            break
    if layer is None:
        return None
    spreads = _column_spreads(data)
    if spreads is None:
        return None
    uneven = uneven_spreads(spreads)
    if uneven is None:
        return None
    return GlobalNormalization(weakref.ref(layer), weakref.ref(model), id(data), uneven)


def _construction(name: str, namespace: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(statement, fixed)``: the latest ``name = ...Normalization(..., axis=None)`` of
    the cell history, and it without ``axis=None``."""
    for statement, source in history_assignments(name, namespace, _HISTORY_CELLS, _HISTORY_CHARS):
        call = statement.value
        if not isinstance(call, ast.Call) or statement.lineno != statement.end_lineno:
            continue
        keyword = next((k for k in call.keywords if k.arg == "axis"), None)
        written = ast.get_source_segment(source, statement)
        if keyword is None or written is None:
            return None
        kept = [ast.get_source_segment(source, a) for a in call.args]
        kept += [ast.get_source_segment(source, k) for k in call.keywords if k is not keyword]
        if any(part is None for part in kept):
            return None
        func = ast.get_source_segment(source, call.func)
        return written, f"{name} = {func}({', '.join(p for p in kept if p)})"
    return None


def global_normalization_notes(
    records: list[GlobalNormalization], namespace: Mapping[str, Any]
) -> list[Note]:
    notes: list[Note] = []
    told: set[int] = set()
    for record in records:
        layer, model = record.layer(), record.model()
        if layer is None or model is None or id(layer) in told:
            continue
        told.add(id(layer))
        layer_name = name_bound_to(id(layer), dict(namespace))
        model_name = name_bound_to(id(model), dict(namespace)) or "the model"
        data = name_bound_to(record.data_id, dict(namespace))
        low, low_at, high, high_at = record.spreads
        who = f"`{layer_name}`" if layer_name else "a `Normalization(axis=None)` layer"
        given = f"`{data}`" if data else "the inputs"
        text = (
            f"{who} in `{model_name}` was built with `axis=None`: it learned one mean and "
            f"one variance over all the values it was adapted on, but {given}, given to "
            f"`{model_name}.fit`, has features on very different scales (column "
            f"{low_at} spreads {low:.2g}, column {high_at} {high:.2g}, {high / low:,.0f} "
            "times as much). One scale for all of them leaves the small-scale features "
            "nearly constant, and they barely train. Nothing raises."
        )
        found = _construction(layer_name, namespace) if layer_name else None
        if found is not None and data:
            text += (
                f" Normalise each feature on its own (the default, `axis=-1`): `{found[1]}` "
                f"in place of `{found[0]}`, then `{layer_name}.adapt({data})`, and build, "
                f"compile and fit `{model_name}` again."
            )
        else:
            text += (
                " Normalise each feature on its own: build the layer without `axis=None` "
                "(the default, `axis=-1`), adapt it again, and build, compile and fit the "
                "model again."
            )
        notes.append(reports.note(text, SECTION))
    return notes
