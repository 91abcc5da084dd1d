"""A model built to reproduce data whose output activation cannot reach that data, told in
the cell that builds or compiles it.

An autoencoder is trained to output its own input; a GAN's generator (or a decoder) to
output points like the real data. When the last layer's activation bounds the output
(``relu`` from 0 up, ``tanh`` in (-1, 1), ``sigmoid`` in (0, 1)) and the data lies
outside (standardised features with negatives, a ring of radius 2), the model can never
produce those values: the outputs pile up at the bound and the reconstruction or the
generated samples stay wrong whatever it learns. Nothing raises. ``training/
loss_agreement.py`` and ``unreachable_targets.py`` tell it once ``fit`` or a loss gives
the targets; a generator is never fitted that way, and an autoencoder's mistake is in the
cell that builds it, so this check reads the data the model is made to reproduce as soon
as the model exists.

After a completed cell that assigns or compiles a Keras model (``M = ...`` or
``M.compile(...)`` at the top level; a cell that also calls ``.fit(`` is left to fit's
checks), ``M`` (Sequential or functional, one input and one output, read from what Keras
stores: nothing is run) is a model that reproduces data when:

- its output has its input's shape (an autoencoder), its last activation is not a softmax,
  a sigmoid only over inputs of two or more axes (images; a sigmoid over a flat vector of
  as many units may be a multi-label head), and its compiled loss, if any, is not a class
  cross-entropy; or
- its name (the Python name or Keras's ``name``) has a word ``gen``, ``generator``,
  ``decoder`` or ``autoencoder`` (the learner said what it makes), and its activation is
  not a softmax.

The data it reproduces is the newest array of the output's shape per example: the
history ``In`` is read from this cell back (at most ``HISTORY_CELLS`` cells), the last
top-level assignment first, for a name holding a float NumPy array or eager tensor with
at least two rows. When ``MIN_SHARE`` of an even sample of ``MAX_SAMPLE`` of its values
lies outside the activation's range, the note names the model, its last layer as
written, the activation's range, the data and its range; fix: the last layer with
``activation=None`` (a linear output), or the data scaled into the range.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from typing import Any, cast

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import NUMBERS, held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import contained_values, stored
from jupyterlab_tfcoach.monitor.symptoms.unreachable_targets import (
    MAX_SAMPLE,
    MAX_VALUES,
    MIN_SHARE,
    _Ending,
    _is_model,
    outside_reach,
)
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.loss_agreement import (
    OUTPUT_RANGES,
    RANGE_SECTION,
    _output_of,
    _segment,
    _with_keyword,
    _written_layer_node,
    loss_identity,
)
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = RANGE_SECTION
MAX_CELL_CHARS = 50_000
HISTORY_CELLS = 20
HISTORY_CHARS = 50_000
_MAKERS = frozenset({"gen", "generator", "decoder", "autoencoder"})
_WORDS = re.compile(r"[A-Za-z][a-z]*|[A-Z]+(?![a-z])")
_BUILDS = word_gate(r"\b(?:Sequential|Model)\s*\(|\.compile\s*\(")


def _words(name: str) -> set[str]:
    return {word.lower() for part in name.split("_") for word in _WORDS.findall(part)}


def _shapes(model: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """(input shape, output shape) of one example, from the graph Keras stores."""
    graph = model if stored(model, "_inputs") is not None else stored(model, "_functional")
    if graph is None:
        return None
    inputs = contained_values(stored(graph, "_inputs"), sequences_only=True) or []
    outputs = contained_values(stored(graph, "_outputs"), sequences_only=True) or []
    if len(inputs) != 1 or len(outputs) != 1:
        return None
    shapes = [stored(inputs[0], "_shape"), stored(outputs[0], "_shape")]
    if not all(type(shape) is tuple and len(shape) >= 2 for shape in shapes):
        return None
    return tuple(shapes[0][1:]), tuple(shapes[1][1:])


def _class_loss(model: Any) -> bool:
    """The model was compiled with a class cross-entropy (its targets are labels)."""
    identity = loss_identity(stored(model, "loss"))
    return identity is not None and "categorical" in identity[0]


def _model_names(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            names += [t.id for t in statement.targets if isinstance(t, ast.Name)]
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            func = statement.value.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "compile"
                and isinstance(func.value, ast.Name)
            ):
                names.append(func.value.id)
    return list(dict.fromkeys(names))


def _data(shape: tuple[Any, ...], namespace: Mapping[str, Any], source: str) -> tuple[str, Any]:
    """(name, values) of the newest array assigned with ``shape`` per example."""
    sources, _counts = user_code.cell_sources(namespace, source)
    for text in sources[:HISTORY_CELLS]:
        if len(text) > HISTORY_CHARS:
            continue
        tree = parsed_source(text)
        if tree is None:
            continue
        for statement in reversed(tree.body):
            if not isinstance(statement, ast.Assign):
                continue
            names: list[str] = []
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    names.append(target.id)
                elif isinstance(target, ast.Tuple):
                    names += [e.id for e in target.elts if isinstance(e, ast.Name)]
            for name in names:
                values = _float_rows(namespace.get(name), shape)
                if values is not None:
                    return name, values
    return "", None


def _float_rows(value: Any, shape: tuple[Any, ...]) -> Any | None:
    numpy = sys.modules.get("numpy")
    if numpy is None or value is None:
        return None
    if type(value) is not numpy.ndarray:
        if "EagerTensor" not in type(value).__name__:
            return None
        value = held_array(value, MAX_VALUES, NUMBERS)
        if value is None:
            return None
    if value.dtype.kind != "f" or value.ndim != len(shape) + 1 or value.shape[0] < 2:
        return None
    if tuple(value.shape[1:]) != shape or value.size > MAX_VALUES:
        return None
    flat = value.reshape(-1)
    return flat[:: max(1, flat.size // MAX_SAMPLE)][:MAX_SAMPLE].astype("float64")


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or ".fit(" in source or _BUILDS.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for name in _model_names(tree):
        note = _note(name, source, namespace)
        if note is not None:
            return [note]
    return []


def _note(name: str, source: str, namespace: Mapping[str, Any]) -> Note | None:
    model = namespace.get(name)
    if not _is_model(model):
        return None
    shapes = _shapes(model)
    output = _output_of(model)
    if shapes is None or output is None:
        return None
    last, index, units, activation = output
    if activation not in OUTPUT_RANGES or activation == "softmax":
        return None
    inputs, outputs = shapes
    keras_name = stored(model, "name")
    named = _words(name) | (_words(keras_name) if type(keras_name) is str else set())
    if inputs == outputs and not _class_loss(model):
        if activation == "sigmoid" and len(inputs) < 2 and not named & _MAKERS:
            return None
        role = f"reproduces its input (its output has the input's shape {outputs})"
    elif named & _MAKERS:
        role = f"generates data (its name says so) of shape {outputs} per example"
    else:
        return None
    data_name, values = _data(outputs, namespace, source)
    if values is None:
        return None
    share, reach = outside_reach(values, activation)
    if share < MIN_SHARE:
        return None
    sources, _counts = user_code.cell_sources(namespace, source)
    written = _written_layer_node(sources, last, cast(Any, _Ending(units, activation)))
    layer_text = f"`{_segment(written[1], written[0])}`" if written else f"its last layer ({units})"
    where = f"`{name}.layers[{index}]`, " if index is not None else ""
    text = (
        f"`{name}` {role}, but it ends with {where}{layer_text}: activation {activation!r} "
        f"only outputs values in {reach}, and the data of that shape, `{data_name}`, runs "
        f"from {values.min():g} to {values.max():g} ({share:.0%} of the values sampled lie "
        f"outside). Trained to produce such values, `{name}` can never reach them: its "
        "outputs pile up at the bound and the saturated activation passes almost no "
        "gradient. Nothing raises."
    )
    if written:
        fixed = _with_keyword(written[0], written[1], "activation", 1, "None")
        text += (
            f" A linear output reaches any value (or scale `{data_name}` into {reach}). "
            f"Fix: build `{name}` with `{fixed}` as its last layer, then compile and train "
            "it again."
        )
    else:
        text += (
            " Give its last layer activation=None (a linear output), or scale the data into "
            f"{reach}, then compile and train it again."
        )
    return reports.note(text, SECTION)
