"""``training=True`` written as a literal in a custom Keras layer's own ``call``.

``self.drop(x, training=True)`` inside ``call`` keeps Dropout (or BatchNormalization's
batch statistics, a noise layer) in training mode in ``predict`` and ``evaluate`` as well:
two predictions of one input differ, validation figures are noisy. Nothing raises.
``fit_symptoms.py`` tells it when predict or evaluate runs a model whose own class does
it; a custom *layer* (inside a functional model, or called on its own) was never read.

Told in the cell that defines the layer's class, from its source: after a completed cell
whose source holds ``training=True`` and ``class`` (one substring test otherwise), each
class the cell defines (bound in the namespace) that extends a Keras layer (not a model:
``fit_symptoms.py`` tells those) and has its own ``call`` is read by
``user_code.forced_training_calls`` (once per class object). The note names the class,
each call forcing the flag and what each layer it names does in training mode
(``fit_symptoms.training_mode_effects``, from an instance of the class in the namespace
when there is one), and the fix: pass the ``training`` argument through (and give
``call`` that parameter when it has none).

Silent: a subclass of a Keras dropout or noise layer (``Dropout``, ``GaussianDropout``,
``GaussianNoise``, ``AlphaDropout``, the ``SpatialDropout`` layers) whose forced calls are
all its own base's ``call`` (``super().call(inputs, training=True)``): a layer made to
drop at inference too, the Monte Carlo dropout layer, built so on purpose.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training import model_source, user_code
from jupyterlab_tfcoach.monitor.training.fit_symptoms import (
    TRAINING_FLAG_SECTION,
    _attribute_path,
    training_mode_effects,
)

SECTION = TRAINING_FLAG_SECTION
MAX_CELL_CHARS = 50_000
MAX_CLASSES = 8
# Keras layers whose only training-mode behaviour is random dropping or noise: a subclass
# that forces its own base into training mode is an always-on sampling layer.
_RANDOM_BASES = frozenset({"Dropout", "GaussianDropout", "GaussianNoise", "AlphaDropout"})


def _keras_layer_class(cls: Any) -> bool:
    """A Keras layer that is not a model: a model's own ``call`` is read by
    ``fit_symptoms.py`` when predict or evaluate runs it (a cell that defines and fits it
    is right to train in training mode)."""
    try:
        library = [k.__name__ for k in type.mro(cls) if is_library_class(k)]
    except Exception:
        return False
    return "Layer" in library and "Model" not in library


def _always_on_sampler(cls: type, callees: list[str]) -> bool:
    """A dropout or noise layer's subclass whose forced calls are all its base's own
    ``call`` (``super().call(x, training=True)``): Monte Carlo dropout, on purpose."""
    try:
        library = {k.__name__ for k in type.mro(cls) if is_library_class(k)}
    except Exception:
        return False
    if not library & _RANDOM_BASES:
        return False
    return all(_base_call(callee, library) for callee in callees)


def _base_call(callee: str, library: set[str]) -> bool:
    """``super().call`` or ``<a library base>.call`` (``keras.layers.Dropout.call``)."""
    written = callee.replace(" ", "")
    if written.startswith("super(") and written.endswith(").call"):
        return True
    parts = written.split(".")
    return len(parts) >= 2 and parts[-1] == "call" and parts[-2] in library


def _instance_of(cls: type, namespace: Mapping[str, Any]) -> Any | None:
    for value in list(namespace.values()):
        if type(value) is cls:
            return value
    return None


class ForcedTrainingCheck:
    """Remembers (weakly) the classes already read, so a class is told once."""

    def __init__(self) -> None:
        self._read: weakref.WeakSet[type] = weakref.WeakSet()

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if "training=True" not in source or "class " not in source:
            return []
        if len(source) > MAX_CELL_CHARS:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        found: list[Note] = []
        names = [n.name for n in tree.body if isinstance(n, ast.ClassDef)][:MAX_CLASSES]
        for name in names:
            cls = namespace.get(name)
            if not isinstance(cls, type) or cls in self._read or not _keras_layer_class(cls):
                continue
            self._read.add(cls)
            note = _note(cls, namespace)
            if note is not None:
                found.append(note)
        return found


def _note(cls: type, namespace: Mapping[str, Any]) -> Note | None:
    function = model_source.own_function(cls, "call")
    if function is None:
        return None
    forced = user_code.forced_training_calls(function)
    if not forced or _always_on_sampler(cls, [call.callee for call in forced]):
        return None
    method = user_code.method_source(function)
    has_flag = method is not None and "training" in user_code.keyword_parameters(method)
    instance = _instance_of(cls, namespace)
    name = cls.__name__
    callees: list[str] = []
    effects: list[str] = []
    fixes: list[str] = []
    for call in forced:
        if call.callee not in callees:
            callees.append(call.callee)
        if instance is not None:
            layer = _attribute_path(instance, call.callee)
            for effect in training_mode_effects(layer, instance) if layer is not None else []:
                if effect not in effects:
                    effects.append(effect)
        fixed = user_code.valid_code(call.statement.replace("training=True", "training=training"))
        if fixed:
            fixes.append(f"`{fixed}`")
    first = forced[0]
    where = user_code.place_of(function, first.line, namespace)
    listed = " and ".join(f"`{c}`" for c in callees[:4])
    does = (
        "; ".join(effects)
        if effects
        else f"{listed} behave{'s' if len(callees) == 1 else ''} as in training, not as at "
        "inference"
    )
    add = "" if has_flag else "; give `call` a `training=None` parameter (Keras fills it in)"
    fix = (
        f"Pass the flag through: {', '.join(fixes[:4])}{add}."
        if fixes
        else "Pass the flag through."
    )
    text = (
        f"`{name}.call` passes `training=True` to {listed} ({where}: `{first.statement}`"
        f"{' and more' if len(forced) > 1 else ''}), so they run in training mode in "
        f"predict and evaluate too, and two predictions of one input differ: {does}. {fix}"
    )
    return reports.note(text, SECTION)
