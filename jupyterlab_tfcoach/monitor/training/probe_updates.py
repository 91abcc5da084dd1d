"""A "probe" (or "frozen" feature extractor) whose inner model ``fit`` changed anyway.

A linear probe measures what a trained model's features are worth: a new head is trained
on top of the model while the model itself stays fixed. Built as ``keras.Sequential([
encoder, layers.Dense(k)])`` with ``encoder`` still trainable, ``fit`` trains both: the
encoder is fine-tuned, its learned features are overwritten, and the accuracy measures
something else than the cell says. Nothing raises.

After each ``fit`` that returned (``fit_watch.py`` compared every trainable weight before
and after), read for a fitted Keras model holding, among its own layers, another Keras model
bound to a name in the namespace (``encoder``), some of whose trainable weights changed,
beside at least one other layer with weights (the head). Told only when the cell's words say
the inner model should not change: a word of ``FIXED_WORDS`` (``probe``, ``frozen``,
``freeze``, ``untouched``, ``extractor``) among the words of its identifiers, comments and
strings, and none of ``TRAINED_WORDS`` (``finetune``, ``fine``-``tune``, ``unfreeze``),
which say it is meant to train, and no ``<model>.layers[<i>].trainable = False`` in the cell
(a freeze aimed by index: ``empty_freezes.py`` names the layer it missed). The note names
the inner model, how many of its weights changed, the word read, and the fix:
``encoder.trainable = False`` before ``compile`` (after restoring the weights this fit
already changed), then fit again.

Cost: nothing unless a fit ran in the cell; then a look at the fitted model's layer list
(Keras's stored list, no user property) and a regular expression over the cell's text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    contained_values,
    keras_trainable_variables,
    stored,
)
from jupyterlab_tfcoach.monitor.syntax import method_calls
from jupyterlab_tfcoach.monitor.training.fit_watch import FitRun
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "trainable-weights"
MAX_LAYERS = 200
MAX_WEIGHTS = 10_000
FIXED_WORDS = frozenset({"probe", "probing", "frozen", "freeze", "untouched", "extractor"})
TRAINED_WORDS = frozenset({"finetune", "finetuning", "finetuned", "unfreeze", "unfrozen"})
_WORD = re.compile(r"[a-z]+")
# ``transfer.layers[0].trainable = False``: a freeze aimed by index, read by empty_freezes.
_INDEXED_FREEZE = word_gate(r"\.layers\s*\[\s*-?\d+\s*\]\s*\.trainable\s*=\s*False")


def _words(text: str) -> list[str]:
    """The lower-case words of ``text``, identifiers split at underscores and digits;
    ``fine-tune``/``fine_tune``/``fine tuning`` read as ``finetune``."""
    lowered = re.sub(r"fine[\s_-]*tun", "finetun", text.lower())
    return _WORD.findall(lowered)


def _is_model(value: Any) -> bool:
    try:
        names = {k.__name__ for k in type(value).__mro__}
    except Exception:
        return False
    return "Model" in names and "Layer" in names


def _own_layers(model: Any) -> list[Any]:
    """The model's own layers as Keras stores them (Sequential, Functional)."""
    found = contained_values(stored(model, "_layers"), sequences_only=True)
    if not found:
        found = contained_values(stored(model, "_operations"), sequences_only=True)
    return list(found or [])[:MAX_LAYERS]


def _trainable_ids(layer: Any) -> set[int]:
    variables = keras_trainable_variables(layer, MAX_WEIGHTS)
    return {id(v) for v in variables or []}


def probe_notes(fits: list[FitRun], namespace: Mapping[str, Any], cell_source: str) -> list[Note]:
    """One note per fitted model whose named inner model changed while the cell says it
    is a probe or frozen."""
    notes: list[Note] = []
    words: list[str] | None = None
    told: set[int] = set()
    for run in fits:
        try:
            if not run.compared or run.model_id in told:
                continue
            changed = {w.variable_id for w in run.weights if w.changed}
            model = run.model()
            if not changed or model is None:
                continue
            inner: list[tuple[Any, set[int]]] = []
            head = False
            for layer in _own_layers(model):
                ids = _trainable_ids(layer)
                if not ids:
                    continue
                if _is_model(layer) and ids & changed:
                    inner.append((layer, ids))
                else:
                    head = True
            if not inner or not head:
                continue
            if _INDEXED_FREEZE.search(cell_source):
                return []  # ``empty_freezes.py`` names the layer the freeze missed
            if words is None:
                words = _words(cell_source)
            if TRAINED_WORDS.intersection(words):
                return []
            said = next((w for w in words if w in FIXED_WORDS), None)
            if said is None:
                return []
            for layer, ids in inner:
                name = name_bound_to(id(layer), namespace)
                model_name = name_bound_to(run.model_id, namespace)
                if name is None or model_name is None:
                    continue
                told.add(run.model_id)
                notes.append(
                    _note(name, model_name, len(ids & changed), len(ids), said, cell_source)
                )
                break
        except Exception:
            continue
    return notes


def _compile_line(cell_source: str, model_name: str) -> int | None:
    calls = method_calls(cell_source, model_name, "compile")
    return calls[0].lineno if calls else None


def _note(
    name: str, model_name: str, changed: int, total: int, said: str, cell_source: str
) -> Note:
    line = _compile_line(cell_source, model_name)
    where = f" (line {line} of this cell)" if line is not None else ""
    text = (
        f"`{model_name}.fit` changed {changed} of the {total} trainable weights of `{name}`, "
        f"the model inside `{model_name}`: `{name}` is still trainable, so fit trained it "
        f'together with the new layers, while this cell calls it fixed ("{said}"). Its '
        "learned features are overwritten (fine-tuning, not a probe) and the score measures "
        f"the retrained model. Nothing raises. Keep `{name}` fixed: restore its trained "
        f"weights (this fit already changed them), then set `{name}.trainable = False` "
        f"before `{model_name}.compile(...)`{where} and fit again."
    )
    return reports.note(text, SECTION)
