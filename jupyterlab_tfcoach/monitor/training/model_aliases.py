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

A second reading covers one model used as two (a target network, a teacher, an averaged
copy): every top-level ``new = old`` where both names hold one Keras model or layer (trained
or not) is remembered weakly with the cell it was made in; a cell (that one or a later one)
that reads both names, in its own code or in the notebook functions it calls by name
(``weight_copies.usage``; the alias statement itself does not count), and either trains one
of them there or copies weights between them (``a.set_weights(b.get_weights())``), is told
once: both names are one model, so the "copy" moves with every step and a copy between
them copies the model onto itself (and when the copy goes into the trained name, its
direction is wrong too: ``weight_copies``). The fix is a clone with the weights where the
alias was made, and the copy from the trained name into the other.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training import weight_copies
from jupyterlab_tfcoach.monitor.training.user_code import cell_place

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
    count: int | None = None  # the execution count of the cell that made it
    line: int = 0


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
        self._shared: list[_Alias] = []  # any model's second name, for its use as two

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if len(source) > MAX_CELL_CHARS:
            return []
        if "=" not in source and not self._aliases and not self._shared:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        self._remember(tree, source, namespace)
        self._remember_shared(tree, source, namespace)
        for alias in list(self._aliases):
            model = alias.model()
            if model is None or namespace.get(alias.new) is not model:
                self._aliases.remove(alias)
                continue
            if namespace.get(alias.old) is not model or not _trains(tree, alias.new):
                continue
            self._aliases.remove(alias)
            self._shared = [a for a in self._shared if a.new != alias.new]
            return [_note(alias)]
        return self._used_as_two(tree, source, namespace)

    def _remember_shared(self, tree: ast.Module, source: str, namespace: Mapping[str, Any]) -> None:
        history = namespace.get("In")
        count = len(history) - 1 if type(history) is list and history else None
        for statement, new, old, model in _name_aliases(tree, namespace):
            if not weight_copies.keras_model(model):
                continue
            try:
                reference = weakref.ref(model)
            except TypeError:
                continue
            text = ast.get_source_segment(source, statement) or f"{new} = {old}"
            self._shared = [a for a in self._shared if a.new != new][-MAX_KEPT + 1 :]
            self._shared.append(_Alias(new, old, reference, text, count, statement.lineno))

    def _used_as_two(
        self, tree: ast.Module, source: str, namespace: Mapping[str, Any]
    ) -> list[Note]:
        for alias in list(self._shared):
            model = alias.model()
            if (
                model is None
                or namespace.get(alias.new) is not model
                or namespace.get(alias.old) is not model
            ):
                self._shared.remove(alias)
                continue
            if alias.new not in source and alias.old not in source:
                continue  # used together here: one of the names at least in the cell
            made_here = _alias_statement(tree, alias)
            skip_line = made_here.lineno if made_here is not None else None
            found = weight_copies.usage(source, namespace, skip_line)
            if alias.new not in found.reads or alias.old not in found.reads:
                continue
            pair = {alias.new, alias.old}
            copies = [c for c in found.copies if {c.into, c.source} == pair]
            trained = [n for n in (alias.old, alias.new) if n in found.trained]
            if not copies and not trained:
                continue
            self._shared.remove(alias)
            return [_shared_note(alias, found, copies, trained, made_here is not None)]
        return []

    def _remember(self, tree: ast.Module, source: str, namespace: Mapping[str, Any]) -> None:
        for statement, new, old, model in _name_aliases(tree, namespace):
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


def _name_aliases(
    tree: ast.Module, namespace: Mapping[str, Any]
) -> Iterator[tuple[ast.Assign, str, str, Any]]:
    """(statement, new, old, the object) for each top-level ``new = old`` of the cell after
    which both names hold one object."""
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
        if new != old and model is not None and namespace.get(old) is model:
            yield statement, new, old, model


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


def _alias_statement(tree: ast.Module, alias: _Alias) -> ast.stmt | None:
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == alias.new
            and isinstance(statement.value, ast.Name)
            and statement.value.id == alias.old
        ):
            return statement
    return None


def _shared_note(
    alias: _Alias,
    found: weight_copies.Usage,
    copies: list[weight_copies.Copy],
    trained: list[str],
    made_here: bool,
) -> Note:
    new, old = alias.new, alias.old
    # The trained name is the one the copy should come from.
    source_name = trained[0] if trained else (copies[0].into if copies else old)
    other = new if source_name == old else old
    where = cell_place(None, alias.line) if made_here else cell_place(alias.count, alias.line)
    parts = [
        f"`{new}` is `{old}`: `{alias.statement}` ({where}) gave the model a second name and "
        f"copied nothing, yet this code uses them as two models."
    ]
    if trained:
        through = found.trained[source_name]
        how = f" (through `{through}`)" if through else ""
        parts.append(
            f" Training `{source_name}`{how} trains `{other}` too, step by step: whatever "
            f"reads `{other}` (a target, a teacher, a baseline to compare with) reads the "
            "model being trained."
        )
    if copies:
        copy = copies[0]
        parts.append(
            f" `{copy.statement.strip()}` (line {copy.line}) copies the model onto itself "
            "and changes nothing"
        )
        if copy.into == source_name and trained:
            parts.append(
                f"; its direction is also reversed: between two models it would overwrite "
                f"the trained `{source_name}` with `{other}`"
            )
        parts.append(".")
    parts.append(
        f" Nothing raises. Make a separate model where the second name is made: "
        f"`{new} = keras.models.clone_model({old})` then "
        f"`{new}.set_weights({old}.get_weights())`"
    )
    if copies and trained:
        parts.append(
            f", and copy from the trained model into the other: "
            f"`{other}.set_weights({source_name}.get_weights())`"
        )
    parts.append(".")
    return reports.note("".join(parts), SECTION)


_CHECK = ModelAliasCheck()


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The check of this kernel (one monitor per kernel: its aliases, kept weakly)."""
    return _CHECK.notes(source, namespace)
