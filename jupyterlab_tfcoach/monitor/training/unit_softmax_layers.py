"""A softmax (or log-softmax) over an axis of size 1 in a model, told where the model is built.

Softmax divides each value by the sum over its axis; over an axis holding one value that
sum is the value itself, so the layer outputs exactly 1.0 (log-softmax: 0.0) whatever its
input, and no gradient flows back through it. Written as ``Conv2D(1, 1,
activation="softmax")`` for a binary mask, ``Dense(1, activation="softmax")`` for a yes/no
head, or ``Dense(1, activation="softmax")`` scoring time steps in a hand-made attention
pooling (where the softmax belongs on the time axis): the model builds and trains without
an error, and predicts the same thing for every input. ``fit_symptoms`` and
``compile_agreement`` tell the output layer's case at fit and compile; this module tells
it in the cell that builds the model (often cells earlier), and for every layer, not only
the last one, nor only ``Dense``.

After a completed cell that binds a Keras model to a name at its top level (an ``ast``
read of the cell's assignments; a cell without ``=`` costs one substring test), each new
model's layers (``keras_layers``, at most ``MAX_LAYERS``) are read from their ``__dict__``:
a layer whose ``activation`` is Keras's or TensorFlow's softmax/log_softmax and whose
output's last axis has size 1 (``units``, or a channels-last convolution's ``filters``,
``loss_agreement.output_width``), or a ``Softmax``/``Activation("softmax")`` layer right
after such a one-wide layer in a Sequential model. The note names the model, the call as
the learner wrote it (the latest cell holding a call with that activation and a first
argument of 1) and the function that built it; the fix is that call with ``sigmoid``.
A model the same cell compiles or fits is left to those checks. A softmax over several
units is silent. Each written call is told once (a second model
built by the same function, or loaded from a file, is not told again), and a told output
layer is not told again at fit (``compile_agreement``'s record).
"""

from __future__ import annotations

import ast
import sys
import weakref
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, keras_layers
from jupyterlab_tfcoach.monitor.syntax import parsed_source, subtree_nodes, walk_nodes
from jupyterlab_tfcoach.monitor.training import compile_agreement, user_code
from jupyterlab_tfcoach.monitor.training.loss_agreement import (
    RANGE_SECTION,
    activation_name,
    layer_output_width,
)

SECTION = RANGE_SECTION
MAX_LAYERS = 300
MAX_MODELS = 8  # models read per cell
_SOFTMAXES = frozenset({"softmax", "log_softmax"})
MAX_CAUSES = 200
_told: dict[int, weakref.ReferenceType[Any]] = {}
_causes: set[tuple[str, str]] = set()  # (the call as written, its function) already told


def _mro_names(obj: Any) -> list[str]:
    return [getattr(k, "__name__", "") for k in type(obj).__mro__]


def _is_keras_model(value: Any) -> bool:
    try:
        return any(
            k.__name__ == "Model" and str(k.__module__).startswith("keras")
            for k in type(value).__mro__
        )
    except Exception:
        return False


