"""TFC027: a checkpoint restored by a ``tf.train.Checkpoint`` whose keys it was not saved under.

``tf.train.Checkpoint(net=model)`` files ``model``'s variables under the key ``net``. A
restore matches the keys of the restoring checkpoint against the saved ones, never the
objects: ``tf.train.Checkpoint(model=model).restore(path)`` on that file finds nothing under
``model``, restores nothing and raises nothing (the returned status is lazy).

Reliable statically only when the code shows both ends: the saving checkpoint (its keys
written out as keywords), what it writes to (a ``CheckpointManager`` that saves, a ``save``
prefix's folder, a ``write`` path, or the path ``save`` returns) and a second checkpoint
reading from the same place. Anything unknown (``**kwargs``, ``root=``, a name bound more
than once, several checkpoints writing to the place) keeps the rule silent.
"""

from __future__ import annotations

import ast
import os.path
from collections.abc import Iterator
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis.arguments import has_unpacking, keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Path, Scope, Site
from jupyterlab_tfcoach.analysis.positions import Range

CODE = "TFC027"
NAME = "checkpoint-keys-mismatch"
SEVERITY = Severity.WARNING
SECTION = "keras-saving"

DOCS = """
## What it does
Flags a `tf.train.Checkpoint(...)` whose `.restore(...)` or `.read(...)` reads files that
another `tf.train.Checkpoint(...)` of the same code saved under other keys: a key of the
restoring checkpoint that the saving one does not have, while one of the saving checkpoint's
keys is left unread (`net=model` saved, `model=model` restored).

The two read the same files when the restore reads a `CheckpointManager`'s
`latest_checkpoint` (or `checkpoints[-1]`) and that manager saves the other checkpoint;
`tf.train.latest_checkpoint(folder)` for the folder a manager or a `save(prefix)` writes to;
the path a `save()` call returned; or the path a `write(path)` call wrote. Names in those
expressions must be the same variables at both places. A checkpoint object used for both
saving and restoring, restoring a subset of the saved keys (the model without its
optimizer), another folder, keys passed as `**kwargs` or `root=`, and Keras saving
(`save_weights`, `.weights.h5`, `.keras`) are not reported.

The fix renames the restoring checkpoint's keys to the saving one's: a key naming the same
object as a saved key takes that key; one unmatched key on each side takes the other's.
Otherwise the message lists both sets of keys and offers no fix.

## Why is this bad?
A checkpoint files each object under the keyword it was given, and a restore matches those
keys, not the objects or their classes. Under a key that was never saved, the object finds
nothing: its variables keep their fresh values, training starts again from scratch, and
nothing raises, because `restore()` only returns a status that is checked when asked
(`status.assert_existing_objects_matched()`).

## Example
```python
manager = tf.train.CheckpointManager(tf.train.Checkpoint(net=model), folder, max_to_keep=2)
tf.train.Checkpoint(model=model).restore(manager.latest_checkpoint)
```

## Use instead
```python
checkpoint = tf.train.Checkpoint(net=model)
manager = tf.train.CheckpointManager(checkpoint, folder, max_to_keep=2)
checkpoint.restore(manager.latest_checkpoint)
```

Or restore with the keys that were saved: `tf.train.Checkpoint(net=model)`.

## Course module
Module 7, *Saving a Keras 3 model: the file name decides* (`keras-saving`), the part on
`tf.train.Checkpoint`.
"""

_CHECKPOINT = "tf.train.Checkpoint"
_MANAGER = "tf.train.CheckpointManager"
_LATEST = "tf.train.latest_checkpoint"

# Where a name is read: its scope and the blocks around it, for resolving it.
Where = tuple[Scope, Path]


@dataclass(frozen=True)
class _Place:
    """An expression naming a file or a folder, and where it is read."""

    node: ast.expr
    where: Where


@dataclass(frozen=True)
class _Save:
    """A call that writes a checkpoint: ``ckpt.save(prefix)``, ``ckpt.write(path)``,
    ``manager.save()``."""

    call: ast.Call
    checkpoint: ast.Call  # the ``tf.train.Checkpoint(...)`` call it writes
    manager: ast.Call | None
    folder: _Place | None  # the folder it writes into
    path: _Place | None  # the exact path (``write``)


