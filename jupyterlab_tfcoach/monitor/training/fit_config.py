"""Silent mistakes in what a Keras 3 ``fit``/``evaluate``/``predict`` call was given.

``fit_watch.py`` calls ``FitConfigWatcher.before``/``after`` around each of these calls
(once per call, never per step); what they read is what Keras stores, never a user
property (``stored_state``), and what is kept is plain data, ids and weak references:

- callbacks whose ``mode`` contradicts their ``monitor`` (``EarlyStopping``,
  ``ModelCheckpoint``, ``ReduceLROnPlateau`` and their subclasses): the direction the
  callback compared in (its ``monitor_op`` after fit, else its ``mode``) against the
  direction of the quantity (a loss goes down; a compiled metric's ``_direction``, as
  Keras's ``mode="auto"`` reads it; else the metric's name);
- a ``Normalization`` layer never adapted nor given ``mean``/``variance``: its stored
  mean is all zeros and its variance all ones, so it passes its inputs through unchanged
  (the other layers that need ``adapt`` in Keras 3.15, ``TextVectorization``,
  ``StringLookup``, ``IntegerLookup`` and ``Discretization``, raise instead: the error
  families tell those);
- a layer frozen (``trainable = False``) after the model's first ``fit`` in the same
  cell, then fit again without ``compile``: the train step Keras traced keeps updating
  its weights. Only when the frozen weights really moved during that fit (compared like
  ``fit_watch`` compares trainable ones). A flip in a later cell is the namespace diff's
  (``variables/namespace_diff.py``: it sees the step built in an earlier cell);
- a layer made trainable after the train step ``fit`` reuses was built (in any cell),
  none of whose weights changed during that fit (``StaleUnfreezeRecord``, named from the
  learner's statements by ``stale_unfreezes.py``);
- a model made by ``keras.models.clone_model`` then evaluated or used to predict with
  the random weights it was built with. ``clone_model`` is hooked through the two helpers
  it calls (``_clone_sequential_model``, ``_clone_functional_model``, looked up in its
  module's globals at each call, so a ``from keras.models import clone_model`` made before
  the hook is still seen); the clone's weights get a checksum then, and the same checksum
  at ``evaluate``/``predict`` means no ``fit``, ``set_weights`` or ``load_weights`` ran.

``config_entries`` turns a cell's records into entries in the user's names. Nothing here
imports TensorFlow or prints; every failure of our own work is swallowed.
"""

from __future__ import annotations

import ast
import sys
import threading
import time
import weakref
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.hooks import MethodHooks
from jupyterlab_tfcoach.monitor.names import name_bound_to, name_or_item_bound_to
from jupyterlab_tfcoach.monitor.report import Note, VariableChange, variable_change
from jupyterlab_tfcoach.monitor.stored_state import (
    contained_values,
    instance_dict,
    is_library_class,
    keras_layers,
    keras_variables,
    library_attribute,
    stored,
    trainable_flag_in,
)
from jupyterlab_tfcoach.monitor.training.fit_logs import (
    EmptyRun,
    UnseenMonitor,
    logs_notes,
    read_logs,
)
from jupyterlab_tfcoach.monitor.training.stale_unfreezes import unfreeze_entry
from jupyterlab_tfcoach.monitor.variables.namespace_diff import generated_layer_name

CALLBACK_SECTION = "callback-mode"
ADAPT_SECTION = "preprocessing-adapt"
CLONE_SECTION = "clone-model"
FROZEN_SECTION = "trainable-weights"
CLONING_MODULE = "keras.src.models.cloning"
CLONE_HELPERS = ("_clone_sequential_model", "_clone_functional_model")
MONITOR_CALLBACKS = ("EarlyStopping", "ModelCheckpoint", "ReduceLROnPlateau")
MAX_LAYERS = 500
MAX_WEIGHTS = 2000
MAX_CALLBACKS = 20
MAX_CLONES = 50
MAX_ELEMENTS = 1_000_000
READ_BUDGET_S = 0.010
WARM_UP_READS = 4
FIT_ARGUMENTS = ("x", "y", "batch_size", "epochs", "verbose", "callbacks")
# Names of metrics that go down as the model improves, and up (as a last resort: the
# compiled metric's own ``_direction`` is read first).
DOWN_WORDS = ("loss", "error", "mse", "mae", "mape", "msle", "crossentropy", "hinge", "logcosh")
UP_WORDS = ("acc", "auc", "precision", "recall", "f1", "iou", "top_k")


