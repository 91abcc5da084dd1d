"""A callback that reads a logs key no compiled model logs, with a default: always the default.

``logs.get("val_acc", 0.0)`` in a ``keras.callbacks.Callback``'s ``on_epoch_end``: Keras 3
logs a metric under the name it was given (``metrics=["accuracy"]`` gives ``'accuracy'``
and ``'val_accuracy'``, a metric object its ``name``), so ``'val_acc'`` is never there and
``get`` returns 0.0 every epoch: the callback never sees an improvement. Nothing raises
(``logs["val_acc"]`` would: that is an error's explanation, not a silent bug).

Told in the cell that defines the callback, from its source (``parsed_source``, shared): a
cell holding ``logs`` and ``class`` (one substring test otherwise); each class it defines
that extends Keras's ``Callback`` (checked on the class object); the ``.get`` reads of a
constant key on the methods' ``logs`` parameter; against the keys each compiled Keras
model in the namespace will log (``'loss'``, the metrics given to ``compile``, read from
``_compile_metrics._user_metrics``, and their ``val_`` forms). A key no compiled model
logs, close to one that one does (``difflib``), gets a note with the read rewritten. Only
single-output models with a list of metrics are read; nothing is run.
"""

from __future__ import annotations

import ast
import difflib
import weakref
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, is_library_class, stored
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "callback-mode"
MAX_CELL_CHARS = 50_000
MAX_MODELS = 8


def _callback_class(cls: Any) -> bool:
    try:
        return any(is_library_class(k) and k.__name__ == "Callback" for k in type.mro(cls))
    except Exception:
        return False


def _logged_keys(model: Any) -> list[str] | None:
    """The keys a fit of ``model`` will log, from what ``compile`` stored; None when it
    was not compiled or its metrics are not a plain list."""
    own = instance_dict(model) or {}
    compiled = own.get("_compile_metrics")
    if compiled is None or own.get("_compile_loss") is None:
        return None
    user_metrics = (instance_dict(compiled) or {}).get("_user_metrics")
    if user_metrics is None:
        user_metrics = []
    if type(user_metrics) not in (list, tuple):
        return None
    names = ["loss"]
    for metric in user_metrics:
        name = metric if type(metric) is str else stored(metric, "name")
        if type(name) is not str:
            return None
        names.append(name)
    return names + [f"val_{n}" for n in names]


def _compiled_models(namespace: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for name, value in list(namespace.items()):
        if type(name) is not str or name.startswith("_"):
            continue
        if "_compile_metrics" not in (instance_dict(value) or {}):
            continue
        keys = _logged_keys(value)
        if keys is not None:
            found.append((name, keys))
        if len(found) >= MAX_MODELS:
            break
    return found


def _get_reads(method: ast.FunctionDef) -> list[tuple[ast.Call, str]]:
    parameters = [a.arg for a in method.args.args]
    if "logs" not in parameters:
        return []
    found: list[tuple[ast.Call, str]] = []
    for node in ast.walk(method):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "logs"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and type(node.args[0].value) is str
        ):
            found.append((node, node.args[0].value))
    return found


class CallbackKeyCheck:
    """Reads each callback class once (weakly kept)."""

    def __init__(self) -> None:
        self._read: weakref.WeakSet[type] = weakref.WeakSet()

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if "logs" not in source or "class " not in source or len(source) > MAX_CELL_CHARS:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        found: list[Note] = []
        models: list[tuple[str, list[str]]] | None = None
        for cls_node in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            cls = namespace.get(cls_node.name)
            if not isinstance(cls, type) or cls in self._read or not _callback_class(cls):
                continue
            self._read.add(cls)
            if models is None:
                models = _compiled_models(namespace)
            if not models:
                return found
            for method in (n for n in cls_node.body if isinstance(n, ast.FunctionDef)):
                for call, key in _get_reads(method):
                    note = _note(source, cls_node.name, method.name, call, key, models)
                    if note is not None:
                        found.append(note)
        return found


def _note(
    source: str,
    cls: str,
    method: str,
    call: ast.Call,
    key: str,
    models: list[tuple[str, list[str]]],
) -> Note | None:
    if any(key in keys for _, keys in models):
        return None
    everything = sorted({k for _, keys in models for k in keys})
    close = difflib.get_close_matches(key, everything, n=1, cutoff=0.6)
    if not close:
        return None
    closest = close[0]
    model, keys = next((m, k) for m, k in models if closest in k)
    written = ast.get_source_segment(source, call) or f'logs.get("{key}")'
    fixed = written.replace(f'"{key}"', f'"{closest}"').replace(f"'{key}'", f"'{closest}'")
    default = (
        f", so `logs.get` returns its default ({ast.get_source_segment(source, call.args[1])})"
        if len(call.args) > 1
        else ", so `logs.get` returns None"
    )
    shown = ", ".join(f"'{k}'" for k in keys[:8])
    text = (
        f"`{cls}.{method}` reads `{written}` (line {call.lineno} of this cell), but no "
        f"compiled model logs '{key}': `{model}` logs {shown} (Keras 3 logs a metric under "
        f"the name it was given in compile){default} at every epoch and the callback "
        f"never sees the figure. Read the key fit logs: `{fixed}`."
    )
    return reports.note(text, SECTION)
