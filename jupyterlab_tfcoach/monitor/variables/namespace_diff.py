"""Variables leaving the trainable parameters, seen by diffing the namespace per cell.

After each cell we classify every user name by ``type(value)`` only (never
``value.__class__``, ``isinstance`` or ``repr``: a hostile object's
``__getattr__``/``__class__``/``__eq__`` must not run) and keep just the kind of
each name and, for ``tf.Module``/Keras objects, the kinds of their attributes,
their layers' ``trainable`` flags and trainable-variable counts. Objects are
remembered by weak reference and id, never held.

None of these is read through the object's properties: a user's subclass may
override ``trainable``, ``trainable_variables`` or ``variables`` (and Keras's own
properties call such overrides on every sublayer), so flags, layers and variables
come from what TensorFlow and Keras store in the instances (``stored_state``).
"""

from __future__ import annotations

import ast
import itertools
import operator
import re
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note, VariableChange, note, variable_change
from jupyterlab_tfcoach.monitor.stored_state import (
    contained_values,
    instance_dict,
    keras_layers,
    keras_sublayers,
    keras_variables,
    library_attribute,
    stored,
    trainable_flag_in,
)
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source
from jupyterlab_tfcoach.monitor.tftypes import TfTypes
from jupyterlab_tfcoach.monitor.variables.kinds import (
    HOLDER_KINDS,
    KERAS_MODEL,
    TENSOR,
    TF_MODULE,
    TF_VARIABLE,
    VARIABLE_KINDS,
    KindClassifier,
    trainable_variables_of,
)

MAX_HOLDERS = 200
MAX_LAYERS_PER_MODEL = 2000
# Listing a tf.Module's trainable variables from its attributes costs ~1.5 us per variable
# (3 ms for 2,000; TensorFlow's own walk 2-5 times that): beyond this many items in its
# attributes it is not counted, as that would run after every cell.
MAX_MODULE_ITEMS = 2000
MAX_LAYER_WEIGHTS = 1000
_GRADIENT_CALLS = frozenset({"gradient", "jacobian", "batch_jacobian"})


@dataclass
class LayerMemo:
    """Which attributes of one layer held variables or tensors at the last scan."""

    ref: weakref.ReferenceType[Any]
    attribute_count: int
    kinds: dict[str, str]
    value_ids: tuple[int, ...] = ()  # ids of the values of ``kinds``' attributes, in order


@dataclass
class HolderSnapshot:
    """A tf.Module or Keras layer/model as plain data."""

    ref: weakref.ReferenceType[Any]
    label: str
    attribute_kinds: dict[str, str] = field(default_factory=dict)
    trainable_flags: dict[str, tuple[int, bool]] = field(default_factory=dict)  # path: (id, flag)
    trainable_count: int | None = None
    has_stale_train_step: bool = False
    # Keras's compiled train step as of this scan: a step that already existed
    # at the previous scan was built with the old trainable flags.
    train_function: weakref.ReferenceType[Any] | None = None
    # Each layer's trainable flag (by layer id) when that train step was first seen: the
    # setting it was traced with. A shared layer flipped back to it needs no compile of
    # this model, only of the models whose steps were traced with the other setting.
    step_flags: dict[int, bool] | None = None
    flag_values: tuple[Any, ...] = ()  # each layer's trainable flag, in layer order
    layer_ids: frozenset[int] = frozenset()  # the holder and its layers
    # tf.Module: ids of its attribute values and of the items of its lists/dicts.
    contents: tuple[Any, ...] | None = None


def _step_predates(snapshot: HolderSnapshot, layer_id: int, flag: bool) -> bool:
    """Whether the holder's train step, built before this cell, was traced with another
    trainable setting of the layer than ``flag`` (unknown setting: it was)."""
    if not snapshot.has_stale_train_step:
        return False
    traced = snapshot.step_flags.get(layer_id) if snapshot.step_flags is not None else None
    return traced is None or traced != flag


