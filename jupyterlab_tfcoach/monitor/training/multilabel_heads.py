"""A softmax output over several units when the learner's labels are multi-hot, told where
the model is built.

Multi-label targets (rows of 0/1 with several 1s: the tags of an example) need one yes/no
per output: a sigmoid each and binary cross-entropy. A softmax makes the outputs compete
and sum to 1, so the model cannot say yes to two labels at once; nothing raises, the
shapes fit. ``loss_agreement`` tells it at ``fit``/``evaluate`` (it sees the labels
given); this module tells it in the cell that builds the model, cells earlier, from the
label arrays the learner already holds.

After a completed cell that binds a Keras model at its top level (``unit_softmax_layers``'s
reading; a cell without ``=`` or ``softmax`` costs two substring tests) and neither
compiles nor fits it (those checks tell it with the labels they are given): the model's
last layer applies softmax over ``k > 1`` units (``loss_agreement.output_width``), and a
name of the namespace that reads as labels (``y``..., ``labels``, ``targets``, ``tags``;
at most ``MAX_NAMES`` names looked at) holds a NumPy array or eager tensor of shape
``(n, k)``, all 0/1, with ``MIN_SHARE`` or more of its rows (first ``MAX_ROWS``) holding
several 1s. One-hot labels (one 1 a row), or labels of another width, stay silent. The fix
is the output call as written in this cell with ``sigmoid``, and binary cross-entropy.
Each model is told once.
"""

from __future__ import annotations

import ast
import re
import sys
import weakref
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, keras_layers
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.loss_agreement import (
    LABELS_SECTION,
    activation_name,
    layer_output_width,
)
from jupyterlab_tfcoach.monitor.training.unit_softmax_layers import (
    _bound_names,
    _is_keras_model,
)
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = LABELS_SECTION
MAX_LAYERS = 300
MAX_NAMES = 500
MAX_ROWS = 20_000
MIN_SHARE = 0.05  # rows with several 1s: a stray duplicate is not a multi-label set
_LABEL_NAME = word_gate(
    r"^(y|labels?|targets?|tags?)($|_|[A-Z0-9])|_(y|labels?|targets?|tags?)(_|$)", re.I
)
_told: dict[int, weakref.ReferenceType[Any]] = {}


def _multi_hot(value: Any, width: int) -> tuple[int, int] | None:
    """(rows with several 1s, rows read) of a 0/1 array of shape (n, width)."""
    module = str(getattr(type(value), "__module__", ""))
    numpy = sys.modules.get("numpy")
    if numpy is None or not module.startswith(("numpy", "tensorflow")):
        return None
    try:
        shape = tuple(int(d) for d in value.shape)
        if len(shape) != 2 or shape[1] != width or shape[0] < 2:
            return None
        rows = numpy.asarray(value[:MAX_ROWS])
        if not bool(numpy.all((rows == 0) | (rows == 1))):
            return None
        several = int(numpy.sum(rows.sum(axis=1) > 1))
        if several < max(2, MIN_SHARE * rows.shape[0]):
            return None
        return several, int(rows.shape[0])
    except Exception:
        return None


def _labels(namespace: Mapping[str, Any], width: int) -> tuple[str, int, int] | None:
    """The first multi-hot label array of that width the learner holds (a training one
    first)."""
    found: list[tuple[str, int, int]] = []
    for index, (name, value) in enumerate(list(namespace.items())):
        if index >= MAX_NAMES * 4:
            break
        if name.startswith("_") or not _LABEL_NAME.search(name):
            continue
        hit = _multi_hot(value, width)
        if hit is not None:
            found.append((name, *hit))
        if len(found) >= MAX_NAMES:
            break
    if not found:
        return None
    training = [f for f in found if "tr" in f[0].lower()]
    return (training or found)[0]


def _written_head(source: str, width: int) -> str | None:
    """The output call as written in this cell: ``...(k, activation="softmax")``."""
    tree = parsed_source(source)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        given = next((k.value for k in node.keywords if k.arg == "activation"), None)
        if isinstance(given, ast.Constant) and given.value == "softmax":
            written = ast.get_source_segment(source, node) or ""
            if written and "\n" not in written and len(written) <= 120:
                return written
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "=" not in source or "softmax" not in source or "keras" not in sys.modules:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for name in _bound_names(tree):
        value = namespace.get(name)
        if not _is_keras_model(value):
            continue
        if f"{name}.compile(" in source or f"{name}.fit(" in source:
            continue  # compile and fit in this cell tell it with the labels they get
        known = _told.get(id(value))
        if known is not None and known() is value:
            continue
        layers = keras_layers(value, MAX_LAYERS)
        if not layers:
            continue
        attributes = instance_dict(layers[-1]) or {}
        width = layer_output_width(layers[-1])
        if activation_name(attributes.get("activation")) != "softmax" or not width or width < 2:
            continue
        labels = _labels(namespace, width)
        if labels is None:
            continue
        for key in [k for k, ref in _told.items() if ref() is None]:
            del _told[key]
        _told[id(value)] = weakref.ref(value)
        return [_note(name, width, labels, _written_head(source, width))]
    return []


def _note(name: str, width: int, labels: tuple[str, int, int], written: str | None) -> Note:
    label, several, rows = labels
    text = (
        f"`{name}` ends with a softmax over {width} units, but `{label}` is multi-hot: "
        f"{several} of {rows} rows hold more than one 1 (several labels per example). "
        f"Softmax makes the {width} outputs compete and sum to 1, so the model cannot say "
        "yes to two labels at once, whatever it learns; nothing raises, the shapes fit. "
        "Each label is its own yes/no question: one sigmoid per output and binary "
        "cross-entropy."
    )
    fixed = user_code.valid_code(written.replace("softmax", "sigmoid")) if written else None
    if fixed:
        text += f' Build the model with `{fixed}` and compile it with loss="binary_crossentropy".'
    else:
        text += (
            ' Give the last layer activation="sigmoid" and compile with loss="binary_crossentropy".'
        )
    return reports.note(text, SECTION)