def check(ctx: RuleContext) -> Iterator[Finding]:
    checkpoint_sites = ctx.calls_to(_CHECKPOINT)
    if len(checkpoint_sites) < 2:
        return
    keyed = {
        id(site.node): site
        for site in checkpoint_sites
        if isinstance(site.node, ast.Call) and _keys(site.node) is not None
    }
    if len(keyed) < 2:
        return
    managers = {id(site.node): site for site in ctx.calls_to(_MANAGER)}
    rule = _Reader(ctx, keyed, managers)
    saves = rule.saves()
    if not saves:
        return
    for site in ctx.calls_named("restore", "read"):
        call = site.node
        assert isinstance(call, ast.Call)
        if not isinstance(call.func, ast.Attribute):
            continue
        restoring = rule.checkpoint_of(call.func.value, (site.scope, site.path))
        if restoring is None:
            continue
        argument = _argument(call, "save_path")
        if argument is None:
            continue
        read = rule.saves_read_by(_Place(argument, (site.scope, site.path)), saves)
        saving = {id(save.checkpoint): save.checkpoint for save in read}
        if len(saving) != 1 or id(restoring) in saving:
            continue  # no saver, several (which wrote last is unknown), or the same object
        [saver] = saving.values()
        finding = _mismatch(ctx, restoring, saver, call)
        if finding is not None:
            yield finding


def _keys(call: ast.Call) -> dict[str, ast.keyword] | None:
    """The checkpoint's keys, when all are written out as keywords (no ``root``)."""
    if call.args or has_unpacking(call):
        return None
    keys = {item.arg: item for item in call.keywords if item.arg is not None}
    if not keys or "root" in keys:
        return None
    return keys


def _argument(call: ast.Call, name: str) -> ast.expr | None:
    return positional(call, 0) or keyword(call, name)


