"""The oldest checkpoint of a ``CheckpointManager`` restored (issue #25).

``tf.train.CheckpointManager.checkpoints`` lists the checkpoints it keeps from the OLDEST to
the newest: ``manager.checkpoints[0]`` is the first one saved, not the trained model. The
newest is ``manager.latest_checkpoint`` (or ``checkpoints[-1]``). Restoring the first one
loads early weights and nothing raises.

Told after a completed cell whose source reads ``<m>.checkpoints[0]`` as an argument of a
call (``restore``, ``load_weights``, ``load_checkpoint``...), when ``<m>`` holds a
``CheckpointManager`` (its class read by name) that keeps more than one checkpoint (its
stored ``_maybe_delete``: with one checkpoint, the first is the latest). The fix names
``<m>.latest_checkpoint``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import class_mro
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "keras-saving"
MAX_CELL_CHARS = 50_000


def _kept(manager: Any) -> int | None:
    """How many checkpoints a ``CheckpointManager`` keeps, from what it stores."""
    if not any(cls.__name__ == "CheckpointManager" for cls in class_mro(manager)):
        return None
    kept = (instance_dict(manager) or {}).get("_maybe_delete")
    try:
        return len(kept) if isinstance(kept, dict) else None
    except Exception:
        return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or ".checkpoints[0]" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        for argument in call.args:
            if not (
                isinstance(argument, ast.Subscript)
                and isinstance(argument.slice, ast.Constant)
                and argument.slice.value == 0
                and isinstance(argument.value, ast.Attribute)
                and argument.value.attr == "checkpoints"
                and isinstance(argument.value.value, ast.Name)
            ):
                continue
            manager = argument.value.value.id
            kept = _kept(namespace.get(manager))
            if kept is None or kept < 2:
                continue
            text = (
                f"The oldest checkpoint restored: `{ast.unparse(call)}` (line "
                f"{argument.lineno}) reads `{manager}.checkpoints[0]`, but `{manager}` lists "
                f"its {kept} checkpoints from the oldest to the newest: index 0 is the first "
                f"saved, not the trained model. Restore the newest: "
                f"`{manager}.latest_checkpoint` (or `{manager}.checkpoints[-1]`)."
            )
            return [reports.note(text, SECTION)]
    return []
