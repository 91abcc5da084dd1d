"""A validation or test pipeline built with a random map (an augmentation), told when built.

``training/evaluation_augmentation.py`` tells a random map in the data ``evaluate`` or
fit's ``validation_data`` is given, when that call runs. Most notebooks build their
validation pipeline cells before (``val_ds = ...map(augment)...``), and a cell that fails
in between (a wrong callback path, a loss error) delays that note or loses it: this check
tells it in the cell that builds the pipeline, from what the pipeline is.

After a cell that completed (a cell without ``.map(`` costs one substring test), each
top-level ``NAME = <chain>`` whose name has a word of validation or test data (``val``,
``valid``, ``test``, ``eval``, ``holdout``, ``dev``; not ``train``) and holds a dataset
is read: its chain of transformations (``dataset_order.chain_of``, at most 64 links,
instance ``__dict__``s only) has a map whose traced function draws random numbers
(``random_maps.is_augmenting_map``, from its graph's operation types; a map whose only
draw is a permutation of the element's rows, a random subsample, is not one). The note names the
dataset and the map's function; fix: the learner's statement without the random maps,
when the statement's maps match the chain's one for one. A dataset the same cell gives
to ``evaluate`` or ``fit`` is left to that call's note (it names the model); a dataset
told here (kept weakly) is not told again by that note in a later cell.

Nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import re
import types
import weakref
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import (
    MAP,
    chain_of,
    operation,
    statement_chain,
)
from jupyterlab_tfcoach.monitor.symptoms.evaluation_loops import (
    TRAINING_WORDS,
    VALIDATION_WORDS,
)
from jupyterlab_tfcoach.monitor.symptoms.random_maps import is_augmenting_map
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "tf-data"
MAX_NOTES = 2
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
# The datasets told here, weakly: the later evaluate or fit on them is not told again.
_TOLD: weakref.WeakSet[Any] = weakref.WeakSet()


def _evaluation_name(name: str) -> bool:
    words = {w.lower() for w in _WORD.findall(name)}
    return bool(words & VALIDATION_WORDS) and not words & TRAINING_WORDS


def _function_name(link: Any) -> str | None:
    """The Python name of a map link's function (``augment``), from its wrapper."""
    wrapper = (instance_dict(link) or {}).get("_map_func")
    function = (instance_dict(wrapper) or {}).get("_func") if wrapper is not None else None
    if type(function) is not types.FunctionType:
        return None
    name = function.__name__
    return name if name.isidentifier() else None


def told_when_built(dataset: Any) -> bool:
    """Whether a note told this dataset's random map in the cell that built it (the note
    of the ``evaluate`` or ``fit`` that uses it would say the same again)."""
    try:
        return dataset in _TOLD
    except TypeError:
        return False


def _evaluated_here(tree: ast.Module) -> set[str]:
    """Names this cell gives to ``evaluate``/``fit``: their own note tells it, with the
    model's name."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) in ("evaluate", "fit"):
            for value in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(value, ast.Name):
                    names.add(value.id)
    return names


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """Notes for validation or test datasets this cell built with a random map."""
    if ".map(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    evaluated: set[str] | None = None
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            continue
        name = statement.targets[0].id
        if not _evaluation_name(name):
            continue
        if evaluated is None:
            evaluated = _evaluated_here(tree)
        if name in evaluated:
            continue
        dataset = namespace.get(name)
        if operation(dataset) is None:
            continue
        # The chain runs from the dataset down to its source: maps in reverse order.
        maps = [link for link in chain_of(dataset) if operation(link) == MAP][::-1]
        random = [i for i, link in enumerate(maps) if is_augmenting_map(link)]
        if not random:
            continue
        note = _note(name, maps, random, source)
        if note is not None:
            found.append(note)
            try:
                _TOLD.add(dataset)
            except TypeError:
                pass
        if len(found) >= MAX_NOTES:
            break
    return found


def _note(name: str, maps: list[Any], random: list[int], source: str) -> Note | None:
    function = _function_name(maps[random[0]])
    which = f"`.map({function})`" if function else "a map"
    text = (
        f"`{name}` is validation or test data, but its pipeline has {which}, whose "
        "function draws random numbers (an augmentation): every evaluation on it scores "
        "the model on randomly altered examples, not on the data itself, so the "
        "validation loss and metrics are noisier, usually worse, and differ from one run "
        "to the next. Nothing raises. Augment the training data only"
    )
    chain = statement_chain(name, [source])
    statement_maps = [i for i, call in enumerate(chain.calls) if call[0] == "map"] if chain else []
    if chain is not None and len(statement_maps) == len(maps):
        dropped = {statement_maps[i] for i in random}
        calls = [call for i, call in enumerate(chain.calls) if i not in dropped]
        text += f": build `{name}` without it, `{chain.text(calls)}`."
    else:
        text += f": build `{name}` without the random map."
    return reports.note(text, SECTION)