class _Reader:
    """Follows names to the checkpoints, managers and saves they are bound to."""

    def __init__(
        self, ctx: RuleContext, checkpoints: dict[int, Site], managers: dict[int, Site]
    ) -> None:
        self.ctx = ctx
        self.checkpoints = checkpoints
        self.managers = managers

    def bound_value(self, node: ast.expr, where: Where) -> tuple[ast.expr, Where] | None:
        """What a name holds when one assignment binds it; other expressions as they are."""
        if not isinstance(node, ast.Name):
            return node, where
        scope, path = where
        resolution = self.ctx.bindings.names.resolve(
            scope, node.id, (node.lineno, node.col_offset), path
        )
        if resolution is None or len(resolution.bindings) != 1:
            return None
        binding = resolution.bindings[0]
        if binding.kind != "assign" or binding.value is None:
            return None
        return binding.value, (binding.value_scope, binding.path)

    def checkpoint_of(self, node: ast.expr, where: Where) -> ast.Call | None:
        """The ``tf.train.Checkpoint(...)`` call (with keyword keys) ``node`` is."""
        found = self.bound_value(node, where)
        if found is None:
            return None
        value = found[0]
        return value if isinstance(value, ast.Call) and id(value) in self.checkpoints else None

    def manager_of(self, node: ast.expr, where: Where) -> ast.Call | None:
        found = self.bound_value(node, where)
        if found is None:
            return None
        value = found[0]
        return value if isinstance(value, ast.Call) and id(value) in self.managers else None

    def saves(self) -> list[_Save]:
        found: list[_Save] = []
        for site in self.ctx.calls_named("save", "write"):
            call = site.node
            assert isinstance(call, ast.Call)
            if not isinstance(call.func, ast.Attribute):
                continue
            where = (site.scope, site.path)
            receiver = call.func.value
            checkpoint = self.checkpoint_of(receiver, where)
            if checkpoint is not None:
                target = _argument(call, "file_prefix")
                if target is None:
                    continue
                place = _Place(target, where)
                if call.func.attr == "write":
                    found.append(_Save(call, checkpoint, None, _folder_of(place), place))
                else:
                    found.append(_Save(call, checkpoint, None, _folder_of(place), None))
                continue
            if call.func.attr != "save":
                continue
            manager = self.manager_of(receiver, where)
            if manager is None:
                continue
            manager_site = self.managers[id(manager)]
            manager_where = (manager_site.scope, manager_site.path)
            given = positional(manager, 0) or keyword(manager, "checkpoint")
            checkpoint = None if given is None else self.checkpoint_of(given, manager_where)
            if checkpoint is None:
                continue
            directory = positional(manager, 1) or keyword(manager, "directory")
            folder = None if directory is None else _Place(directory, manager_where)
            found.append(_Save(call, checkpoint, manager, folder, None))
        return found

    def saves_read_by(self, place: _Place, saves: list[_Save]) -> list[_Save]:
        """The saves whose files a restore of ``place`` reads."""
        found = self.bound_value(place.node, place.where)
        if found is None:
            return []
        node, where = found
        if isinstance(node, ast.Call) and any(save.call is node for save in saves):
            return [save for save in saves if save.call is node]  # the path save() returned
        # ``manager.latest_checkpoint``, ``manager.checkpoints[-1]``
        if isinstance(node, ast.Subscript):
            node = node.value
        if isinstance(node, ast.Attribute) and node.attr in ("latest_checkpoint", "checkpoints"):
            manager = self.manager_of(node.value, where)
            if manager is None:
                return []
            mine = [save for save in saves if save.manager is manager]
            folder = next((save.folder for save in mine if save.folder is not None), None)
            return mine + ([] if folder is None else self._into_folder(folder, saves, exclude=mine))
        if isinstance(node, ast.Call) and self.ctx.imports.resolve(node.func) == _LATEST:
            directory = _argument(node, "checkpoint_dir")
            if directory is None:
                return []
            return self._into_folder(_Place(directory, where), saves, exclude=[])
        here = _Place(node, where)
        return [
            save for save in saves if save.path is not None and self.same_place(save.path, here)
        ]

    def _into_folder(self, folder: _Place, saves: list[_Save], exclude: list[_Save]) -> list[_Save]:
        return [
            save
            for save in saves
            if save not in exclude
            and save.folder is not None
            and self.same_place(save.folder, folder)
        ]

    def same_place(self, first: _Place, second: _Place) -> bool:
        """The same expression, whose names are the same variables at both places, or the
        same string (written out, or a name bound once to it)."""
        a, b = self._string(first), self._string(second)
        if a is not None and b is not None:
            return _normal(a) == _normal(b)
        if ast.dump(first.node) != ast.dump(second.node):
            return False
        names = zip(_names(first.node), _names(second.node), strict=True)
        for one, other in names:
            a = self._binding_ids(one, first.where)
            b = self._binding_ids(other, second.where)
            if a is None or a != b:
                return False
        return True

    def _string(self, place: _Place) -> str | None:
        found = self.bound_value(place.node, place.where)
        if found is None or not isinstance(found[0], ast.Constant):
            return None
        value = found[0].value
        return value if isinstance(value, str) else None

    def _binding_ids(self, name: ast.Name, where: Where) -> frozenset[int] | None:
        scope, path = where
        resolution = self.ctx.bindings.names.resolve(
            scope, name.id, (name.lineno, name.col_offset), path
        )
        if resolution is None:
            return None
        return frozenset(id(binding) for binding in resolution.bindings)


def _names(node: ast.AST) -> list[ast.Name]:
    return [child for child in ast.walk(node) if isinstance(child, ast.Name)]


def _normal(path: str) -> str:
    return os.path.normpath(path.rstrip("/")) if path else path


