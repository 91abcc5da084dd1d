"""A ``tf.train.Checkpoint.restore`` that matched nothing: the objects keep their weights.

A checkpoint restores by the names objects were saved under: saved with
``tf.train.Checkpoint(model=model)``, restored into ``tf.train.Checkpoint(net=new_model)``,
nothing has the name ``net`` in the file and nothing is restored. ``restore`` is lazy and
returns a status no one checks: no error, ``new_model`` keeps its fresh random weights.

A hook on ``Checkpoint.restore`` (``hooks.py``; the original runs first, as it is) keeps,
weakly, each checkpoint restored in the cell and the path it was given (a string). After
the cell, for each: the names it tracks (``_self_unconditional_checkpoint_dependencies``,
read from its ``__dict__``) against the first part of the keys the file holds (TensorFlow's
checkpoint reader, one read of the file's index per restore call). A tracked name the file
does not hold is told, with the names the file does hold and, when another checkpoint in
the namespace tracks an object of the same class under one of those names, the
construction rewritten with that name. Nothing is built or traced; a restore that matched
every name is silent.
"""

from __future__ import annotations

import ast
import sys
import weakref
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.hooks import MethodHooks
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source
from jupyterlab_tfcoach.monitor.tftypes import loaded_class

SECTION = "keras-saving"
CHECKPOINT_MODULE = "tensorflow.python.checkpoint.checkpoint"
READER_MODULE = "tensorflow.python.training.py_checkpoint_reader"
MAX_RESTORES = 8
_BOOKKEEPING = frozenset({"_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter"})


def _tracked(checkpoint: Any) -> list[tuple[str, Any]]:
    """(name, object) of what a checkpoint tracks, from its own ``__dict__``."""
    own = instance_dict(checkpoint) or {}
    references = own.get("_self_unconditional_checkpoint_dependencies")
    found: list[tuple[str, Any]] = []
    if type(references) is not list:
        return found
    for reference in references[:64]:
        name, ref = getattr(reference, "name", None), getattr(reference, "ref", None)
        if type(name) is str and name not in _BOOKKEEPING:
            found.append((name, ref))
    return found


def _saved_names(path: str) -> set[str] | None:
    reader_module = sys.modules.get(READER_MODULE)
    make_reader = getattr(reader_module, "NewCheckpointReader", None)
    if make_reader is None:
        return None
    try:
        keys = make_reader(path).get_variable_to_shape_map()
    except Exception:
        return None
    return {key.split("/", 1)[0] for key in keys if type(key) is str} - _BOOKKEEPING


class CheckpointRestoreWatcher:
    def __init__(self) -> None:
        self._hooks = MethodHooks()
        self.installed = False
        self._restores: list[tuple[weakref.ReferenceType[Any], str]] = []

    def install(self) -> bool:
        if self.installed:
            return True
        checkpoint_class = loaded_class(CHECKPOINT_MODULE, "Checkpoint")
        if checkpoint_class is None:
            return False
        self.installed = self._hooks.install(checkpoint_class, "restore", self._restore_hook)
        return self.installed

    def uninstall(self) -> None:
        self._hooks.restore()
        self.installed = False

    def begin_cell(self) -> None:
        self._restores = []

    def _restore_hook(self, original: Any) -> Any:
        watcher = self

        def restore_hook(checkpoint: Any, save_path: Any = None, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True  # hidden in IPython tracebacks
            result = original(checkpoint, save_path, *args, **kwargs)
            try:
                if type(save_path) is str and len(watcher._restores) < MAX_RESTORES:
                    watcher._restores.append((weakref.ref(checkpoint), save_path))
            except Exception:
                pass
            return result

        return restore_hook

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        restores, self._restores = self._restores, []
        found: list[Note] = []
        for reference, path in restores:
            checkpoint = reference()
            if checkpoint is None:
                continue
            tracked = _tracked(checkpoint)
            saved = _saved_names(path) if tracked else None
            if not saved:
                continue
            missing = [(name, obj) for name, obj in tracked if name not in saved]
            if missing:
                found.append(_note(checkpoint, missing, saved, source, namespace))
        return found


def _same_class_name(
    obj: Any, saved: set[str], namespace: Mapping[str, Any], own: Any
) -> str | None:
    """The saved name another checkpoint in the namespace gives an object of ``obj``'s
    class (the checkpoint that wrote the file, usually)."""
    for value in list(namespace.values()):
        if value is own or type(value) is not type(own):
            continue
        for name, tracked in _tracked(value):
            if name in saved and type(tracked) is type(obj):
                return name
    return None


def _construction(source: str, name: str | None) -> tuple[str, ast.Call] | None:
    if not name:
        return None
    tree = parsed_source(source)
    if tree is None:
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Call)
            and call_name(node.value) == "Checkpoint"
        ):
            text = ast.get_source_segment(source, node)
            if text and "\n" not in text:
                return text, node.value
    return None


def _note(
    checkpoint: Any,
    missing: list[tuple[str, Any]],
    saved: set[str],
    source: str,
    namespace: Mapping[str, Any],
) -> Note:
    name = name_bound_to(id(checkpoint), namespace)
    held = [
        (
            key,
            name_bound_to(id(obj), namespace),
            _same_class_name(obj, saved, namespace, checkpoint),
        )
        for key, obj in missing
    ]
    which = f"`{name}`" if name else "the checkpoint restored here"
    tracked = ", ".join(
        f"`{obj_name}` as `{key}`" if obj_name else f"`{key}`" for key, obj_name, _ in held
    )
    in_file = ", ".join(f"`{n}`" for n in sorted(saved)[:8])
    text = (
        f"{which} tracks {tracked}, but the checkpoint file holds only {in_file}: a "
        "checkpoint restores by the names objects were saved under, so nothing under "
        f"{'that name' if len(held) == 1 else 'those names'} was restored, and `restore` "
        "says nothing (it is lazy; its status was not checked)."
    )
    renamed = {key: new for key, _, new in held if new}
    written = _construction(source, name)
    if renamed and written is not None:
        statement, call = written
        fixed = statement
        for keyword in call.keywords:
            if keyword.arg in renamed:
                fixed = fixed.replace(f"{keyword.arg}=", f"{renamed[keyword.arg]}=", 1)
        text += (
            f" Track it under the name it was saved under: `{fixed}`; and check with "
            f"`{name}.restore(...).assert_existing_objects_matched()`."
        )
    else:
        text += (
            " Track each object under the name it was saved under, and check with "
            "`.restore(...).assert_existing_objects_matched()`."
        )
    return reports.note(text, SECTION)