@dataclass
class CallbackRecord:
    """One monitoring callback whose direction contradicts its monitored quantity."""

    callback_id: int
    class_name: str  # the Keras class it is or extends
    own_class: str  # its own class (a user's subclass)
    monitor: str
    mode: str
    compares: str  # "up" or "down": what the callback took for better
    model_id: int
    settings: dict[str, Any] = field(default_factory=dict)
    epochs_run: int | None = None
    epochs_asked: int | None = None


@dataclass
class UnadaptedRecord:
    layer: weakref.ReferenceType[Any]
    model_id: int
    method: str
    data_id: int | None
    data_is_dataset: bool
    takes_model_input: bool
    index: int | None  # its position in ``model.layers`` (a Sequential)


@dataclass
class StaleFreezeRecord:
    model_id: int
    layer: weakref.ReferenceType[Any]
    moved: int  # weights of the frozen layer that changed in this fit
    weights: int


@dataclass
class StaleUnfreezeRecord:
    """A layer made trainable after the model's train step was built, then fit again
    without compile: none of its weights changed in that fit."""

    model: weakref.ReferenceType[Any]
    layer: weakref.ReferenceType[Any]
    weights: int  # the layer's weights, none of which changed
    variable_ids: frozenset[int]


@dataclass
class CloneRecord:
    clone_id: int
    source_id: int | None
    method: str
    # The model the call ran on, when the clone is one of its layers (a cloned base
    # inside a new Sequential).
    inside_id: int | None = None


@dataclass
class CellConfig:
    callbacks: list[CallbackRecord] = field(default_factory=list)
    unadapted: list[UnadaptedRecord] = field(default_factory=list)
    stale: list[StaleFreezeRecord] = field(default_factory=list)
    unfrozen: list[StaleUnfreezeRecord] = field(default_factory=list)
    clones: list[CloneRecord] = field(default_factory=list)
    # What fit/evaluate logged against what was asked (``fit_logs.py``).
    logs: list[UnseenMonitor | EmptyRun] = field(default_factory=list)


@dataclass
class _StepBuilt:
    """The flags a model's layers had when Keras built the train step it still uses."""

    model: weakref.ReferenceType[Any]
    step: weakref.ReferenceType[Any]
    flags: dict[int, bool]
    cell: int


@dataclass
class _Clone:
    model: weakref.ReferenceType[Any]
    source: weakref.ReferenceType[Any] | None
    checksum: tuple[int, ...]


@dataclass
class _Token:
    method: str
    frozen: tuple[Any, list[tuple[Any, Any]]] | None = None  # (layer, [(variable, copy)])
    unfrozen: tuple[Any, list[tuple[Any, Any]]] | None = None  # the same, made trainable


def _mro_names(obj: Any) -> list[str]:
    return [getattr(k, "__name__", "") for k in type(obj).__mro__ if is_library_class(k)]


def _keras_class(obj: Any, names: tuple[str, ...]) -> str | None:
    """The first of ``names`` that is a Keras class ``obj`` is or extends."""
    for name in _mro_names(obj):
        if name in names:
            return name
    return None


def _numpy(value: Any) -> Any | None:
    """A NumPy copy of a Keras variable's or an eager tensor's values (TensorFlow's own
    ``numpy``; a Keras variable keeps its ``tf.Variable`` in ``value``)."""
    backing = library_attribute(value, "value")
    numpy = library_attribute(backing if backing is not None else value, "numpy")
    if numpy is None:
        return None
    return numpy()