def _bound_names(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for leaf in subtree_nodes(target):
                if isinstance(leaf, ast.Name) and leaf.id not in names:
                    names.append(leaf.id)
    return names


def _softmax_layer(layers: list[Any]) -> tuple[Any, str] | None:
    """(the layer, "softmax" or "log_softmax") of the first softmax over one value."""
    previous_width: int | None = None
    for layer in layers:
        attributes = instance_dict(layer) or {}
        kinds = _mro_names(layer)
        activation = activation_name(attributes.get("activation"))
        if "Softmax" in kinds and "Activation" not in kinds:
            activation = "softmax"
            axis = attributes.get("axis", -1)
            if axis != -1 and axis != [-1]:
                activation = None  # another axis than the last: its size is unknown here
        width = layer_output_width(layer)
        if activation in _SOFTMAXES:
            own = width if width is not None else None
            if own is None and ("Activation" in kinds or "Softmax" in kinds):
                own = previous_width
            if own == 1:
                return layer, str(activation)
        if width is not None:
            previous_width = width
        elif not ("Activation" in kinds or "Dropout" in kinds or "InputLayer" in kinds):
            previous_width = None
    return None


def _written(
    namespace: Mapping[str, Any], source: str, activation: str, kind: str
) -> tuple[str, str, str]:
    """(the call as written, where, the function it is in) from the latest cell that
    holds a one-wide call with that activation; empty strings when none does."""
    sources, counts = user_code.cell_sources(namespace, source)
    for text, count in zip(sources, counts, strict=True):
        if activation not in text:
            continue
        tree = parsed_source(text)
        if tree is None:
            continue
        functions: list[tuple[ast.AST, str]] = [
            (node, node.name)
            for node in walk_nodes(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        ]
        for node in walk_nodes(tree):
            if not isinstance(node, ast.Call):
                continue
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            given = keywords.get("activation")
            if not (isinstance(given, ast.Constant) and given.value == activation):
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called != kind:
                continue
            width = keywords.get("units", keywords.get("filters"))
            width = width if width is not None else (node.args[0] if node.args else None)
            if not (isinstance(width, ast.Constant) and width.value == 1):
                continue
            written = ast.get_source_segment(text, node) or ""
            if "\n" in written or len(written) > 120:
                continue
            inside = [
                name
                for scope, name in functions
                if scope.lineno <= node.lineno <= (scope.end_lineno or scope.lineno)
            ]
            return written, user_code.cell_place(count, node.lineno), inside[-1] if inside else ""
    return "", "", ""


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """Notes for the models this cell bound whose layers hold a softmax over one value."""
    if "=" not in source or "keras" not in sys.modules:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    read = 0
    for name in _bound_names(tree):
        value = namespace.get(name)
        if not _is_keras_model(value):
            continue
        read += 1
        if read > MAX_MODELS:
            break
        if f"{name}.compile(" in source or f"{name}.fit(" in source:
            continue  # compile and fit in this cell tell it, with their own fix
        known = _told.get(id(value))
        if known is not None and known() is value:
            continue
        hit = _softmax_layer(keras_layers(value, MAX_LAYERS)[1:])
        if hit is None:
            continue
        layer, activation = hit
        for key in [k for k, ref in _told.items() if ref() is None]:
            del _told[key]
        _told[id(value)] = weakref.ref(value)
        kind = type(layer).__name__
        written = _written(namespace, source, activation, kind)
        # The cause is the line the learner wrote: a second model built by the same
        # function, or loaded from a file, is not told again.
        cause = (written[0], written[2]) if written[0] else (kind, activation)
        if cause in _causes:
            continue
        if len(_causes) >= MAX_CAUSES:
            _causes.clear()
        _causes.add(cause)
        compile_agreement.remember_softmax(value)
        found.append(_note(name, kind, activation, written))
    return found


def _note(name: str, kind: str, activation: str, written_at: tuple[str, str, str]) -> Note:
    written, place, function = written_at
    constant = "1.0" if activation == "softmax" else "0.0"
    if written:
        where = f"`{written}` ({place}"
        where += f", in `{function}`)" if function else ")"
    else:
        where = f"a {kind} layer applying {activation} to a single unit"
    text = (
        f"`{name}` has {where}: {activation} normalises over the last axis, and that axis "
        f"holds a single value, so every output of this {kind} is exactly {constant} "
        f"whatever the input and the weights, and no gradient flows back through it: the "
        f"model predicts the same thing for every input and nothing before it learns. "
        f"Nothing raises."
    )
    fixed = user_code.valid_code(written.replace(activation, "sigmoid")) if written else None
    if fixed:
        text += (
            f" For one yes/no output (a binary mask, a binary label) use `{fixed}` with a "
            f"binary loss;"
        )
    else:
        text += ' For one yes/no output use activation="sigmoid" with a binary loss;'
    text += (
        " for several classes give the layer one unit (or channel) per class and keep the "
        "softmax with a categorical loss."
    )
    return reports.note(text, SECTION)
