"""A custom ``test_step`` (or ``predict_step``) that updates weights, told where the class
is defined.

A ``test_step`` copied from ``train_step`` often keeps the tape, the gradients and
``self.optimizer.apply_gradients(...)``: every ``evaluate``, and fit's validation pass,
then trains the model on the data it should only score. ``step_modes.py`` tells it after
an evaluate that measured the weights change; by then the class was defined cells
earlier, and a notebook may evaluate on the test set once, at the end. The cause is in
the code, so it is told in the cell that defines the class, too.

After a completed cell whose text holds ``def test_step`` or ``def predict_step`` (one
substring test otherwise), each class the cell defines at its top level, when the name
holds a class with a Keras ``Model``/``Layer`` base after the cell: its own ``test_step``
and ``predict_step`` are read (``step_modes.weight_updates``: ``apply_gradients``,
``minimize``, ``assign_sub``, an optimizer's ``apply``), from the method's source, never
run. The note names the class, the method, the line and the statement; the fix deletes
it (the forward pass, the loss and the metric updates stay).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.model_source import own_function
from jupyterlab_tfcoach.monitor.training.step_modes import SECTION, weight_updates

_STEPS = ("test_step", "predict_step")


def _keras_class(value: Any) -> bool:
    if not isinstance(value, type):
        return False
    try:
        return any(
            k.__name__ in ("Model", "Layer") and str(k.__module__).startswith("keras")
            for k in value.__mro__
        )
    except Exception:
        return False


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "def test_step" not in source and "def predict_step" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        cls = namespace.get(node.name)
        if not _keras_class(cls):
            continue
        for step in _STEPS:
            function = own_function(cls, step)
            updates = weight_updates(function) if function is not None else []
            if not updates:
                continue
            first = updates[0]
            place = user_code.place_of(function, first.line, namespace)
            copied = (
                " (it reads like a copy of `train_step`)"
                if own_function(cls, "train_step") is not None
                else ""
            )
            runs = (
                "every evaluate, and fit's validation pass after each epoch"
                if step == "test_step"
                else "every predict"
            )
            text = (
                f"`{node.name}.{step}` updates the weights ({place}: `{first.statement}`)"
                f"{copied}: Keras runs {step} for {runs}, so the model trains on the data "
                f"it should only score: two evaluations of the same data disagree, the test "
                f"figures come out optimistic and the held-out data leaks into the weights. "
                f"Nothing raises. A {step} runs the forward pass with training=False, "
                f"computes the loss and updates the metrics only: delete that line (and the "
                f"tape and gradients that fed it)."
            )
            found.append(reports.note(text, SECTION))
            break
    return found
