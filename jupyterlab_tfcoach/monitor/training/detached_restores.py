"""A model built afresh, then a checkpoint restored into the objects it tracks, not into it.

``new_model = MLP(...)``, ``ckpt.restore(manager.latest_checkpoint)``, then
``new_model(x_test)``: ``ckpt`` restores into what it was made with (the old ``model``,
its optimizer); ``new_model`` is attached to no checkpoint and keeps its fresh random
weights, so the "restored" model scores near chance. Nothing raises (the restore
matched every name: ``checkpoint_restores.py``, which tells restores that matched
nothing, stays quiet).

After a completed cell whose text holds ``.restore(`` (one substring test otherwise): a
``c.restore(...)`` call at the cell's top level where ``c`` holds a ``tf.train.Checkpoint``
after the cell, a name bound earlier in the cell (before that line) to a TensorFlow
``Module`` or a Keras layer or model, used again after it, which ``c`` does not track
(its ``__dict__`` values, compared by identity) while ``c`` tracks an object of the same
class (the one the learner meant to fill). The note names both objects, the restore and
the name the tracked one is saved under; the fix restores through a checkpoint of the new
object under that name, ``tf.train.Checkpoint(model=new_model).restore(path)
.expect_partial()`` in the learner's words.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "keras-saving"


def _is_checkpoint(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "Checkpoint" and str(cls.__module__).startswith("tensorflow")


def _is_trackable_model(value: Any) -> bool:
    try:
        return any(
            (k.__name__ == "Module" and str(k.__module__).startswith("tensorflow"))
            or (k.__name__ in ("Layer", "Model") and str(k.__module__).startswith("keras"))
            for k in type(value).__mro__
        )
    except Exception:
        return False


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if ".restore(" not in source or "tensorflow" not in sys.modules:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    bound: dict[str, int] = {}  # name -> line it was last bound at (top-level statements)
    for statement in tree.body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if not (
                isinstance(func, ast.Attribute)
                and func.attr == "restore"
                and isinstance(func.value, ast.Name)
                and _is_checkpoint(namespace.get(func.value.id))
            ):
                continue
            note = _detached(func.value.id, node, statement, bound, tree, source, namespace)
            if note is not None:
                return [note]
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = statement.lineno
    return []


def _detached(
    checkpoint: str,
    restore: ast.Call,
    statement: ast.stmt,
    bound: dict[str, int],
    tree: ast.Module,
    source: str,
    namespace: Mapping[str, Any],
) -> Note | None:
    tracked = {
        key: value
        for key, value in (instance_dict(namespace.get(checkpoint)) or {}).items()
        if type(key) is str and not key.startswith("_")
    }
    tracked_ids = {id(v) for v in tracked.values()}
    end = statement.end_lineno or statement.lineno
    for name, line in bound.items():
        fresh = namespace.get(name)
        if not _is_trackable_model(fresh) or id(fresh) in tracked_ids:
            continue
        used_after = any(
            isinstance(n, ast.Name) and n.id == name and n.lineno > end for n in ast.walk(tree)
        )
        if not used_after:
            continue
        under = next((k for k, v in tracked.items() if type(v) is type(fresh)), None)
        if under is None:
            continue
        old = name_bound_to(id(tracked[under]), namespace)
        written = ast.get_source_segment(source, restore) or f"{checkpoint}.restore(...)"
        path = ast.get_source_segment(source, restore.args[0]) if restore.args else None
        tf = name_bound_to(id(sys.modules.get("tensorflow")), namespace) or "tf"
        old_text = f"`{old}`" if old else "the object"
        text = (
            f"`{written}` (line {restore.lineno} of this cell) restores into the objects "
            f"`{checkpoint}` was made with: {old_text}, saved under `{under}=`. `{name}`, "
            f"built on line {line}, is tracked by no checkpoint, so it keeps its fresh "
            f"random weights and what this cell measures with it after the restore is an "
            f"untrained model. Nothing raises."
        )
        if path:
            fix = f"{tf}.train.Checkpoint({under}={name}).restore({path}).expect_partial()"
            text += (
                f" Restore into `{name}` through a checkpoint of its own, in place of that "
                f"line: `{fix}` (expect_partial: the file also holds what `{name}` does "
                f"not need, such as the optimizer's slots)."
            )
        return reports.note(text, SECTION)
    return None
