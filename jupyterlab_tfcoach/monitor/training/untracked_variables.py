"""A raw ``tf.Variable`` kept by a Keras 3 layer: fit never trains it.

Keras 3 tracks only its own variables (``self.add_weight``, ``keras.Variable``): a
``tf.Variable`` assigned to a layer's attribute in ``__init__`` or ``build`` is not in
``layer.trainable_weights`` nor the model's (measured on Keras 3.15: a ``Scale`` layer's
``self.s = tf.Variable(1.0)`` is 1.0 after fit while the Dense weights around it
learned). Nothing raises: the layer multiplies by a constant.

The symptom, after a ``fit`` that stepped the optimizer or changed a weight: a layer of
the user's own class (of no TensorFlow/Keras package) holds, in its instance ``__dict__``,
a trainable TensorFlow variable (``ResourceVariable``, its stored ``_trainable`` True)
that is not among the model's trainable variables (by id). The cause is named from the
class's ``__init``/``build`` source (``user_code.method_source``): the statement
``self.<name> = tf.Variable(<value>...)``; the fix is that statement written with
``self.add_weight``: ``tf.ones``/``tf.zeros`` of a shape become ``shape=<it>,
initializer="ones"/"zeros"``, any other value ``keras.initializers.Constant(<value>)``
with the variable's shape (Keras 3's ``Constant`` takes a scalar, array or tensor).

Cost: after a cell whose fit ran, one walk over the model's layers (at most
``MAX_LAYERS``, an instance ``__dict__`` read each) and, for a user layer holding such a
variable, one parse of its method (cached). Nothing here imports TensorFlow, reads a user
property or prints; every failure leaves the note out.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    is_library_class,
    keras_layers,
    keras_trainable_variables,
    library_attribute,
    stored,
)
from jupyterlab_tfcoach.monitor.traces.definitions import (
    remember_raw_variable,
    told_raw_variable,
)
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.fit_watch import FitRun

SECTION = "parameters-are-variables"
MAX_LAYERS = 500
MAX_WEIGHTS = 2000
RAW_VARIABLE_CLASSES = frozenset({"ResourceVariable", "UninitializedVariable"})
SHAPE_MAKERS = {"ones": "ones", "zeros": "zeros"}


@dataclass
class RawVariable:
    layer_class: type
    attribute: str
    shape: tuple[int, ...] | None


def _is_raw_variable(value: Any) -> bool:
    cls = type(value)
    module = getattr(cls, "__module__", "")
    return (
        cls.__name__ in RAW_VARIABLE_CLASSES
        and type(module) is str
        and module.startswith("tensorflow")
        and stored(value, "_trainable") is True
    )


def raw_variables(model: Any) -> list[RawVariable]:
    """Trainable ``tf.Variable`` attributes of the model's user-defined layers that Keras
    does not list among the model's trainable variables."""
    tracked = {id(v) for v in keras_trainable_variables(model, MAX_WEIGHTS) or ()}
    found: list[RawVariable] = []
    for layer in keras_layers(model, MAX_LAYERS):
        cls = type(layer)
        if is_library_class(cls):
            continue
        for attribute, value in list((instance_dict(layer) or {}).items())[:200]:
            if type(attribute) is not str or not _is_raw_variable(value):
                continue
            if id(value) in tracked:
                continue
            shape = library_attribute(value, "shape")
            try:
                dims: tuple[int, ...] | None = tuple(int(d) for d in shape)
            except Exception:
                dims = None
            found.append(RawVariable(cls, attribute, dims))
            if len(found) >= 5:
                return found
    return found


def _creation(cls: type, attribute: str) -> tuple[str, int, ast.Call, str, Any] | None:
    """(statement, line, the ``tf.Variable(...)`` call, method source, the method) that
    assigns ``self.<attribute>`` in the class's ``__init__`` or ``build``."""
    for klass in cls.__mro__:
        if is_library_class(klass):
            break
        for method_name in ("__init__", "build"):
            function = klass.__dict__.get(method_name)
            method = user_code.method_source(function) if function is not None else None
            if method is None:
                continue
            for node in ast.walk(method.tree):
                if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                    continue
                target = node.targets[0]
                if not (
                    isinstance(target, ast.Attribute)
                    and target.attr == attribute
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                    and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Attribute | ast.Name)
                    and (
                        node.value.func.attr
                        if isinstance(node.value.func, ast.Attribute)
                        else node.value.func.id
                    )
                    == "Variable"
                ):
                    continue
                text = ast.get_source_segment(method.source, node) or ""
                return (
                    " ".join(text.split()),
                    method.first_line + node.lineno - 1,
                    node.value,
                    method.source,
                    function,
                )
    return None


