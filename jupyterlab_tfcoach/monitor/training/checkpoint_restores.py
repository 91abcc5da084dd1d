"""A ``tf.train.Checkpoint.restore`` that matched nothing: the objects keep their weights.

A checkpoint restores by the names objects were saved under: saved with
``tf.train.Checkpoint(model=model)``, restored into ``tf.train.Checkpoint(net=new_model)``,
nothing has the name ``net`` in the file and nothing is restored. ``restore`` is lazy and
returns a status no one checks: no error, ``new_model`` keeps its fresh random weights.

A hook on ``Checkpoint.restore`` (``hooks.py``; the original runs first, as it is) keeps,
weakly, each checkpoint restored in the cell, the names it tracks (read then: a checkpoint
made on the spot, ``tf.train.Checkpoint(gen=fresh).restore(path)``, is gone after the
statement) and the path it was given (a string). After the cell, for each: those names
(``_self_unconditional_checkpoint_dependencies``, read from its ``__dict__``) against the
names the file's root object saved (TensorFlow's checkpoint reader: the object graph the
file stores, else the first part of its keys; one read of the file's index per restore). A
tracked name the file does not hold is told, with the names the file does hold and, when
another checkpoint in the namespace tracks an object of the same class under one of those
names (of several, the one holding the missing name or held in it), the construction
rewritten with that name. Nothing is built or traced; a restore that matched every name is
silent.
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
GRAPH_PROTO_MODULE = "tensorflow.core.protobuf.trackable_object_graph_pb2"
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


Tracked = tuple[str, Any]  # a tracked name and a weak reference (or a callable giving None)


def _weak(obj: Any) -> Any:
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: None


def _saved_names(path: str) -> set[str] | None:
    """The names the file's root object saved its children under: from the object graph
    the file stores (a variable reached first through an optimizer is keyed under the
    optimizer's name, so the variable keys alone can miss a model), else the keys' first
    parts."""
    reader_module = sys.modules.get(READER_MODULE)
    make_reader = getattr(reader_module, "NewCheckpointReader", None)
    if make_reader is None:
        return None
    try:
        reader = make_reader(path)
        keys = reader.get_variable_to_shape_map()
    except Exception:
        return None
    from_graph = _root_children(reader)
    if from_graph:
        return from_graph - _BOOKKEEPING
    return {key.split("/", 1)[0] for key in keys if type(key) is str} - _BOOKKEEPING


def _root_children(reader: Any) -> set[str] | None:
    graph_module = sys.modules.get(GRAPH_PROTO_MODULE)
    graph_class = getattr(graph_module, "TrackableObjectGraph", None)
    if graph_class is None:
        return None
    try:
        graph = graph_class()
        graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
        return {child.local_name for child in graph.nodes[0].children}
    except Exception:
        return None


class CheckpointRestoreWatcher:
    def __init__(self) -> None:
        self._hooks = MethodHooks()
        self.installed = False
        self._restores: list[tuple[weakref.ReferenceType[Any], list[Tracked], str]] = []

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
                    tracked = [(name, _weak(obj)) for name, obj in _tracked(checkpoint)]
                    watcher._restores.append((weakref.ref(checkpoint), tracked, save_path))
            except Exception:
                pass
            return result

        return restore_hook

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        restores, self._restores = self._restores, []
        found: list[Note] = []
        for reference, tracked, path in restores:
            saved = _saved_names(path) if tracked else None
            if not saved:
                continue
            missing = [(name, obj()) for name, obj in tracked if name not in saved]
            if missing:
                found.append(_note(reference(), missing, saved, source, namespace))
        return found


def _same_class_name(
    key: str, obj: Any, saved: set[str], namespace: Mapping[str, Any], own: Any
) -> str | None:
    """The saved name another checkpoint in the namespace gives an object of ``obj``'s
    class (the checkpoint that wrote the file, usually); of several such names, the one
    that holds ``key`` or is held in it (``gen`` for ``generator``), else none."""
    if obj is None:
        return None
    candidates: list[str] = []
    for value in list(namespace.values()):
        if value is own or type(value).__name__ != "Checkpoint":
            continue
        for name, tracked in _tracked(value):
            if name in saved and type(tracked) is type(obj) and name not in candidates:
                candidates.append(name)
    if len(candidates) > 1:
        candidates = [name for name in candidates if key in name or name in key]
    return candidates[0] if len(candidates) == 1 else None


def _construction(source: str, name: str | None, keys: set[str]) -> tuple[str, ast.Call] | None:
    """The cell's ``name = tf.train.Checkpoint(...)``; for a checkpoint bound to no name,
    the cell's one ``Checkpoint(...)`` call given one of ``keys``."""
    tree = parsed_source(source)
    if tree is None:
        return None
    if name:
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
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and call_name(node) == "Checkpoint"
        and any(keyword.arg in keys for keyword in node.keywords)
    ]
    if len(calls) != 1:
        return None
    text = ast.get_source_segment(source, calls[0])
    return (text, calls[0]) if text and "\n" not in text else None


def _note(
    checkpoint: Any,
    missing: list[tuple[str, Any]],
    saved: set[str],
    source: str,
    namespace: Mapping[str, Any],
) -> Note:
    name = name_bound_to(id(checkpoint), namespace) if checkpoint is not None else None
    held = [
        (
            key,
            name_bound_to(id(obj), namespace) if obj is not None else None,
            _same_class_name(key, obj, saved, namespace, checkpoint),
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
    written = _construction(source, name, {key for key, _, _ in held})
    if renamed and written is not None:
        statement, call = written
        fixed = statement
        for keyword in call.keywords:
            if keyword.arg in renamed:
                fixed = fixed.replace(f"{keyword.arg}=", f"{renamed[keyword.arg]}=", 1)
        text += (
            f" Track it under the name it was saved under: `{fixed}`; and check with "
            f"`{name or fixed}.restore(...).assert_existing_objects_matched()`."
        )
    else:
        text += (
            " Track each object under the name it was saved under, and check with "
            "`.restore(...).assert_existing_objects_matched()`."
        )
    return reports.note(text, SECTION)
