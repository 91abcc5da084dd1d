"""A ``ModelCheckpoint`` file loaded as "the best" model when it holds the last epoch.

``keras.callbacks.ModelCheckpoint("best.keras", monitor="val_loss")`` without
``save_best_only=True`` writes the model at the end of *every* epoch: the file holds the
last epoch, whatever ``monitor`` says (it only matters with ``save_best_only``). After an
``EarlyStopping`` that waited ``patience`` epochs past the best one, or a validation loss
that rose at the end, the model loaded back is not the best model; nothing raises.

Told in the cell that makes it when that cell also makes an ``EarlyStopping`` (training
stops ``patience`` epochs after the best one: the last epoch is then never the best), from
the cell's source. Otherwise told in the cell that loads it: after a completed cell
holding ``load_model`` or ``load_weights`` (substring tests otherwise), each such call
given a string (or a name holding one), against the ``ModelCheckpoint`` objects the
namespace holds (a name, or an item of a list or tuple of at most 32) whose ``filepath``
is that string and whose ``save_best_only`` is False, and the model each was set on (its
stored ``_model``): its stored History's ``monitor`` figures, when an earlier epoch was
better than the last (``min`` unless the key names an accuracy or an AUC). The fix is the
callback's construction with ``save_best_only=True`` (written from the cell that made it,
found in the history ``In``), then the fit again.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, stored
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "callback-mode"
MAX_CELL_CHARS = 50_000
MAX_LISTED = 32
MAX_EPOCHS = 100_000
HISTORY_CELLS = 50
_LOADS = frozenset({"load_model", "load_weights"})
_HIGHER_IS_BETTER = ("acc", "auc", "precision", "recall")


def _loaded_paths(tree: ast.Module, namespace: Mapping[str, Any]) -> list[tuple[ast.Call, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) in _LOADS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and type(first.value) is str:
                found.append((node, first.value))
            elif isinstance(first, ast.Name) and type(namespace.get(first.id)) is str:
                found.append((node, namespace[first.id]))
    return found


def _checkpoints(namespace: Mapping[str, Any]) -> list[Any]:
    found = []
    for value in list(namespace.values()):
        items = value[:MAX_LISTED] if type(value) in (list, tuple) else (value,)
        for item in items:
            if type(item).__name__ == "ModelCheckpoint" and type(item).__module__.startswith(
                "keras"
            ):
                found.append(item)
    return found


def _figures(model: Any, key: str) -> list[float] | None:
    history = stored(model, "history")
    logged = (instance_dict(history) or {}).get("history") if history is not None else None
    values = logged.get(key) if type(logged) is dict else None
    if type(values) is not list or len(values) < 2 or len(values) > MAX_EPOCHS:
        return None
    try:
        return [float(value) for value in values]
    except Exception:
        return None


def _every_epoch(call: ast.Call) -> bool:
    """A ``ModelCheckpoint(...)`` written without ``save_best_only``."""
    return call_name(call) == "ModelCheckpoint" and all(
        keyword.arg != "save_best_only" for keyword in call.keywords
    )


def _early_stopping(tree: ast.AST) -> ast.Call | None:
    return next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and call_name(node) == "EarlyStopping"
        ),
        None,
    )


def _definition_notes(source: str) -> list[Note]:
    """Told where the callback is made beside an ``EarlyStopping``: training stops
    ``patience`` epochs after the best one, so the last epoch, the one the file keeps, is
    never the best when it stops."""
    tree = parsed_source(source)
    stopper = _early_stopping(tree) if tree is not None else None
    if tree is None or stopper is None:
        return []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _every_epoch(node)):
            continue
        written = " ".join((ast.get_source_segment(source, node) or "").split())
        if not written:
            continue
        patience = next(
            (
                k.value.value
                for k in stopper.keywords
                if k.arg == "patience"
                and isinstance(k.value, ast.Constant)
                and type(k.value.value) is int
            ),
            0,
        )
        after = f"{patience} epochs" if patience > 1 else "1 epoch"
        text = (
            f"`{written}` (line {node.lineno} of this cell) has no `save_best_only=True`: it "
            "saves the model at the end of every epoch, so its file holds the last epoch. "
            f"With the `EarlyStopping` beside it (line {stopper.lineno}), a fit that stops "
            f"early ends {after} after its best epoch, so the file then holds a worse model "
            "than the best one; `monitor` chooses nothing without `save_best_only`. Nothing "
            "raises. "
            f"Keep the best epoch: `{_fixed(written)}`."
        )
        return [reports.note(text, SECTION)]
    return []


def _construction(path: str) -> str | None:
    """The ``ModelCheckpoint(...)`` call writing ``path``, from the newest cell that has one."""
    history = sys.modules.get("__main__")
    cells = getattr(history, "In", None)
    if type(cells) is not list:
        return None
    for cell in reversed(cells[-HISTORY_CELLS:]):
        if type(cell) is not str or "ModelCheckpoint" not in cell or path not in cell:
            continue
        tree = parsed_source(cell)
        for node in ast.walk(tree) if tree is not None else ():
            if (
                isinstance(node, ast.Call)
                and call_name(node) == "ModelCheckpoint"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value == path
            ):
                if tree is not None and _early_stopping(tree) is not None:
                    return ""  # told in the cell that made it
                return ast.get_source_segment(cell, node)
    return None


def _fixed(construction: str) -> str:
    text = construction.rstrip()
    if not text.endswith(")"):
        return text
    body = text[:-1].rstrip()
    separator = " " if body.endswith(",") else ", "
    return f"{body}{separator}save_best_only=True)"


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS:
        return []
    if "ModelCheckpoint" in source:
        told = _definition_notes(source)
        if told:
            return told
    if not any(s in source for s in _LOADS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    loads = _loaded_paths(tree, namespace)
    if not loads:
        return []
    checkpoints = _checkpoints(namespace)
    found: list[Note] = []
    for call, path in loads:
        for checkpoint in checkpoints:
            own = instance_dict(checkpoint) or {}
            if own.get("filepath") != path or own.get("save_best_only") is not False:
                continue
            if own.get("save_freq", "epoch") != "epoch":
                continue
            key = own.get("monitor")
            model = own.get("_model")
            figures = _figures(model, key) if type(key) is str and model is not None else None
            if not figures:
                continue
            higher = any(word in key for word in _HIGHER_IS_BETTER)
            best = (max if higher else min)(range(len(figures)), key=figures.__getitem__)
            last = len(figures) - 1
            if best == last or figures[best] == figures[last]:
                continue
            name = name_bound_to(id(checkpoint), namespace)
            model_name = name_bound_to(id(model), namespace)
            loaded = " ".join((ast.get_source_segment(source, call) or "").split())
            text = (
                f"`{loaded}` (line {call.lineno} of this cell) loads '{path}', written by "
                f"{f'`{name}`, ' if name else ''}a `ModelCheckpoint` without "
                "`save_best_only=True`: it saves the model at the end of every epoch, so the "
                f"file holds the last epoch (epoch {last + 1}, {key} {figures[last]:.4g}), not "
                f"the best one (epoch {best + 1}, {key} {figures[best]:.4g}) of "
                f"{f'`{model_name}`' if model_name else 'the model'}'s fit; `monitor` only "
                "chooses with `save_best_only=True`. Nothing raises."
            )
            construction = _construction(path)
            if construction == "":
                continue
            fix = _fixed(construction) if construction else None
            if fix:
                text += f" Make it `{fix}` and fit again before loading."
            else:
                text += " Give the callback `save_best_only=True` and fit again before loading."
            found.append(reports.note(text, SECTION))
            return found
    return found