def _weight_copies(layer: Any) -> list[tuple[Any, Any]]:
    """Each weight of the layer and its sublayers in their own trainable lists (Keras 3
    keeps a frozen layer's weights there, flagged untrainable), with a copy of its values."""
    copies = []
    copied = 0
    for sub in keras_layers(layer, MAX_LAYERS):
        own = contained_values(stored(sub, "_trainable_variables")) or []
        for variable in own[:MAX_WEIGHTS]:
            values = _numpy(variable)
            if values is None or copied + values.size > MAX_ELEMENTS:
                continue
            copied += values.size
            copies.append((variable, values.copy()))
    return copies


def _unchanged(variable: Any, before: Any) -> bool:
    after = _numpy(variable)
    return after is not None and after.shape == before.shape and not (after != before).any()


def _checksum(variables: list[Any]) -> tuple[int, ...] | None:
    """A CRC of each variable's bytes; None when unknown or over the budget."""
    sums = []
    total = 0
    deadline = time.perf_counter() + READ_BUDGET_S
    for index, variable in enumerate(variables[:MAX_WEIGHTS]):
        # The first reads of a session pay TensorFlow's warm-up (~5 ms): the budget
        # counts from the fifth weight on.
        if index == WARM_UP_READS:
            deadline = time.perf_counter() + READ_BUDGET_S
        values = _numpy(variable)
        if values is None or (index > WARM_UP_READS and time.perf_counter() > deadline):
            return None
        total += int(values.size)
        if total > MAX_ELEMENTS:
            return None
        sums.append(zlib.crc32(values.tobytes()))
    return tuple(sums)


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    if name in kwargs:
        return kwargs[name]
    index = FIT_ARGUMENTS.index(name)
    return args[index] if len(args) > index else None


