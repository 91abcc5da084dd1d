"""A trained Keras model given a second name, then trained under that name.

``student = baseline`` copies nothing: both names refer to one model object. Training
``student`` then trains ``baseline`` too: the baseline's weights are overwritten, and any
later comparison of the two compares the model with itself. Nothing raises.

Two readings, both bounded and read with ``ast`` on the cell's top-level statements:

1. after a completed cell, each top-level ``new = old`` between two plain names where both
   now hold one Keras model (a class named ``Model``/``Sequential``/``Functional`` from
   Keras in its method resolution order) that ``fit`` has already trained (Keras stored a
   ``History`` on it: read from its ``__dict__``, no attribute hook) is remembered, with a
   weak reference to the model;
   (a cell that also trains the new name counts only when it fits the old one above the
   alias: its ``History`` may be the new name's);
2. a cell (that one or a later one) that trains the new name (``new.fit(...)``,
   ``new.train_on_batch(...)``) while both names still hold that model is told once, in
   the cell that trains it. The fix makes a separate model with the trained weights where
   the alias was made: ``new = keras.models.clone_model(old)`` then
   ``new.set_weights(old.get_weights())`` (a clone is not compiled: compile it before fit).

A second name kept as a reference and never trained, an alias of a model never trained,
and a name bound to a clone stay silent.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "clone-model"
MAX_CELL_CHARS = 50_000
MAX_KEPT = 8
_TRAINING_CALLS = frozenset({"fit", "train_on_batch"})
_MODEL_CLASSES = frozenset({"Model", "Sequential", "Functional"})


@dataclass
class _Alias:
    new: str
    old: str
    model: weakref.ReferenceType[Any]
    statement: str


def _trained_keras_model(value: Any) -> bool:
    try:
        kinds = type(value).__mro__
    except Exception:
        return False
    if not any(
        k.__name__ in _MODEL_CLASSES and k.__module__.startswith(("keras", "tf_keras"))
        for k in kinds
    ):
        return False
    stored = instance_dict(value) or {}
    history = stored.get("history")
    return history is not None and type(history).__name__ == "History"


def _trains(tree: ast.Module, name: str) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _TRAINING_CALLS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == name
        for node in ast.walk(tree)
    )


def _trains_before(tree: ast.Module, name: str, line: int) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _TRAINING_CALLS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == name
        and node.lineno < line
        for node in ast.walk(tree)
    )


class ModelAliasCheck:
    """The aliases of trained models seen so far (weakly), and the cell that trains one."""

    def __init__(self) -> None:
        self._aliases: list[_Alias] = []

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if len(source) > MAX_CELL_CHARS or ("=" not in source and not self._aliases):
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        self._remember(tree, source, namespace)
        for alias in list(self._aliases):
            model = alias.model()
            if model is None or namespace.get(alias.new) is not model:
                self._aliases.remove(alias)
                continue
            if namespace.get(alias.old) is not model or not _trains(tree, alias.new):
                continue
            self._aliases.remove(alias)
            return [_note(alias)]
        return []

    def _remember(self, tree: ast.Module, source: str, namespace: Mapping[str, Any]) -> None:
        for statement in tree.body:
            if not (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and isinstance(statement.value, ast.Name)
            ):
                continue
            new, old = statement.targets[0].id, statement.value.id
            model = namespace.get(new)
            if new == old or model is None or namespace.get(old) is not model:
                continue
            if not _trained_keras_model(model):
                continue
            # The History must be from a fit before the second name: a cell that trains
            # the new name counts only when it trained the old one above the alias.
            if _trains(tree, new) and not _trains_before(tree, old, statement.lineno):
                continue
            try:
                reference = weakref.ref(model)
            except TypeError:
                continue
            text = ast.get_source_segment(source, statement) or f"{new} = {old}"
            self._aliases = [a for a in self._aliases if a.new != new][-MAX_KEPT + 1 :]
            self._aliases.append(_Alias(new, old, reference, text))


def _note(alias: _Alias) -> Note:
    new, old = alias.new, alias.old
    message = (
        f"`{new}` is `{old}`: `{alias.statement}` gave the trained model a second name and "
        f"copied nothing, so training `{new}` here trains `{old}` too: its trained weights "
        f"are overwritten, and comparing `{old}` with `{new}` compares the model with "
        "itself. Nothing raises. Make a separate model with the trained weights where the "
        f"second name is made: `{new} = keras.models.clone_model({old})` then "
        f"`{new}.set_weights({old}.get_weights())`, compile `{new}` (a clone is not "
        f"compiled), and train `{old}` again first (this fit changed it)."
    )
    return reports.note(message, SECTION)


_CHECK = ModelAliasCheck()


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The check of this kernel (one monitor per kernel: its aliases, kept weakly)."""
    return _CHECK.notes(source, namespace)