def _models_to_compile(
    compared: list[tuple[HolderSnapshot, HolderSnapshot, str]],
) -> dict[int, list[str]]:
    """For each layer whose trainable flag flipped in this cell: the models (their labels)
    whose train step predates the flip with the other setting. A layer shared by two
    models is in both; only those that fit with the old setting must compile again."""
    found: dict[int, list[str]] = {}
    for before, after, _kind in compared:
        if not after.has_stale_train_step:
            continue
        for path, (layer_id, old_flag) in before.trainable_flags.items():
            new = after.trainable_flags.get(path)
            if new is None or new[0] != layer_id or new[1] == old_flag:
                continue
            labels = found.setdefault(layer_id, [])
            if after.label not in labels and _step_predates(after, layer_id, new[1]):
                labels.append(after.label)
    return found


def _compiled_again(before: HolderSnapshot, after: HolderSnapshot) -> bool:
    """Whether the model's train step was dropped or replaced in this cell: compile()
    ran (it drops the step), then maybe fit() traced a new one."""
    if before.train_function is None:
        return False
    old_step = before.train_function()
    new_step = after.train_function() if after.train_function is not None else None
    return old_step is None or old_step is not new_step


def generated_layer_name(layer: Any) -> bool:
    """Whether Keras made the layer's name up (``sequential_3``: its class in snake case
    and a session counter the learner cannot know)."""
    name = stored(layer, "name")
    if type(name) is not str:
        return False
    cls = getattr(type(layer), "__name__", "") or ""
    prefix = re.sub("([a-z])([A-Z])", r"\1_\2", re.sub("(.)([A-Z][a-z]+)", r"\1_\2", cls)).lower()
    return name == prefix or re.fullmatch(re.escape(prefix) + r"_\d+", name) is not None


def nested_flips(snapshot: HolderSnapshot, flipped: set[int]) -> set[int]:
    """Ids of flipped layers inside another flipped layer of the same holder (only read
    when flags changed)."""
    holder = snapshot.ref()
    if holder is None or len(flipped) < 2:
        return set()
    inside: set[int] = set()
    # The holder itself counts: ``clf.trainable = False`` on the model flips every layer
    # under it, and that is one cause, told on ``clf``.
    for layer in keras_layers(holder, MAX_LAYERS_PER_MODEL):
        if id(layer) in flipped and id(layer) not in inside:
            inside.update(id(sub) for sub in keras_layers(layer, MAX_LAYERS_PER_MODEL)[1:])
    return inside & flipped


def _module_contents(module: Any) -> tuple[Any, ...] | None:
    """What a tf.Module holds, as ids: its attribute values and the items of its lists,
    tuples and dicts (``m.ws[0] = ...`` changes no attribute). None when it holds more than
    ``MAX_MODULE_ITEMS`` items: too big to walk every cell."""
    attributes = instance_dict(module)
    if attributes is None:
        return None
    parts: list[Any] = []
    items = 0
    for name, value in list(attributes.items()):
        parts.append((name, id(value)))
        contained = contained_values(value)
        if contained is not None:
            items += len(contained)
            if items > MAX_MODULE_ITEMS:
                return None
            parts.append(tuple(map(id, contained)))
    return tuple(parts)