class FitConfigWatcher:
    """Reads what each ``fit``/``evaluate``/``predict`` was given; hooks ``clone_model``."""

    def __init__(self) -> None:
        self._hooks = MethodHooks()
        self._lock = threading.Lock()
        self._cell = CellConfig()
        self._cell_number = 0
        self._steps: dict[int, _StepBuilt] = {}
        self._clones: dict[int, _Clone] = {}

    def install(self) -> None:
        cloning = sys.modules.get(CLONING_MODULE)
        if cloning is None:
            return
        for name in CLONE_HELPERS:
            self._hooks.install(cloning, name, self._clone_hook)  # type: ignore[arg-type]

    def uninstall(self) -> None:
        self._hooks.restore()

    def begin_cell(self) -> None:
        with self._lock:
            self._cell = CellConfig()
            self._cell_number += 1

    def take(self) -> CellConfig:
        with self._lock:
            cell, self._cell = self._cell, CellConfig()
        return cell

    # ---------------------------------------------------------------- hooks
    def _clone_hook(self, original: Any) -> Any:
        watcher = self

        def clone_hook(model: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            clone = original(model, *args, **kwargs)
            try:
                watcher._record_clone(model, clone)
            except Exception:
                pass
            return clone

        return clone_hook

    def before(
        self, method: str, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> _Token | None:
        try:
            token = _Token(method)
            self._check_clone(method, model)
            if method == "fit":
                token.frozen = self._frozen_since_step(model)
                token.unfrozen = self._unfrozen_since_step(model)
            return token
        except Exception:
            return None

    def after(
        self,
        token: _Token | None,
        model: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
    ) -> None:
        if token is None:
            return
        try:
            if token.method in ("fit", "evaluate"):
                records = read_logs(token.method, args, kwargs, result)
                with self._lock:
                    self._cell.logs.extend(records[: MAX_CALLBACKS - len(self._cell.logs)])
            if token.method == "fit":
                self._callbacks(model, args, kwargs, result)
                self._after_fit_steps(model, token)
            self._unadapted(model, token.method, args, kwargs)
        except Exception:
            pass

    # ------------------------------------------------------------ callbacks
    def _callbacks(
        self, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any], history: Any
    ) -> None:
        given = _argument(args, kwargs, "callbacks")
        callbacks = contained_values(given, sequences_only=True) if given is not None else None
        if not callbacks:
            return
        epochs = stored(history, "epoch") if history is not None else None
        asked = _argument(args, kwargs, "epochs")
        for callback in callbacks[:MAX_CALLBACKS]:
            record = _contradiction(callback, model)
            if record is None:
                continue
            record.epochs_run = len(epochs) if type(epochs) is list else None
            record.epochs_asked = asked if type(asked) is int else None
            with self._lock:
                if not any(r.callback_id == record.callback_id for r in self._cell.callbacks):
                    self._cell.callbacks.append(record)

    # -------------------------------------------------------- normalization
    def _unadapted(
        self, model: Any, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        layers = keras_layers(model, MAX_LAYERS)
        for layer in layers[1:]:
            if _keras_class(layer, ("Normalization",)) is None or not _passes_through(layer):
                continue
            with self._lock:
                if any(r.layer() is layer for r in self._cell.unadapted):
                    continue
            data = _argument(args, kwargs, "x")
            first, index = _takes_model_input(model, layer)
            record = UnadaptedRecord(
                layer=weakref.ref(layer),
                model_id=id(model),
                method=method,
                data_id=id(data) if data is not None else None,
                data_is_dataset=data is not None and "DatasetV2" in _mro_names(data),
                takes_model_input=first,
                index=index,
            )
            with self._lock:
                self._cell.unadapted.append(record)

    # ---------------------------------------------------- frozen after fit
    def _frozen_since_step(self, model: Any) -> tuple[Any, list[tuple[Any, Any]]] | None:
        """The outermost layer frozen since the model's train step was built in this
        cell, with copies of its weights (None when nothing was)."""
        built = self._steps.get(id(model))
        step = stored(model, "train_function")
        if (
            built is None
            or built.model() is not model
            or step is None
            or built.step() is not step
            or built.cell != self._cell_number
        ):
            return None
        inside: set[int] = set()
        for layer in keras_layers(model, MAX_LAYERS)[1:]:
            if id(layer) in inside:
                continue
            attributes = instance_dict(layer)
            flag = trainable_flag_in(attributes) if attributes is not None else None
            if flag is False and built.flags.get(id(layer)) is True:
                # The weights the old step trains: each layer's own trainable list
                # (Keras 3 keeps a frozen layer's weights there, flagged untrainable).
                copies = _weight_copies(layer)
                return (layer, copies) if copies else None
            inside.update(id(sub) for sub in keras_layers(layer, MAX_LAYERS)[1:])
        return None

    def _unfrozen_since_step(self, model: Any) -> tuple[Any, list[tuple[Any, Any]]] | None:
        """The outermost layer made trainable since the model's train step was built (in
        any cell: the step fit reuses is the evidence), with copies of its weights."""
        built = self._steps.get(id(model))
        step = stored(model, "train_function")
        if built is None or built.model() is not model or step is None or built.step() is not step:
            return None
        inside: set[int] = set()
        for layer in keras_layers(model, MAX_LAYERS)[1:]:
            if id(layer) in inside:
                continue
            attributes = instance_dict(layer)
            flag = trainable_flag_in(attributes) if attributes is not None else None
            if flag is True and built.flags.get(id(layer)) is False:
                copies = _weight_copies(layer)
                return (layer, copies) if copies else None
            inside.update(id(sub) for sub in keras_layers(layer, MAX_LAYERS)[1:])
        return None

    def _after_fit_steps(self, model: Any, token: _Token) -> None:
        if token.frozen is not None:
            layer, copies = token.frozen
            moved = 0
            for variable, before in copies:
                after = _numpy(variable)
                if after is not None and after.shape == before.shape and (after != before).any():
                    moved += 1
            if moved:
                record = StaleFreezeRecord(id(model), weakref.ref(layer), moved, len(copies))
                with self._lock:
                    self._cell.stale.append(record)
        if token.unfrozen is not None:
            layer, copies = token.unfrozen
            still = [variable for variable, before in copies if _unchanged(variable, before)]
            if len(still) == len(copies):
                unfrozen = StaleUnfreezeRecord(
                    weakref.ref(model), weakref.ref(layer), len(copies), frozenset(map(id, still))
                )
                with self._lock:
                    self._cell.unfrozen.append(unfrozen)
        step = stored(model, "train_function")
        built = self._steps.get(id(model))
        if step is None or (built is not None and built.model() is model and built.step() is step):
            return
        flags = {}
        for layer in keras_layers(model, MAX_LAYERS):
            attributes = instance_dict(layer)
            flag = trainable_flag_in(attributes) if attributes is not None else None
            if type(flag) is bool:
                flags[id(layer)] = flag
        self._steps = {k: v for k, v in self._steps.items() if v.model() is not None}
        self._steps[id(model)] = _StepBuilt(
            weakref.ref(model), weakref.ref(step), flags, self._cell_number
        )

    # ----------------------------------------------------------------- clones
    def _record_clone(self, source: Any, clone: Any) -> None:
        variables = keras_variables(clone, with_seed_state=False, limit=MAX_WEIGHTS)
        checksum = _checksum(variables) if variables else ()
        if checksum is None:
            return
        with self._lock:
            self._clones = {k: v for k, v in self._clones.items() if v.model() is not None}
            if len(self._clones) >= MAX_CLONES:
                return
            self._clones[id(clone)] = _Clone(weakref.ref(clone), weakref.ref(source), checksum)

    def _check_clone(self, method: str, model: Any) -> None:
        """The model called, or any layer of it, made by clone_model and still holding the
        weights it was made with (``check = Sequential([base_copy, head])``)."""
        if not self._clones:
            return
        for layer in keras_layers(model, MAX_LAYERS):
            self._check_one_clone(method, layer, None if layer is model else model)

    def _check_one_clone(self, method: str, model: Any, inside: Any) -> None:
        clone = self._clones.get(id(model))
        if clone is None or clone.model() is not model:
            return
        del self._clones[id(model)]  # told once; after fit, set_weights... nothing to tell
        if method == "fit":
            return
        variables = keras_variables(model, with_seed_state=False, limit=MAX_WEIGHTS)
        if not clone.checksum or _checksum(variables) != clone.checksum:
            return
        source = clone.source() if clone.source is not None else None
        record = CloneRecord(
            id(model),
            id(source) if source is not None else None,
            method,
            id(inside) if inside is not None else None,
        )
        with self._lock:
            self._cell.clones.append(record)


def _direction_of(monitor: str, model: Any) -> str | None:
    """Which way ``monitor`` goes as the model improves: as Keras's ``mode="auto"``
    decides (a loss goes down; a compiled metric by its ``_direction``), else by name."""
    metric = monitor.removeprefix("val_")
    if "loss" in metric:
        return "down"
    compiled = stored(model, "_compile_metrics")
    for group in ("_flat_metrics", "_flat_weighted_metrics"):
        for listed in contained_values(stored(compiled, group), sequences_only=True) or ():
            for candidate in contained_values(stored(listed, "metrics")) or ():
                if stored(candidate, "name") == metric:
                    direction = stored(candidate, "_direction")
                    if direction in ("up", "down"):
                        return "up" if direction == "up" else "down"
    lowered = metric.lower()
    if any(word in lowered for word in DOWN_WORDS):
        return "down"
    if any(word in lowered for word in UP_WORDS):
        return "up"
    return None


def _contradiction(callback: Any, model: Any) -> CallbackRecord | None:
    class_name = _keras_class(callback, MONITOR_CALLBACKS)
    if class_name is None:
        return None
    monitor, mode = stored(callback, "monitor"), stored(callback, "mode")
    if type(monitor) is not str or type(mode) is not str:
        return None
    operation = getattr(stored(callback, "monitor_op"), "__name__", None)
    compares = {"greater": "up", "less": "down"}.get(operation or "") or {
        "max": "up",
        "min": "down",
    }.get(mode)
    expected = _direction_of(monitor, model)
    if compares is None or expected is None or compares == expected:
        return None
    if class_name == "ModelCheckpoint" and stored(callback, "save_best_only") is not True:
        return None  # it saves every epoch: the monitor is not used
    settings: dict[str, Any] = {}
    for key in (
        "patience",
        "restore_best_weights",
        "stopped_epoch",
        "best_epoch",
        "start_from_epoch",
        "filepath",
        "save_best_only",
        "save_weights_only",
        "factor",
        "min_lr",
        "cooldown",
    ):
        value = stored(callback, key)
        if type(value) in (int, float, bool, str):
            settings[key] = value
    return CallbackRecord(
        callback_id=id(callback),
        class_name=class_name,
        own_class=getattr(type(callback), "__name__", class_name),
        monitor=monitor,
        mode=mode,
        compares=compares,
        model_id=id(model),
        settings=settings,
    )


def _passes_through(layer: Any) -> bool:
    """A built ``Normalization`` given no ``mean``/``variance`` whose stored mean is all
    zeros and variance all ones: what ``build`` starts from until ``adapt`` runs."""
    if stored(layer, "input_mean") is not None or stored(layer, "built") is not True:
        return False
    mean, variance = stored(layer, "mean"), stored(layer, "variance")
    if mean is None or variance is None:
        return False
    means, variances = _numpy(mean), _numpy(variance)
    if means is None or variances is None or means.size > MAX_ELEMENTS:
        return False
    return bool((means == 0).all()) and bool((variances == 1).all())


def _takes_model_input(model: Any, layer: Any) -> tuple[bool, int | None]:
    """Whether ``layer`` gets the model's input as given to fit (the first layer of a
    Sequential, or a functional model's layer right after its only Input), and its
    index in ``model.layers``."""
    operations = stored(model, "_operations")
    if type(operations) is not list:
        operations = contained_values(stored(model, "_layers"), sequences_only=True) or []
    public = [o for o in operations if type(o).__name__ != "InputLayer"]
    inputs = len(operations) - len(public)
    index = next((i for i, o in enumerate(public) if o is layer), None)
    single_input = inputs <= 1 and len(contained_values(stored(model, "_inputs")) or [None]) <= 1
    return index == 0 and single_input, index


# ------------------------------------------------------------------ entries
class _Entries:
    def __init__(self, namespace: Mapping[str, Any], cell_source: str) -> None:
        self.namespace = namespace
        self.cell_source = cell_source
        self.variables: list[VariableChange] = []
        self.notes: list[Note] = []

    def name(self, object_id: int | None) -> str | None:
        return name_bound_to(object_id, self.namespace)

    def keras(self) -> str:
        """How the learner's namespace reaches Keras, so the printed code runs there."""
        for name, spelled in (("keras", "keras"), ("tf", "tf.keras")):
            if isinstance(self.namespace.get(name), ModuleType):
                return spelled
        return "keras"

    def compile_call(self, model_name: str) -> str | None:
        """``<model>.compile(...)`` as this cell wrote it, or None."""
        try:
            tree = ast.parse(self.cell_source)
        except SyntaxError:
            return None
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "compile"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == model_name
            ):
                return ast.get_source_segment(self.cell_source, node)
        return None

    # -------------------------------------------------------------- callbacks
    def callback(self, record: CallbackRecord) -> None:
        name = self.name(record.callback_id)
        keras = self.keras()
        who = f"`{name}` ({record.class_name})" if name else f"the {record.class_name} given to fit"
        better = "higher" if record.compares == "up" else "lower"
        right_mode = "min" if record.compares == "up" else "max"
        worst = "highest" if record.compares == "up" else "lowest"
        kind = "a loss" if record.compares == "up" else "a score"
        improves = "falls" if record.compares == "up" else "rises"
        does = self._callback_effect(record, worst, improves)
        arguments = _callback_arguments(record, right_mode)
        fix = ""
        if arguments is not None and record.own_class == record.class_name:
            made = f"{keras}.callbacks.{record.class_name}({arguments})"
            fix = f"`{name} = {made}`" if name else f"`callbacks=[{made}]`"
            fix = (
                f" Create it with mode={right_mode!r} (or leave mode out: 'auto' reads the "
                f"direction from the metric) and fit again: {fix}."
            )
        else:
            fix = f' Pass `mode="{right_mode}"` (or leave mode out: "auto" reads it).'
        text = (
            f"{who} watches {record.monitor!r} with mode={record.mode!r}: it takes a {better} "
            f"{record.monitor} for an improvement, but {record.monitor!r} is {kind} "
            f"(it {improves} as the model improves). {does}{fix}"
        )
        self.notes.append(reports.note(text, CALLBACK_SECTION))

    @staticmethod
    def _callback_effect(record: CallbackRecord, worst: str, improves: str) -> str:
        settings = record.settings
        monitor = record.monitor
        if record.class_name == "EarlyStopping":
            patience = settings.get("patience", 0)
            ran = record.epochs_run
            asked = record.epochs_asked
            stopped = settings.get("stopped_epoch", 0)
            if ran is None or ran == patience + 1:
                said = (
                    f"While {monitor} {improves}, no epoch beats the first, so it stops "
                    f"training after patience + 1 = {patience + 1} epochs"
                )
            else:
                # An epoch that beat the best by chance starts the wait again: say so, or
                # the count contradicts the epochs the fit ran.
                said = (
                    f"While {monitor} {improves}, the callback counts an epoch as better "
                    f"only when {monitor} gets worse, so it stops training early, after "
                    f"{patience} epochs in a row without such an epoch"
                )

            if stopped and ran is not None:
                said += f" (this fit ran {ran}" + (f" of {asked}" if asked else "") + " epochs)"
            said += "."
            best = settings.get("best_epoch")
            if settings.get("restore_best_weights") is True and type(best) is int:
                said += (
                    f" restore_best_weights=True then put back the weights of epoch "
                    f"{best + 1}, the one with the {worst} {monitor}: the worst it saw."
                )
            return said
        if record.class_name == "ModelCheckpoint":
            path = settings.get("filepath")
            where = f" in {path!r}" if type(path) is str else ""
            return (
                f"With save_best_only=True it keeps the epoch with the {worst} {monitor}"
                f"{where}: the worst weights, not the best."
            )
        factor = settings.get("factor", 0.1)
        patience = settings.get("patience", 10)
        return (
            f"While {monitor} {improves} it sees a plateau and multiplies the learning rate "
            f"by {factor} every {patience + 1} epochs, slowing the training that works."
        )

    # -------------------------------------------------------------- adapt
    def unadapted(self, record: UnadaptedRecord) -> None:
        layer = record.layer()
        if layer is None:
            return
        model_name = self.name(record.model_id)
        name = self.name(id(layer))
        if name is None and model_name and record.index is not None:
            name = f"{model_name}.layers[{record.index}]"
        who = f"`{name}`" if name else "a Normalization layer"
        in_model = f" in `{model_name}`" if model_name else ""
        data = self.name(record.data_id)
        text = (
            f"{who}{in_model} was never adapted and was given no mean or variance, so it "
            f"normalizes with mean 0 and variance 1: it passes its inputs through unchanged "
            f"and the {record.method} ran on unscaled features."
        )
        compile_again = (
            f" then compile `{model_name}` again (a fit or predict that already ran keeps "
            f"the values it was traced with), and fit."
            if model_name
            else " then compile the model again and fit."
        )
        if name and data and record.takes_model_input:
            adapt = (
                f"{name}.adapt({data}.map(lambda x, y: x))"
                if record.data_is_dataset
                else f"{name}.adapt({data})"
            )
            text += f" Learn the statistics from the training inputs: `{adapt}`,{compile_again}"
        elif name:
            text += (
                f" Call `{name}.adapt(...)` on the values that reach it (the training "
                f"inputs),{compile_again}"
            )
        else:
            text += " Call its `adapt` on the training inputs before compiling and fitting."
        self.notes.append(reports.note(text, ADAPT_SECTION))

    # ---------------------------------------------------------- frozen
    def stale_freeze(self, record: StaleFreezeRecord) -> None:
        layer = record.layer()
        model_name = self.name(record.model_id)
        if layer is None or model_name is None:
            return
        name = self.name(id(layer))
        if name is None or not generated_layer_name(layer):
            layer_name = stored(layer, "name")
            name = (
                f"{model_name}.get_layer({layer_name!r})"
                if type(layer_name) is str and not generated_layer_name(layer)
                else name
            )
        if name is None:
            return
        compiled = self.compile_call(model_name)
        again = (
            f"`{compiled}`" if compiled else f"`{model_name}.compile(...)` with the same arguments"
        )
        text = (
            f"`{name}.trainable = False` came after `{model_name}` was fit in this cell, and "
            f"fit ran again without compile(): Keras reused the train step it had traced, "
            f"which still updates those weights ({record.moved} of {record.weights} of "
            f"`{name}`'s weights changed during that fit). Call {again} again after setting "
            f"trainable and before fit."
        )
        self.variables.append(
            variable_change(
                f"{name}.trainable", "trainable_flag", True, False, text, FROZEN_SECTION
            )
        )

    def stale_unfreeze(self, record: StaleUnfreezeRecord) -> None:
        layer, model = record.layer(), record.model()
        if layer is None or model is None:
            return
        entry = unfreeze_entry(model, layer, record.weights, self.namespace, self.cell_source)
        if entry is not None:
            self.variables.append(entry)

    # ------------------------------------------------------------ clones
    def clone(self, record: CloneRecord) -> None:
        clone = self.name(record.clone_id)
        # The source may be one model of a list (an ensemble's ``models[0]``).
        source = name_or_item_bound_to(record.source_id, self.namespace)
        if clone is None:
            return
        fix = (
            f" Copy the trained weights before using it: "
            f"`{clone}.set_weights({source}.get_weights())`."
            if source
            else " Copy the trained model's weights into it with `set_weights` before using it."
        )
        inside = self.name(record.inside_id) if record.inside_id is not None else None
        call = f"this {record.method}" + (f" of `{inside}`, which holds it," if inside else ",")
        text = (
            f"`{clone}` was made by clone_model, which copies a model's layers, not its "
            f"weights: it starts from new random weights, and no fit, set_weights or "
            f"load_weights changed them before {call} so its results are "
            f"those of an untrained model.{fix}"
        )
        self.notes.append(reports.note(text, CLONE_SECTION))


def _callback_arguments(record: CallbackRecord, mode: str) -> str | None:
    """The callback's constructor arguments as stored, with the right mode; None for a
    class whose arguments are not all known."""
    settings = record.settings
    parts: list[str] = []
    if record.class_name == "ModelCheckpoint":
        path = settings.get("filepath")
        if type(path) is not str:
            return None
        parts.append(repr(path))
    parts += [f'monitor="{record.monitor}"', f'mode="{mode}"']
    defaults: dict[str, tuple[tuple[str, Any], ...]] = {
        "EarlyStopping": (
            ("patience", 0),
            ("start_from_epoch", 0),
            ("restore_best_weights", False),
        ),
        "ModelCheckpoint": (("save_best_only", False), ("save_weights_only", False)),
        "ReduceLROnPlateau": (("factor", 0.1), ("patience", 10), ("cooldown", 0), ("min_lr", 0.0)),
    }
    for key, default in defaults.get(record.class_name, ()):
        value = settings.get(key, default)
        if value != default:
            parts.append(f"{key}={value!r}")
    return ", ".join(parts)


def config_entries(
    cell: CellConfig | None, namespace: Mapping[str, Any], cell_source: str
) -> tuple[list[VariableChange], list[Note]]:
    """The entries of one cell's records (none for a cell with nothing recorded)."""
    if cell is None or not (
        cell.callbacks or cell.unadapted or cell.stale or cell.unfrozen or cell.clones or cell.logs
    ):
        return [], []
    entries = _Entries(namespace, cell_source)
    for build, records in (
        (entries.callback, cell.callbacks),
        (entries.unadapted, cell.unadapted),
        (entries.stale_freeze, cell.stale),
        (entries.stale_unfreeze, cell.unfrozen),
        (entries.clone, cell.clones),
    ):
        for record in records:
            try:
                build(record)  # type: ignore[operator]
            except Exception:
                continue
    return entries.variables, entries.notes + logs_notes(cell.logs, namespace, cell_source)