def _folder_of(prefix: _Place) -> _Place | None:
    """The folder a ``save(prefix)`` writes into: ``D`` of ``os.path.join(D, "ckpt")``,
    ``D + "/ckpt"``, ``f"{D}/ckpt"``, ``Path(D) / "ckpt"``; the folder part of a string."""
    node = prefix.node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
        if len(node.args) == 1 and not node.keywords:
            node = node.args[0]
    folder: ast.expr | None = None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        head = os.path.dirname(node.value)
        folder = ast.Constant(head) if head else None
    elif isinstance(node, ast.Call) and _is_path_join(node.func) and len(node.args) == 2:
        folder = node.args[0]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        right = node.right
        if isinstance(right, ast.Constant) and str(right.value).startswith("/"):
            if "/" not in str(right.value)[1:]:
                folder = node.left
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left = node.left
        if isinstance(left, ast.Call) and len(left.args) == 1 and _is_path_class(left.func):
            left = left.args[0]
        if isinstance(node.right, ast.Constant):
            folder = left
    elif isinstance(node, ast.JoinedStr) and len(node.values) == 2:
        first, rest = node.values
        if (
            isinstance(first, ast.FormattedValue)
            and first.conversion == -1
            and first.format_spec is None
            and isinstance(rest, ast.Constant)
            and str(rest.value).startswith("/")
            and "/" not in str(rest.value)[1:]
        ):
            folder = first.value
    return None if folder is None else _Place(folder, prefix.where)


def _is_path_join(func: ast.expr) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "join"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "path"
    )


def _is_path_class(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "Path"


def _key_list(keys: list[str]) -> str:
    return ", ".join(f"`{key}`" for key in keys)


def _keys_phrase(keys: list[str]) -> str:
    return f"the key{'s' if len(keys) > 1 else ''} {_key_list(keys)}"


def _mismatch(
    ctx: RuleContext, restoring: ast.Call, saver: ast.Call, restore_call: ast.Call
) -> Finding | None:
    read_keys = _keys(restoring)
    saved_keys = _keys(saver)
    assert read_keys is not None and saved_keys is not None
    missing = [key for key in read_keys if key not in saved_keys]
    unread = [key for key in saved_keys if key not in read_keys]
    if not missing or not unread:
        return None  # every key was saved (a subset restores part), or nothing to rename to
    renames = _renames(read_keys, saved_keys, missing, unread)
    read = _argument(restore_call, "save_path")
    assert read is not None
    lost = ", ".join(f"`{ctx.short(read_keys[key].value, 30)}`" for key in missing)
    message = (
        f"`{ctx.short(restoring)}` restores `{ctx.short(read, 40)}` under "
        f"{_keys_phrase(list(read_keys))}, but that checkpoint was saved by "
        f"`{ctx.short(saver)}` under {_keys_phrase(list(saved_keys))}: a restore matches "
        f"the saved keys, not the objects, so {lost} finds nothing and keeps its fresh "
        "values, and nothing raises"
    )
    if renames is None:
        return ctx.finding(
            CODE,
            restoring,
            f"{message}. Restore with the keys it was saved under ({_key_list(unread)} for "
            "the objects they hold), or through the saving checkpoint itself",
        )
    renamed = ", ".join(
        f"{renames.get(key, key)}={ctx.text(item.value)}" for key, item in read_keys.items()
    )
    wanted = f"{ctx.text(restoring.func)}({renamed})"
    edits = []
    for key, new in renames.items():
        start = ctx.range_of(read_keys[key])
        edits.append(
            ctx.replace(Range(start.line, start.column, start.line, start.column + len(key)), new)
        )
    return ctx.finding(
        CODE,
        restoring,
        f"{message}. Restore with the saved keys: `{wanted}`",
        Fix("Use the keys the checkpoint was saved under", tuple(edits)),
    )


def _renames(
    read_keys: dict[str, ast.keyword],
    saved_keys: dict[str, ast.keyword],
    missing: list[str],
    unread: list[str],
) -> dict[str, str] | None:
    """The saved key for each restoring key that has none: the one holding the same object
    (the same source text), else the single one left on each side; None when unsure."""
    renames: dict[str, str] = {}
    free = list(unread)
    for key in missing:
        text = ast.dump(read_keys[key].value)
        same = [other for other in free if ast.dump(saved_keys[other].value) == text]
        if len(same) == 1:
            renames[key] = same[0]
            free.remove(same[0])
    left = [key for key in missing if key not in renames]
    if len(left) == 1 and len(free) == 1:
        renames[left[0]] = free[0]
    elif left:
        return None
    return renames
