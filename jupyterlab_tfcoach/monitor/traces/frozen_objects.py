"""Objects a traced function keeps: a name rebound after the trace is not seen.

A tf.function captures the TensorFlow and Keras objects its body reads from outside
(``w``, ``model``, ``opt``, a dataset) when it traces. A later cell that rebinds the name
(``opt = keras.optimizers.SGD(0.01)`` to change the learning rate, the model cell run again
to start over) leaves the trace with the old object, and calls that reuse the trace keep
training, updating or reading the old one without an error: the learner's new optimizer
never steps, the new model never trains.

At each trace the registry keeps a weak reference to each such object the body read
(``captured_objects``); after a cell that called the function without tracing it, a name
now bound to another object of the same kind is told (``rebound_text``). Only the types'
MROs are read (``type()`` never consults a hostile ``__class__``); nothing is called on
user objects.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.traces import body_scan as fx

# The class names (in TensorFlow's or Keras' own modules) whose instances hold state a
# trace captures, and the kind the advice is worded for. The first match in the MRO wins.
_STATEFUL_CLASSES = {
    "BaseOptimizer": "optimizer",
    "Optimizer": "optimizer",
    "OptimizerV2": "optimizer",
    "Model": "model",
    "Layer": "layer",
    "Metric": "metric",
    "Variable": "variable",
    "BaseResourceVariable": "variable",
    "DatasetV2": "dataset",
    "Module": "module",
}
_LIBRARY_PREFIXES = ("keras.", "tensorflow.", "tf_keras.")


def stateful_kind(value: Any) -> str | None:
    """``"optimizer"``, ``"model"``, ``"variable"``... for a TF/Keras stateful object."""
    try:
        mro = type(value).__mro__
    except Exception:
        return None
    for klass in mro:
        kind = _STATEFUL_CLASSES.get(getattr(klass, "__name__", ""))
        module = getattr(klass, "__module__", "") or ""
        if kind is not None and module.startswith(_LIBRARY_PREFIXES):
            return kind
    return None


@dataclass(frozen=True)
class CapturedObject:
    """One object a trace read: a weak reference (the trace keeps the object's state, a
    variable's resource, but not always the Python object, which may die when the name is
    rebound), its kind and type name."""

    ref: weakref.ReferenceType[Any]
    kind: str
    type_name: str


def captured_objects(facts: fx.CodeFacts, scope: fx.Scope) -> dict[tuple[str, str], CapturedObject]:
    """The stateful objects the body reads from outside, now."""
    found: dict[tuple[str, str], CapturedObject] = {}
    for read in facts.reads:
        if read[0] == fx.SELF and facts.self_name is None:
            continue
        present, value = scope.lookup(*read)
        if not present or fx.is_plain(value):
            continue
        kind = stateful_kind(value)
        if kind is None:
            continue
        try:
            ref = weakref.ref(value)
        except TypeError:
            continue
        found[read] = CapturedObject(ref, kind, type(value).__name__)
    return found


def rebound_object(
    key: tuple[str, str], captured: CapturedObject, scope: fx.Scope
) -> tuple[str, str, str, int] | None:
    """``(kind, old type name, new type name, new object's id)`` when the name now holds
    another object of the kind the trace captured; None when it holds the same one or
    something else."""
    present, value = scope.lookup(*key)
    if not present:
        return None
    # A dead reference means the name holds another object (even one that reuses the id).
    if captured.ref() is value:
        return None
    if stateful_kind(value) != captured.kind:
        return None
    return captured.kind, captured.type_name, type(value).__name__, id(value)


def rebound_text(
    owner: str, label: str, kind: str, old_type: str, new_type: str, call: str | None
) -> str:
    """The explanation and the fix for one rebound name, in the learner's names."""
    same = "another" if old_type == new_type else "a"
    head = (
        f"`{owner}` still uses the {old_type} that `{label}` held when it traced; `{label}` "
        f"is now {same} {new_type}. A tf.function keeps the variables, layers, models and "
        "optimizers its body read while tracing, and calls that reuse the trace "
        f"({call or 'as in this cell'}) do not see the name rebound: they "
    )
    if kind == "optimizer":
        return (
            f"{head}step the old optimizer, and the new one never steps. Keep one optimizer "
            f"and change it in place (`{label}.learning_rate.assign(0.001)` for a new learning "
            f"rate), or run the cell that defines `{owner}` again after creating the new one."
        )
    if kind == "variable":
        return (
            f"{head}read and update the old variable. Change the variable's value in place "
            f"(`{label}.assign(new_value)`), or run the cell that defines `{owner}` again."
        )
    if kind in ("model", "layer", "module"):
        return (
            f"{head}run and train the old {kind}'s weights, and the new one stays as it was "
            f"built. Run the cell that defines `{owner}` again after building the new {kind} "
            f"(or pass the {kind} to `{owner}` as an argument)."
        )
    return (
        f"{head}use the old {kind}. Run the cell that defines `{owner}` again after rebinding "
        f"`{label}`, or pass it to `{owner}` as an argument."
    )