class VariableWatcher:
    """Per-cell diff of variable kinds in the user namespace and its modules."""

    def __init__(self, types: TfTypes) -> None:
        self.classifier = KindClassifier(types)
        # name -> (id of its value, kind) as of the last scan; only ints and strings.
        self._names: dict[str, tuple[int, str | None]] = {}
        # Names bound to tf.Module/Keras objects: these are re-read every cell
        # because they change in place.
        self._holder_names: dict[str, str] = {}
        # The namespace's keys and value ids at the last scan, to find what changed.
        self._keys: list[Any] = []
        self._ids: list[int] = []
        self._holders: dict[int, HolderSnapshot] = {}
        self._layer_memos: dict[int, LayerMemo] = {}
        self._has_baseline = False
        self._attributes_hooked = False
        self._hooked_holders: frozenset[int] | set[int] = frozenset()
        self._namespace: Mapping[str, Any] = {}
        # Set by the monitor: the user's traced training steps that use given variables.
        self.stale_training_steps: Callable[[set[int]], list[str]] | None = None

    def refresh_types(self, types: TfTypes) -> None:
        self.classifier = KindClassifier(types)
        self._keys = []  # kinds may be known now that were not: classify everything again
        self._names = {}

    def known_kind(self, name: str) -> str | None:
        """The kind ``name`` had at the last scan (before the cell that is ending)."""
        known = self._names.get(name)
        return known[1] if known is not None else None

    def scan(
        self,
        namespace: Mapping[str, Any],
        hidden: Mapping[str, Any],
        attributes_hooked: bool = False,
        hooked_holders: frozenset[int] | set[int] = frozenset(),
    ) -> tuple[list[VariableChange], list[Note]]:
        """Changes since the previous scan (none on the first: it sets the baseline).

        ``attributes_hooked``: the setattr hook reports attribute rebinds (with
        their line), so the snapshot diff does not report them again;
        ``hooked_holders``: objects it reported, whose trainable count is then
        the same news told twice.
        """
        self._attributes_hooked = attributes_hooked
        self._hooked_holders = hooked_holders
        self._namespace = namespace
        changes: list[VariableChange] = []
        notes: list[Note] = []
        # Keys and value ids are listed by C code (no Python step per name); a cell
        # rebinds a few names and IPython appends _i<n>, so usually only a handful of
        # positions differ from the previous cell and only those are looked at.
        keys = list(namespace)
        ids = list(map(id, namespace.values()))
        known = len(self._keys)
        if (
            self._has_baseline
            and len(keys) == len(ids)
            and len(keys) >= known
            and keys[:known] == self._keys
        ):
            changed = list(itertools.compress(range(known), map(operator.ne, ids, self._ids)))
            changed.extend(range(known, len(keys)))
            items = [(keys[i], namespace.get(keys[i])) for i in changed]
            self._scan_names(items, changes, notes)
        else:
            self._holder_names = {}
            visited = self._scan_names(list(namespace.items()), changes, notes)
            if len(self._names) > visited:
                # Names were deleted: forget them, so `del w` then `w = tensor` later
                # is not taken for a rebinding.
                self._names = {n: e for n, e in self._names.items() if n in namespace}
        self._keys = keys
        self._ids = ids
        changes.extend(self._scan_holders(self._current_holders(namespace, hidden)))
        self._has_baseline = True
        return changes, notes

    def _scan_names(
        self,
        items: Iterable[tuple[Any, Any]],
        changes: list[VariableChange],
        notes: list[Note],
    ) -> int:
        """Classify names whose value changed; returns how many names were looked at.

        A name still bound to the same object (same id) keeps its kind without
        the object being touched: after a cell that traced, reading 1,000 cold
        objects would cost more than the whole rest of the report.
        """
        names = self._names
        holder_names = self._holder_names
        kind_of = self.classifier.kind_of
        baseline = self._has_baseline
        visited = 0
        for name, value in items:
            # IPython adds _i<n>/_<n> names every cell: skip those before anything else.
            if type(name) is not str or name.startswith("_"):
                continue
            visited += 1
            value_id = id(value)
            known = names.get(name)
            if known is not None and known[0] == value_id:
                kind = known[1]
            else:
                kind = kind_of(value)
                names[name] = (value_id, kind)
                if baseline and known is not None and kind == TENSOR:
                    if known[1] in VARIABLE_KINDS:
                        changes.append(self._rebound(name, known[1]))  # type: ignore[arg-type]
                elif baseline and kind == TF_VARIABLE and self._gradient_source(name):
                    untrainable = self._untrainable_variable_note(name, value)
                    if untrainable:
                        notes.append(untrainable)
            if kind is not None and kind in HOLDER_KINDS:
                holder_names[name] = kind
            else:
                holder_names.pop(name, None)
        return visited

    def holders(
        self, namespace: Mapping[str, Any], hidden: Mapping[str, Any]
    ) -> list[tuple[str, Any, str]]:
        """(name, object, kind) of the tf.Module/Keras objects the last scan found
        (a fresh list: nothing here keeps them alive)."""
        return self._current_holders(namespace, hidden)

    def _current_holders(
        self, namespace: Mapping[str, Any], hidden: Mapping[str, Any]
    ) -> list[tuple[str, Any, str]]:
        holders: list[tuple[str, Any, str]] = []
        seen: set[int] = set()
        for name, kind in list(self._holder_names.items()):
            value = namespace.get(name)
            if value is None or (name in hidden and hidden[name] is value):
                continue
            if id(value) not in seen and len(holders) < MAX_HOLDERS:
                seen.add(id(value))
                holders.append((name, value, kind))
        return holders

    # ------------------------------------------------------------ top level
    @staticmethod
    def _rebound(name: str, before: str) -> VariableChange:
        text = (
            f"`{name}` held a {before} and now holds a tf.Tensor: arithmetic such as "
            f"`{name} = {name} - lr * grad` makes a new tensor instead of updating the variable. "
            "The variable stops training and tape.gradient with respect to the tensor is None. "
            f"Update it in place: `{name}.assign_sub(lr * grad)` (or assign / assign_add)."
        )
        return variable_change(
            name, "rebound_to_tensor", before, TENSOR, text, "rebinding-variables"
        )

    def _gradient_source(self, name: str) -> bool:
        """Whether the cell that is ending gives ``name`` to a tape as a source
        (``tape.gradient(loss, [w, name])``): only then is an untrainable variable news. An
        accumulator slot or a step counter is created with trainable=False on purpose."""
        history = self._namespace.get("In")
        try:
            source = history[-1] if isinstance(history, list) and history else ""
        except Exception:
            return False
        if not isinstance(source, str) or name not in source or "gradient" not in source:
            return False
        tree = parsed_source(source)
        if tree is None:
            return False
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or call_name(node) not in _GRADIENT_CALLS:
                continue
            sources = [*node.args[1:], *(k.value for k in node.keywords if k.arg == "sources")]
            if any(
                isinstance(read, ast.Name) and read.id == name
                for given in sources
                for read in ast.walk(given)
            ):
                return True
        return False

    @staticmethod
    def _untrainable_variable_note(name: str, value: Any) -> Note | None:
        trainable = library_attribute(value, "trainable")
        if trainable is not False:
            return None
        return note(
            f"`{name}` is a tf.Variable with trainable=False: a GradientTape does not watch it, "
            f"so tape.gradient(..., {name}) is None. If `{name}` should learn, create it with "
            "`trainable=True`.",
            "tape-watch",
        )

    # -------------------------------------------------------------- holders
    def _scan_holders(self, holders: list[tuple[str, Any, str]]) -> list[VariableChange]:
        changes: list[VariableChange] = []
        snapshots: dict[int, HolderSnapshot] = {}
        memos: dict[int, LayerMemo] = {}
        # A layer reachable from two names (the model and the layer itself) is reported once.
        reported_layers: set[int] = set()
        compared: list[tuple[HolderSnapshot, HolderSnapshot, str]] = []
        for label, holder, kind in holders:
            previous = self._holders.get(id(holder))
            if previous is not None and previous.ref() is not holder:
                previous = None
            try:
                snapshot = self._snapshot(label, holder, kind, previous, memos)
            except Exception:
                continue
            snapshots[id(holder)] = snapshot
            if (previous is None and stored(holder, "compiled") is True) or (
                previous is not None and _compiled_again(previous, snapshot)
            ):
                # A model new in this cell and compiled, or compiled again in it: a layer
                # frozen for it is frozen the right way, whatever older models sharing
                # that layer would do (the learner is training this one).
                reported_layers.update(snapshot.layer_ids)
            if self._has_baseline and previous is not None and snapshot is not previous:
                compared.append((previous, snapshot, kind))
        retrain = _models_to_compile(compared)
        for previous, snapshot, kind in compared:
            changes.extend(self._holder_changes(previous, snapshot, kind, reported_layers, retrain))
        self._holders = snapshots
        self._layer_memos = memos
        return changes

    @staticmethod
    def _layers_of(holder: Any, kind: str) -> list[Any]:
        if kind == TF_MODULE:
            return [holder]
        return keras_layers(holder, MAX_LAYERS_PER_MODEL)

    @staticmethod
    def _path(holder: Any, layer: Any) -> str:
        if layer is holder:
            return ""
        layer_name = stored(layer, "name")
        return f".get_layer({layer_name!r})" if type(layer_name) is str else ".get_layer(?)"

    def _attribute_kinds(
        self,
        layer: Any,
        attributes: dict[str, Any] | None,
        full: bool,
        memos: dict[int, LayerMemo],
    ) -> bool:
        """Record which attributes of ``layer`` hold variables/tensors; True if unchanged.

        A Keras layer has ~60 attributes and a model may have hundreds of layers.
        Rebinding an attribute does not change how many a layer has, so while
        that count is unchanged only the attributes that held variables or
        tensors are looked at again. ``full`` forces a complete read (tf.Module:
        usually small, and ``self.w = None`` then a variable is a common pattern).
        """
        if attributes is None:
            attributes = {}
        kind_of = self.classifier.kind_of
        memo = self._layer_memos.get(id(layer))
        if memo is not None and memo.ref() is not layer:
            memo = None
        if (
            not full
            and memo is not None
            and memo.attribute_count == len(attributes)
            and tuple(map(id, map(attributes.get, memo.kinds))) == memo.value_ids
        ):
            # Same attributes bound to the same objects: nothing to classify (C-level check).
            memos[id(layer)] = memo
            return True
        kinds: dict[str, str] = {}
        if full or memo is None or memo.attribute_count != len(attributes):
            for attribute, value in list(attributes.items()):
                value_kind = kind_of(value)
                if (value_kind in VARIABLE_KINDS or value_kind == TENSOR) and type(
                    attribute
                ) is str:
                    kinds[attribute] = value_kind  # type: ignore[assignment]
        else:
            for attribute in memo.kinds:
                value_kind = kind_of(attributes.get(attribute))
                if value_kind in VARIABLE_KINDS or value_kind == TENSOR:
                    kinds[attribute] = value_kind  # type: ignore[assignment]
        value_ids = tuple(map(id, map(attributes.get, kinds)))
        if memo is not None and memo.attribute_count == len(attributes) and kinds == memo.kinds:
            memo.value_ids = value_ids
            memos[id(layer)] = memo
            return True
        memos[id(layer)] = LayerMemo(weakref.ref(layer), len(attributes), kinds, value_ids)
        return False

    def _snapshot(
        self,
        label: str,
        holder: Any,
        kind: str,
        previous: HolderSnapshot | None,
        memos: dict[int, LayerMemo],
    ) -> HolderSnapshot:
        layers = self._layers_of(holder, kind)
        full = kind == TF_MODULE
        unchanged = True
        flags: list[Any] = []
        for layer in layers:
            attributes = instance_dict(layer)  # read once: kinds and flag come from it
            if id(layer) not in memos:
                unchanged = self._attribute_kinds(layer, attributes, full, memos) and unchanged
            if kind != TF_MODULE:
                flags.append(trainable_flag_in(attributes) if attributes is not None else None)
        flag_values = tuple(flags)
        contents = _module_contents(holder) if kind == TF_MODULE else None
        previous_contents = previous.contents if previous is not None else None
        # Keras reuses a traced train step until compile() resets it to None. It is
        # stale only if it was built before this cell: `trainable = False` then the
        # first fit() in one cell builds a step that already sees the new flag.
        train_function = stored(holder, "train_function") if kind == KERAS_MODEL else None
        train_function_ref = None
        if train_function is not None:
            try:
                train_function_ref = weakref.ref(train_function)
            except TypeError:
                train_function_ref = None
        stale_train_step = (
            train_function is not None
            and previous is not None
            and previous.train_function is not None
            and previous.train_function() is train_function
        )
        step_flags: dict[int, bool] | None = None
        if stale_train_step:
            step_flags = previous.step_flags if previous is not None else None
        elif train_function_ref is not None and kind != TF_MODULE:
            # A step new since the last scan (a fit in this cell): traced with these flags.
            step_flags = {
                id(layer): flag
                for layer, flag in zip(layers, flags, strict=False)
                if type(flag) is bool
            }
        if (
            unchanged
            and (kind != TF_MODULE or (contents is not None and contents == previous_contents))
            and previous is not None
            and previous.label == label
            and previous.flag_values == flag_values
        ):
            # The common case: nothing moved, so no per-layer strings or dicts are built
            # and Keras' trainable_variables walk (~0.15 ms for 50 layers) is skipped.
            previous.has_stale_train_step = stale_train_step
            previous.train_function = train_function_ref
            previous.step_flags = step_flags
            return previous
        snapshot = HolderSnapshot(
            ref=weakref.ref(holder),
            label=label,
            flag_values=flag_values,
            layer_ids=frozenset(map(id, layers)),
        )
        snapshot.has_stale_train_step = stale_train_step
        snapshot.train_function = train_function_ref
        snapshot.step_flags = step_flags
        snapshot.contents = contents
        for index, layer in enumerate(layers):
            path = f"{label}{self._path(holder, layer)}"
            for attribute, value_kind in memos[id(layer)].kinds.items():
                snapshot.attribute_kinds[f"{path}.{attribute}"] = value_kind
            if kind != TF_MODULE and type(flag_values[index]) is bool:
                snapshot.trainable_flags[path] = (id(layer), flag_values[index])
        if kind != TF_MODULE or contents is not None:
            trainable = trainable_variables_of(holder, kind, self.classifier.kind_of)
            snapshot.trainable_count = len(trainable) if trainable is not None else None
        return snapshot

    def trainable_count(self, holder: Any) -> int | None:
        """How many trainable variables ``holder`` had at the last scan (None: not counted,
        e.g. a tf.Module too big to walk every cell)."""
        snapshot = self._holders.get(id(holder))
        if snapshot is None or snapshot.ref() is not holder:
            return None
        return snapshot.trainable_count

    def _holder_changes(
        self,
        before: HolderSnapshot,
        after: HolderSnapshot,
        kind: str,
        reported_layers: set[int],
        retrain: dict[int, list[str]],
    ) -> list[VariableChange]:
        """``retrain``: for each flipped layer, the models whose train step still has the
        old setting (``_models_to_compile``), all named in the one entry for the layer."""
        changes: list[VariableChange] = []
        for path, old_kind in before.attribute_kinds.items():
            if self._attributes_hooked:
                break
            new_kind = after.attribute_kinds.get(path)
            if old_kind in VARIABLE_KINDS and new_kind == TENSOR:
                changes.append(self._attribute_rebound(path, old_kind, kind))
        # A train step that existed and is gone (dead reference: compile() dropped it) or
        # was replaced.
        if _compiled_again(before, after):
            # compile() ran in this cell (it drops the old train step): a trainable flag
            # changed together with it is the correct way to freeze, nothing to say.
            return changes
        flags_changed = False
        flipped = [
            (path, layer_id, old_flag, new[1])
            for path, (layer_id, old_flag) in before.trainable_flags.items()
            if (new := after.trainable_flags.get(path)) is not None
            and new[0] == layer_id
            and new[1] != old_flag
        ]
        # `base.trainable = False` on a nested model flips its layers' flags too: one
        # cause, told once, for the outermost layer that flipped.
        inside = nested_flips(after, {layer_id for _, layer_id, _, _ in flipped})
        for path, layer_id, old_flag, new_flag in flipped:
            flags_changed = True
            if layer_id in reported_layers or layer_id in inside:
                continue
            namesake = self._namesake(after, layer_id, new_flag)
            if namesake is not None:
                # The learner froze one object and builds with another of the same name
                # (a name rebound to a reloaded model's layer): the flag they meant to set
                # is not on the object their code uses.
                reported_layers.add(layer_id)
                path = self._user_path(path, layer_id, after)
                changes.append(_namesake_flag(path, old_flag, new_flag, *namesake))
                continue
            stale_step = _step_predates(after, layer_id, new_flag)
            stale_steps = [] if stale_step else self._stale_steps(after, layer_id)
            if not stale_step and not stale_steps:
                # Nothing trained with the old setting is still around (no fit() yet, or
                # compile() ran, or the training step was traced again): freezing or
                # unfreezing this way is right, nothing to say. (Not marked as reported:
                # a model holding this layer may still have a stale train step.)
                continue
            reported_layers.add(layer_id)
            path = self._user_path(path, layer_id, after)
            models = retrain.get(layer_id, [after.label]) if stale_step else []
            changes.append(self._trainable_flag(path, old_flag, new_flag, models, stale_steps))
        if (
            before.trainable_count is not None
            and after.trainable_count is not None
            and before.trainable_count != after.trainable_count
            and before.trainable_count > 0
            and not flags_changed  # the count follows the flags: one cause, one entry
            and not self._hooked_holders.intersection(before.layer_ids)
        ):
            changes.append(self._trainable_count(after.label, before.trainable_count, after))
        return changes

    @staticmethod
    def _attribute_rebound(path: str, before: str, holder_kind: str) -> VariableChange:
        if holder_kind == TF_MODULE:
            consequence = (
                "It has left the module's trainable_variables, so an optimizer no longer "
                "updates it."
            )
        else:
            consequence = (
                "Keras still lists the old variable in trainable_weights but its gradient is "
                "None: a fit() traced earlier keeps silently training the old variable, and "
                "after compile() fit() warns 'Gradients do not exist for variables' and "
                "trains only the other weights (it fails with 'No gradients provided for any "
                "variable' when none is left)."
            )
        text = (
            f"`{path}` held a {before} and now holds a tf.Tensor (e.g. `{path} = {path} - 0.1`). "
            f"{consequence} Update the variable in place with `{path}.assign(...)` / "
            "assign_sub(...)."
        )
        return variable_change(
            path, "attribute_rebound", before, TENSOR, text, "rebinding-variables"
        )

    def _user_path(self, path: str, layer_id: int, snapshot: HolderSnapshot) -> str:
        """The learner's own name for a layer Keras named itself (``base`` for a nested
        ``Sequential`` called ``sequential_3`` by a session counter), else ``path``."""
        holder = snapshot.ref()
        layer = (
            next(
                (
                    item
                    for item in keras_layers(holder, MAX_LAYERS_PER_MODEL)
                    if id(item) == layer_id
                ),
                None,
            )
            if holder is not None
            else None
        )
        # A name the learner may have written (`Scaled(name="scaled")`) stays; a counter
        # suffix, or a whole model used as a layer (`sequential`), is Keras's own.
        if layer is None or not generated_layer_name(layer):
            return path
        name = stored(layer, "name")
        if not re.search(r"_\d+$", name) and not keras_sublayers(layer):
            return path
        return name_bound_to(layer_id, self._namespace) or path

    def _namesake(
        self, snapshot: HolderSnapshot, layer_id: int, flag: bool
    ) -> tuple[str, str] | None:
        """(a name this cell uses, the Keras name) when that name holds another layer or
        model with the flipped layer's Keras name, whose flag is still the old one: the
        learner set the flag on an object their name no longer reaches."""
        holder = snapshot.ref()
        if holder is None:
            return None
        layer = next(
            (item for item in self._layers_of(holder, KERAS_MODEL) if id(item) == layer_id), None
        )
        keras_name = stored(layer, "name") if layer is not None else None
        history = self._namespace.get("In")
        try:
            source = history[-1] if isinstance(history, list) and history else ""
        except Exception:
            return None
        if type(keras_name) is not str or not isinstance(source, str) or keras_name not in source:
            return None
        for name, value in list(self._namespace.items())[:MAX_NAMESAKE_NAMES]:
            if (
                value is layer
                or value is holder
                or name.startswith("_")
                or not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", source)
            ):
                continue
            try:
                attributes = instance_dict(value)
                if stored(value, "name") != keras_name or attributes is None:
                    continue
                if trainable_flag_in(attributes) is not (not flag):
                    continue
                if not any(k.__name__ == "Layer" for k in type(value).__mro__):
                    continue
            except Exception:
                continue
            return name, keras_name
        return None

    def _stale_steps(self, snapshot: HolderSnapshot, layer_id: int) -> list[str]:
        """Names of the user's traced training steps that still use the layer's variables."""
        if self.stale_training_steps is None:
            return []
        holder = snapshot.ref()
        if holder is None:
            return []
        layer = next(
            (item for item in self._layers_of(holder, KERAS_MODEL) if id(item) == layer_id), None
        )
        if layer is None:
            return []
        variable_ids: set[int] = set()
        weights = keras_variables(layer, with_seed_state=False, limit=MAX_LAYER_WEIGHTS)
        for variable in weights[:MAX_LAYER_WEIGHTS]:
            variable_ids.add(id(variable))
            # A Keras variable keeps its tf.Variable in ``value``: graphs capture that one.
            inner = library_attribute(variable, "value")
            if inner is not None:
                variable_ids.add(id(inner))
        return self.stale_training_steps(variable_ids)

    @staticmethod
    def _trainable_flag(
        path: str,
        before: bool,
        after: bool,
        models: list[str],
        stale_steps: list[str] | tuple[str, ...] = (),
    ) -> VariableChange:
        moved = "leave" if not after else "join"
        text = (
            f"`{path}.trainable` changed from {before} to {after}: its weights {moved} the "
            "model's trainable variables."
        )
        if len(models) == 1:
            text += (
                " A model compiled earlier keeps training it until compile() runs again: "
                "the train step fit() already traced still uses the old setting. Call "
                f"`{models[0]}.compile(...)` again, with the same arguments, before the "
                "next fit()."
            )
        elif models:
            calls = " and ".join(f"`{model}.compile(...)`" for model in models)
            text += (
                f" The layer is shared by {len(models)} models whose fit() traced a train "
                "step with the old setting, and each keeps it until compile() runs again: "
                f"call {calls} again, each with its own arguments, before the next fit()."
            )
        elif stale_steps:
            names = ", ".join(f"`{name}`" for name in stale_steps)
            step = stale_steps[0].rsplit(".", 1)[-1]
            text += (
                f" {names} traced before this change and keeps using the variables it was "
                f"traced with, so it still {'trains' if not after else 'skips'} them. Run "
                f"the `@tf.function def {step}(...)` definition again (only that, not the "
                "cell that builds the model) before training."
            )
        return variable_change(
            f"{path}.trainable", "trainable_flag", before, after, text, "trainable-weights"
        )

    @staticmethod
    def _trainable_count(label: str, before: int, snapshot: HolderSnapshot) -> VariableChange:
        after = snapshot.trainable_count
        text = f"`{label}` now has {after} trainable variables (it had {before})."
        if after is not None and after < before:
            text += (
                " Variables that left the list are no longer updated by training (a frozen "
                "layer, or an attribute rebound to a tensor)."
            )
        return variable_change(label, "trainable_count", before, after, text, "trainable-weights")


MAX_NAMESAKE_NAMES = 2000


def _namesake_flag(
    path: str, before: bool, after: bool, name: str, keras_name: str
) -> VariableChange:
    """The flag set on one object while the cell builds with another of the same name."""
    state = "trainable" if before else "frozen"
    text = (
        f"`{path}.trainable` changed from {before} to {after}, but `{name}`, which this cell "
        f"uses, is another object also named {keras_name!r}: `{name}` was bound to it "
        f"later (a reloaded model's layer, a copy), so it is still {state} and so is every "
        f"model built from it. Set the flag on the object the cell uses: "
        f"`{name}.trainable = {after}`."
    )
    return variable_change(
        f"{path}.trainable", "trainable_flag", before, after, text, "trainable-weights"
    )