def _keras(namespace: Mapping[str, Any]) -> str:
    for name, spelled in (("keras", "keras"), ("tf", "tf.keras")):
        if isinstance(namespace.get(name), ModuleType):
            return spelled
    return "keras"


def add_weight_statement(
    attribute: str, call: ast.Call, source: str, shape: tuple[int, ...] | None, keras: str
) -> str | None:
    """``self.<attribute> = self.add_weight(...)`` for what ``tf.Variable(...)`` was given."""
    value = call.args[0] if call.args else None
    for keyword in call.keywords:
        if keyword.arg == "initial_value":
            value = keyword.value
    if value is None:
        return None
    if isinstance(value, ast.Call) and value.args:
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in SHAPE_MAKERS:
            size = ast.get_source_segment(source, value.args[0])
            if size:
                text = (
                    f"self.{attribute} = self.add_weight(shape={size}, "
                    f'initializer="{SHAPE_MAKERS[name]}")'
                )
                return user_code.valid_code(text)
    if shape is None:
        return None
    written = ast.get_source_segment(source, value)
    if not written:
        return None
    dims = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    text = (
        f"self.{attribute} = self.add_weight(shape={dims}, "
        f"initializer={keras}.initializers.Constant({' '.join(written.split())}))"
    )
    return user_code.valid_code(text)


def untracked_variable_notes(
    fits: list[FitRun], namespace: Mapping[str, Any], execution_count: int | None = None
) -> list[Note]:
    """One note per user layer class whose raw ``tf.Variable`` a fit in this cell left
    untrained."""
    notes: list[Note] = []
    told: set[tuple[int, str]] = set()
    for run in fits:
        try:
            model = run.model()
            trained = run.optimizer_stepped or any(w.changed for w in run.weights)
            if model is None or not trained:
                continue
            changed = sum(1 for w in run.weights if w.changed)
            for raw in raw_variables(model):
                key = (id(raw.layer_class), raw.attribute)
                if key in told:
                    continue
                told.add(key)
                note = _note(raw, run, model, changed, namespace)
                # Told here in full: a later fit, or the class's definition read after
                # this cell, points back to this cell.
                remember_raw_variable(raw.layer_class, raw.attribute, execution_count)
                if note is not None:
                    notes.append(note)
        except Exception:
            continue
    return notes


def _note(
    raw: RawVariable, run: FitRun, model: Any, changed: int, namespace: Mapping[str, Any]
) -> Note | None:
    cls_name = getattr(raw.layer_class, "__name__", "the layer")
    name = name_bound_to(id(model), namespace)
    who = f"`{name}`" if name else "the model"
    if told_raw_variable(raw.layer_class, raw.attribute)[0]:
        # Told where the class is defined (or by an earlier fit): one entry per cause.
        return None
    listed = f"`{name}.trainable_weights`" if name else "the model's trainable_weights"
    found = _creation(raw.layer_class, raw.attribute)
    # The class is usually defined in an earlier cell: "cell In[3], line 7" finds it.
    where = (
        f" ({user_code.place_of(found[4], found[1], namespace)}: `{found[0]}`)"
        if found is not None
        else ""
    )
    weights = f"{changed} of {who}'s weights changed" if changed else f"{who} trained"
    text = (
        f"`{cls_name}` keeps `self.{raw.attribute}` as a raw `tf.Variable`{where}. Keras 3 "
        f"tracks only the weights a layer makes with `self.add_weight`: this one is not "
        f"in {listed}, so fit computes no gradient for it and never updates it. "
        f"{weights} in fit, `self.{raw.attribute}` kept its initial value (no error: the "
        f"layer uses it as a constant)."
    )
    fix = (
        add_weight_statement(raw.attribute, found[2], found[3], raw.shape, _keras(namespace))
        if found is not None
        else None
    )
    if fix:
        text += f" Create it as a weight, then build the model and fit again: `{fix}`."
    else:
        text += (
            f" Create it with `self.add_weight(shape=..., initializer=...)` in "
            f"`{cls_name}.build` or `__init__`, then build the model and fit again."
        )
    return reports.note(text, SECTION)
