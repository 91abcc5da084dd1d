"""An output layer and a loss that disagree, told in the cell that calls ``compile``.

Many of ``loss_agreement.py``'s disagreements need no labels: what the last layer
outputs and what the loss expects are both known once ``compile`` returns. Told only
after ``fit``, they showed up cells after the mistake, often in a cell that holds none.
``fit_watch.py`` hooks Keras 3's ``Trainer.compile`` (the call runs as it is; after it
returns, ``loss_agreement.read_compiled`` reads the model's last layer, the loss the
user gave, ``_compile_loss._user_loss``, and the metrics, ``_compile_metrics.
_user_metrics``: a few dict reads, nothing built or traced). The same checks and texts
then run as after fit (``loss_agreement._findings``, one table of what each loss
expects), for what is knowable without labels, each measured on Keras 3.15:

- an output with no activation given to a cross-entropy left at ``from_logits=False``;
- ``categorical_crossentropy`` over one unit (the loss is 0.0 whatever it predicts);
- a softmax over one unit (always 1.0: every input gets the same class);
- ``"accuracy"`` on one unit with no activation and a ``from_logits=True`` binary loss
  (Keras makes it a BinaryAccuracy at 0.5; raw scores split at 0);
- ``"accuracy"`` with a regression loss on a unit with no probability activation (a
  BinaryAccuracy counting exact 0/1 matches).

Silent, as Keras 3.15 handles them (probed, fit's losses identical to the right setup's):
a softmax or sigmoid output with a ``from_logits=True`` loss (Keras warns and takes the
logits it cached on the activation's output), ``binary_crossentropy`` over a softmax of
several units. What needs the labels (class numbers to mse, labels outside [0, 1],
targets out of the activation's reach, a sorted validation split) stays fit's.

Each cause is told once. What a compile told is kept per model (weakly) with the loss
object that compile made (``_compile_loss``): a later ``fit``/``evaluate`` of the same
compile skips the same rule (``told_at_compile``), a new compile is checked afresh. In
the cell that compiles and fits, fit's note is kept (it adds what fit measured, such as
a loss of 0.0 every epoch) and the compile's is left out.

Costs (measured in-process, a loaded 2-core machine): the hook's reading 0.004 ms per
``compile`` call (a 3-layer model; Keras's own compile takes ~12 ms), the checks 0.003 ms
when nothing is due, a note ~0.2 ms (the latest cells parsed for the user's calls);
nothing in a cell that compiles nothing (an empty list).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import stored
from jupyterlab_tfcoach.monitor.training.loss_agreement import Setup, loss_notes

MAX_MODELS = 200  # models whose compile-time notes are remembered


@dataclass
class _Told:
    """What one model's latest checked compile told, and where."""

    model: weakref.ReferenceType[Any]
    compiled_loss: weakref.ReferenceType[Any] | None
    rules: set[str]
    cell: int | None  # the execution count of the cell that compiled


_told: dict[int, _Told] = {}


def told_at_compile(setup: Setup, rule: str) -> bool:
    """Whether ``rule`` was told for this model's current compile in an earlier cell (a
    fit/evaluate setup's model, compiled since by no other ``compile`` call)."""
    entry = _told.get(setup.model_id)
    model = setup.model()
    if entry is None or model is None or entry.model() is not model:
        return False
    current = stored(model, "_compile_loss")
    if entry.compiled_loss is None or entry.compiled_loss() is not current:
        return False
    return rule in entry.rules or (rule == "softmax" and "softmax_one_unit" in entry.rules)


def softmax_told_at_compile(model: Any) -> bool:
    """Whether a softmax over one unit in this model was told at its compile (the layer
    cannot change without a new model)."""
    entry = _told.get(id(model))
    return entry is not None and entry.model() is model and "softmax_one_unit" in entry.rules


def _remember(setup: Setup, rules: set[str], cell: int | None) -> None:
    model = setup.model()
    if model is None:
        return
    for key in [k for k, v in _told.items() if v.model() is None]:
        del _told[key]
    if len(_told) >= MAX_MODELS and setup.model_id not in _told:
        del _told[next(iter(_told))]
    _told[setup.model_id] = _Told(weakref.ref(model), setup.compiled_loss, rules, cell)


def compile_notes(
    setups: list[Setup],
    namespace: Mapping[str, Any],
    cell_source: str,
    execution_count: int | None,
    told_by_fit: set[tuple[str, int]],
) -> list[Note]:
    """The notes of one cell's compile calls, leaving out what a fit or evaluate of this
    cell told for the same model (``told_by_fit``: (rule, model id))."""
    if not setups:
        return []
    latest: dict[int, Setup] = {}
    for setup in setups:
        latest[setup.model_id] = setup  # the model's last compile in the cell counts
    told: set[tuple[str, int]] = set()

    def told_after_fit(setup: Setup, rule: str) -> bool:
        told.add((rule, setup.model_id))  # what this compile finds, told here or by fit
        fit_rule = "softmax" if rule == "softmax_one_unit" else rule
        return (fit_rule, setup.model_id) in told_by_fit

    notes = loss_notes(list(latest.values()), namespace, cell_source, told_after_fit)
    for setup in latest.values():
        rules = {rule for rule, model_id in told if model_id == setup.model_id}
        _remember(setup, rules, execution_count)
    return notes


def remember_softmax(model: Any) -> None:
    """Record that a softmax over one unit in ``model`` was told where it was built
    (``unit_softmax_layers``): fit does not tell it again."""
    for key in [k for k, v in _told.items() if v.model() is None]:
        del _told[key]
    if len(_told) >= MAX_MODELS and id(model) not in _told:
        del _told[next(iter(_told))]
    _told[id(model)] = _Told(weakref.ref(model), None, {"softmax_one_unit"}, None)
