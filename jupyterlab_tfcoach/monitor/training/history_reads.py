"""A History figure read after fit that is 0.0 at every epoch: a tracker nothing updated.

A Keras 3 model whose own ``train_step`` updates its own trackers (``total_loss``) still
logs Keras's built-in ``'loss'`` tracker, which only the default ``train_step`` updates:
``history.history['loss']`` is ``[0.0, 0.0, ...]`` and nothing raises. The fit's cell is
told (``fit_symptoms.py``); the learner often reads, prints or plots that figure in a later
cell, which is where the wrong number is used: told there.

After a completed cell whose source holds ``history`` (one substring test otherwise): its
reads of a History's figures by a constant key (``hist.history["loss"]``,
``hist.history.get("loss")``, or ``logs["loss"]`` with ``logs = hist.history``) are
parsed once (``parsed_source``); a key whose values are all exactly 0.0 over the epochs,
on a History whose model's class defines its own ``train_step``, gets a note naming the
read, and the key the same History holds with the training loss (a tracker the step
updates, ``fit_symptoms.FitSymptoms.loss_logged_as``), else the keys that did move. Values
are read from the History's ``__dict__`` (``instance_dict``), never through user code.
A cell that also runs fit is left to the fit's note.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training import model_source, user_code
from jupyterlab_tfcoach.monitor.training.fit_symptoms import TRAIN_STEP_SECTION, FitSymptoms

SECTION = TRAIN_STEP_SECTION
MAX_CELL_CHARS = 50_000
MAX_READS = 16


def _history_dict(value: Any) -> tuple[Any, dict[str, Any]] | None:
    """(the History, its figures) for a Keras ``History`` callback."""
    if type(value).__name__ != "History":
        return None
    own = instance_dict(value)
    figures = own.get("history") if own else None
    return (value, figures) if type(figures) is dict else None


def _owner_of(node: ast.AST, namespace: Mapping[str, Any]) -> tuple[str, Any, dict] | None:
    """``hist.history`` (a History's figures) or a name bound to them: (its text, the
    History, the figures)."""
    if isinstance(node, ast.Attribute) and node.attr == "history":
        if isinstance(node.value, ast.Name):
            found = _history_dict(namespace.get(node.value.id))
            if found is not None:
                return f"{node.value.id}.history", found[0], found[1]
    if isinstance(node, ast.Name):
        held = namespace.get(node.id)
        if type(held) is dict:
            for value in list(namespace.values()):
                found = _history_dict(value)
                if found is not None and found[1] is held:
                    return node.id, found[0], found[1]
    return None


def _reads(tree: ast.Module) -> list[tuple[ast.AST, str, int, str | None]]:
    """(the subscripted or ``.get`` object, the key, the line, the name it is assigned
    to) of each constant-key read."""
    targets: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            if isinstance(node.targets[0], ast.Name):
                targets[id(node.value)] = node.targets[0].id
    found: list[tuple[ast.AST, str, int, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and type(key.value) is str:
                found.append((node.value, key.value, node.lineno, targets.get(id(node))))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and type(node.args[0].value) is str
        ):
            found.append((node.func.value, node.args[0].value, node.lineno, targets.get(id(node))))
        if len(found) >= MAX_READS:
            break
    return found


def _all_zero(values: Any) -> bool:
    if type(values) is not list or not values:
        return False
    return all(type(v) in (int, float) and v == 0.0 for v in values)


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "history" not in source or len(source) > MAX_CELL_CHARS or ".fit(" in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    told: set[tuple[int, str]] = set()
    for target, key, line, assigned in _reads(tree):
        owner = _owner_of(target, namespace)
        if owner is None:
            continue
        written, history, figures = owner
        if (id(history), key) in told or not _all_zero(figures.get(key)):
            continue
        model = (instance_dict(history) or {}).get("_model")
        step_function = model_source.own_function(type(model), "train_step")
        if model is None or step_function is None:
            continue
        told.add((id(history), key))
        found.append(_note(written, key, line, assigned, model, step_function, figures))
    return found


def _note(
    written: str,
    key: str,
    line: int,
    assigned: str | None,
    model: Any,
    step_function: Any,
    figures: dict,
) -> Note:
    cls = type(model).__name__
    epochs = len(figures[key])
    logged = None
    step = user_code.train_step_of(step_function)
    if key == "loss" and step is not None:
        logged = FitSymptoms.loss_logged_as(model, step, figures)
    moving = [k for k, v in figures.items() if k != key and not _all_zero(v)]
    what = (
        "Keras's own loss tracker, which only the default train_step updates"
        if key == "loss"
        else "a metric fit logs that nothing in this train_step updates"
    )
    read = f"`{assigned} = {written}['{key}']`" if assigned else f"`{written}['{key}']`"
    text = (
        f"{read} (line {line} of this cell) reads 0.0 at all {epochs} epochs: "
        f"'{key}' is {what}, so `{cls}.train_step` never changes it and these are not "
        "the model's figures. "
    )
    if logged is not None:
        fixed = f"{written}['{logged}']"
        if assigned:
            fixed = f"{assigned} = {fixed}"
        text += f"`{cls}.train_step` logs its loss as '{logged}': read `{fixed}` instead."
    elif moving:
        keys = ", ".join(f"'{k}'" for k in moving[:6])
        text += f"The figures fit did log are {keys}: read one of those instead."
    return reports.note(text, SECTION)
