"""What one Keras 3 ``fit`` did to the model's weights and logs, measured during the call.

Keras 3 with the TensorFlow backend defines ``fit``, ``evaluate`` and ``predict`` on
``keras.src.backend.tensorflow.trainer.TensorFlowTrainer``; ``hooks.MethodHooks`` wraps
them there (a user's model calls them once per cell, never per step).

Around ``fit`` the hook copies the values of the model's trainable weights (as Keras
stores them, ``stored_state.keras_trainable_variables``: no user property runs), lets
``fit`` run, and compares: a weight either changed or did not; whether it was all zeros
before is kept too. The copies are dropped before the hook returns, so what is kept is
ids, Keras paths, shapes and flags. The cost, paid once per ``fit`` call inside the cell,
is one read (an eager op, ~0.1 ms) and one copy per weight before and after: ~1 ms for a
learner's 3-layer model (``benchmarks/bench_monitor.py``). Weights over
``MAX_ELEMENTS_PER_WEIGHT`` values are not copied, nor any once ``MAX_ELEMENTS_COPIED``
values were or ``COPY_BUDGET_S`` has passed: they count as unknown, and the report says
nothing that would need them.

After ``fit`` the hook also keeps fit's ``History.history`` (a small dict of per-epoch
floats), whether the model's ``train_step`` is the user's own, whether Keras's loss
tracker counted anything, the names of metrics whose state is still all zeros (never
updated), and whether the optimizer stepped. ``evaluate``/``predict`` record only the
model's class (a weak reference): its ``call`` may hard-code ``training=True``; and the
model and which of the two ran (weakly), for ``model_source.py``.

Around ``evaluate`` of a model whose class defines its own ``test_step`` (fit's
validation included) the hook copies the trainable weights and reads the optimizer's
step count the same way, and keeps how many weights changed and how many steps the
optimizer took (``EvaluationRun``): a test step only measures, and a change there is a
test step that trains (``step_modes.py``). Other models' evaluate pays one class lookup.

After each ``fit`` that returned, ``sequence_masks.read_masked_zeros`` counts the rows of
its inputs holding 0 as a token under an ``Embedding(mask_zero=True)`` (only for models
holding one). The optimizer's step count before and after fit is kept for
``learning_rate_decay.py``.

After each ``fit`` and ``evaluate`` that returned (not fit's own validation ``evaluate``),
``loss_agreement.read_setup`` reads the model's last layer, compiled loss and metrics and
the labels given (a few dict reads and one pass over the labels), kept in ``setups``.
After each ``compile`` that returned (Keras 3's ``Trainer.compile``, hooked here too),
``loss_agreement.read_compiled`` reads the last layer and the loss and metrics given,
kept in ``compiles`` (``compile_agreement.py``): compile builds and traces nothing, and
neither does the hook.

After each ``predict`` that returned, ``run_outcomes.constant_prediction`` compares its rows
(one pass over at most a few thousand rows of the result and of the inputs): rows all alike
for inputs that differ are kept in ``predictions``.

Nothing here imports TensorFlow or prints; every failure of our own work is swallowed
and the user's call runs exactly once with its arguments.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.hooks import MethodHooks
from jupyterlab_tfcoach.monitor.stored_state import (
    class_namespace_lookup,
    contained_values,
    is_library_class,
    keras_tracked_metrics,
    keras_trainable_variables,
    keras_variables,
    library_attribute,
    stored,
)
from jupyterlab_tfcoach.monitor.tftypes import loaded_class
from jupyterlab_tfcoach.monitor.training.evaluation_augmentation import (
    AugmentationWatcher,
    CellAugmentation,
)
from jupyterlab_tfcoach.monitor.training.fit_config import CellConfig, FitConfigWatcher
from jupyterlab_tfcoach.monitor.training.global_normalization import (
    GlobalNormalization,
    global_normalization,
)
from jupyterlab_tfcoach.monitor.training.input_ranges import CellRanges, RangeWatcher
from jupyterlab_tfcoach.monitor.training.loss_agreement import (
    MAX_SETUPS,
    Setup,
    read_compiled,
    read_setup,
)
from jupyterlab_tfcoach.monitor.training.loss_parameters import (
    SwappedLoss,
    losses_given,
    swapped_loss,
)
from jupyterlab_tfcoach.monitor.training.preprocessing_use import PreprocessingUse
from jupyterlab_tfcoach.monitor.training.run_outcomes import (
    Prediction,
    constant_prediction,
    fitted_before,
)
from jupyterlab_tfcoach.monitor.training.sequence_masks import MaskedZeros, read_masked_zeros
from jupyterlab_tfcoach.monitor.training.validation_copies import (
    ValidationCopy,
    validation_copy,
)

TRAINER_MODULE = "keras.src.backend.tensorflow.trainer"
TRAINER_CLASS = "TensorFlowTrainer"
# ``compile`` is defined once for every backend, on the base trainer.
BASE_TRAINER_MODULE = "keras.src.trainers.trainer"
BASE_TRAINER_CLASS = "Trainer"
MAX_WEIGHTS = 2000  # models with more trainable weights are not compared
MAX_ELEMENTS_PER_WEIGHT = 300_000
MAX_ELEMENTS_COPIED = 1_000_000  # 4 MB of float32 per fit call, copied twice at most
# Reading a variable is one eager op (~0.1 ms): past this budget the rest is not copied.
COPY_BUDGET_S = 0.010
# The first weights are copied whatever the clock says: the first read of a variable in a
# fresh kernel alone can take ~6 ms, more on a loaded machine, and could spend the whole
# budget before a learner's small model was compared (the report then said nothing).
COPIED_BEFORE_THE_BUDGET = 8
MAX_FITS_PER_CELL = 20
MAX_HISTORY_KEYS = 50
MAX_EPOCHS_KEPT = 1000


def _compiled_by_keras() -> bool:
    """Whether the ``compile`` being hooked was called by Keras itself (``load_model``
    restoring a saved model's compile), not by the learner: the caller of the hook, two
    frames up, is Keras's code."""
    try:
        caller = sys._getframe(2)
    except ValueError:
        return False
    module = str(caller.f_globals.get("__name__", ""))
    return module == "keras" or module.startswith("keras.")


@dataclass
class WeightOutcome:
    """One trainable weight across one ``fit`` call."""

    variable_id: int
    path: str
    shape: tuple[int, ...]
    changed: bool
    started_zero: bool
    # How many entries changed, and how many were exactly zero before and after: a weight
    # a no-gradient op cut off moves in a few entries only (``blocked_gradients.py``),
    # pruned zeros fit filled in come back (``regrown_pruning.py``).
    size: int = 0
    changed_entries: int = 0
    zeros_before: int = 0
    zeros_after: int = 0


@dataclass
class FitRun:
    """One ``fit`` call (ids, labels and numbers only; the model by weak reference)."""

    model: weakref.ReferenceType[Any]
    model_id: int
    trainable_count: int | None  # after fit; None: unknown (too many, or not Keras)
    variable_count: int
    weights: list[WeightOutcome] = field(default_factory=list)
    # Whether the weights could be compared: a subclassed model is built inside fit, so
    # its weights did not exist before (then only the optimizer's step count says more).
    compared: bool = False
    unknown_weights: int = 0
    custom_train_step: bool = False
    history_id: int | None = None
    history: dict[str, list[float]] | None = None
    epochs_run: int | None = None  # from the History's ``epoch`` list
    loss_tracker_count: float | None = None  # the loss tracker's count after fit
    never_updated_metrics: list[str] = field(default_factory=list)
    optimizer_stepped: bool | None = None
    # The optimizer's step count before and after fit (``learning_rate_decay.py``).
    steps_before: int | None = None
    steps_after: int | None = None
    fitted_before: bool = False  # an earlier fit ran on this model (``run_outcomes.py``)


@dataclass
class EvaluationRun:
    """One ``evaluate`` (``validation``: fit's own) of a model with its own ``test_step``:
    what it changed, measured around the call."""

    model: weakref.ReferenceType[Any]
    validation: bool
    compared: int  # trainable weights compared
    changed: int  # of them, how many changed
    optimizer_steps: int | None  # steps the optimizer took during the call; None: unknown


@dataclass
class CellFits:
    fits: list[FitRun] = field(default_factory=list)
    # Classes of the models predict/evaluate ran on (weakly), at most a few, and one
    # model of each (weakly, same index): what its layers are tells what training mode does.
    inferred_classes: list[weakref.ReferenceType[type]] = field(default_factory=list)
    inferred_models: list[weakref.ReferenceType[Any]] = field(default_factory=list)
    # Every model evaluate/predict ran (weakly) and which of the two, at most a few:
    # ``model_source.py`` reads the user's classes among its layers.
    inference_runs: list[tuple[weakref.ReferenceType[Any], str]] = field(default_factory=list)
    config: CellConfig | None = None  # what the calls were given (``fit_config.py``)
    # Each fit/evaluate call's output layer, loss, metrics and labels (``loss_agreement.py``).
    setups: list[Setup] = field(default_factory=list)
    # Each compile call's output layer, loss and metrics (``compile_agreement.py``).
    compiles: list[Setup] = field(default_factory=list)
    # Losses of the user's given to compile with swapped parameter names.
    swapped_losses: list[SwappedLoss] = field(default_factory=list)
    # Evaluations of models with their own test_step, measured (``step_modes.py``).
    evaluations: list[EvaluationRun] = field(default_factory=list)
    # Fits whose inputs hold 0 as a token under Embedding(mask_zero=True).
    masked_zeros: list[MaskedZeros] = field(default_factory=list)
    # Inputs unlike those trained on, inputs scaled twice (``input_ranges.py``).
    ranges: CellRanges | None = None
    # Random augmentation in the data evaluated on (``evaluation_augmentation.py``).
    augmentation: CellAugmentation | None = None
    # Fits validated on their own training data (``validation_copies.py``).
    validation_copies: list[ValidationCopy] = field(default_factory=list)
    # Normalization(axis=None) on features of different scales (``global_normalization.py``).
    global_normalizations: list[GlobalNormalization] = field(default_factory=list)
    # predict calls whose rows all came out the same (``run_outcomes.py``).
    predictions: list[Prediction] = field(default_factory=list)


def _inputs_given(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The ``x`` a fit/evaluate/predict call was given."""
    return kwargs["x"] if "x" in kwargs else (args[0] if args else None)


def _labels_given(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The ``y`` a fit call was given (None for a dataset's own labels)."""
    return kwargs["y"] if "y" in kwargs else (args[1] if len(args) > 1 else None)


def _shape(variable: Any) -> tuple[int, ...] | None:
    shape = library_attribute(variable, "shape")
    try:
        dims = tuple(int(d) for d in shape)
    except Exception:
        return None
    return dims


def _size(shape: tuple[int, ...]) -> int:
    size = 1
    for dim in shape:
        size *= dim
    return size


def _values(variable: Any) -> Any | None:
    """A copy of the variable's values as a NumPy array (Keras's variable wraps a
    ``tf.Variable`` in ``value``; its ``numpy`` is TensorFlow's own method)."""
    backing = library_attribute(variable, "value")
    if backing is None:
        return None
    numpy = library_attribute(backing, "numpy")
    if numpy is None:
        return None
    array = numpy()
    copy = getattr(array, "copy", None)
    return copy() if copy is not None else None


def _label(variable: Any) -> str:
    path = stored(variable, "_path")  # what Keras's ``path`` property returns
    if type(path) is str and path:
        return path
    for attribute in ("path", "name"):
        value = library_attribute(variable, attribute)
        if type(value) is str and value:
            return value
    return "?"


def defines_own(model: Any, method: str) -> bool:
    """Whether the model's class (or a base of the user's) defines ``method`` itself,
    rather than Keras."""
    try:
        _found, owner = class_namespace_lookup(type(model), method)
    except Exception:
        return False
    return owner is not None and not is_library_class(owner)


def _scalar(variable: Any) -> float | None:
    try:
        values = _values(variable)
        return float(values.sum()) if values is not None else None
    except Exception:
        return None


def _metric_is_all_zero(metric: Any) -> bool:
    variables = contained_values(stored(metric, "_variables"), sequences_only=True)
    if not variables:
        return False
    for variable in variables:
        values = _values(variable)
        if values is None or values.any():
            return False
    return True


def _history_of(history: Any) -> dict[str, list[float]] | None:
    logs = stored(history, "history")
    if type(logs) is not dict:
        return None
    kept: dict[str, list[float]] = {}
    for key, values in list(logs.items())[:MAX_HISTORY_KEYS]:
        if type(key) is not str or type(values) is not list:
            continue
        numbers = []
        for value in values[:MAX_EPOCHS_KEPT]:
            try:
                numbers.append(float(value))
            except Exception:
                numbers.append(float("nan"))
        kept[key] = numbers
    return kept


class _Snapshot:
    """The trainable weights' values before ``fit`` (dropped when it returns)."""

    def __init__(self, model: Any) -> None:
        self.variables = keras_trainable_variables(model, MAX_WEIGHTS)
        self.copies: list[tuple[Any, Any, tuple[int, ...]]] = []
        self.unknown = 0
        copied = 0
        deadline = time.perf_counter() + COPY_BUDGET_S
        for variable in self.variables or ():
            shape = _shape(variable)
            size = _size(shape) if shape is not None else None
            if (
                shape is None
                or size is None
                or size > MAX_ELEMENTS_PER_WEIGHT
                or copied + size > MAX_ELEMENTS_COPIED
                or (len(self.copies) >= COPIED_BEFORE_THE_BUDGET and time.perf_counter() > deadline)
            ):
                self.unknown += 1
                continue
            try:
                values = _values(variable)
            except Exception:
                values = None
            if values is None:
                self.unknown += 1
                continue
            copied += size
            self.copies.append((variable, values, shape))

    def outcomes(self) -> tuple[list[WeightOutcome], int]:
        outcomes = []
        unknown = self.unknown
        # The copies are NumPy arrays (``_values``), so NumPy is loaded whenever one exists.
        numpy = sys.modules.get("numpy")
        count_nonzero = getattr(numpy, "count_nonzero", None)
        if count_nonzero is None:
            unknown += len(self.copies)
            self.copies = []
            return outcomes, unknown
        for variable, before, shape in self.copies:
            try:
                after = _values(variable)
                if after is None or after.shape != before.shape:
                    unknown += 1
                    continue
                # count_nonzero counts in place: no int or bool copy of the weight (the
                # same counts as summing ``after != before`` and ``astype(bool)``).
                changed_entries = int(count_nonzero(after != before))
                zeros_before = int(before.size - count_nonzero(before))
                zeros_after = int(after.size - count_nonzero(after))
            except Exception:
                unknown += 1
                continue
            outcomes.append(
                WeightOutcome(
                    id(variable),
                    _label(variable),
                    shape,
                    changed_entries > 0,
                    zeros_before == before.size,
                    int(before.size),
                    changed_entries,
                    zeros_before,
                    zeros_after,
                )
            )
        self.copies = []
        return outcomes, unknown


class FitWatcher:
    """Hooks Keras 3's ``fit``/``evaluate``/``predict`` and keeps one cell's measurements."""

    def __init__(self) -> None:
        self._hooks = MethodHooks()
        self._cell = CellFits()
        self._lock = threading.Lock()
        self._depth = threading.local()
        self.config = FitConfigWatcher()
        self.ranges = RangeWatcher()
        self.augmentation = AugmentationWatcher()
        self.preprocessing = PreprocessingUse()

    def install(self) -> bool:
        owner = loaded_class(TRAINER_MODULE, TRAINER_CLASS)
        if owner is None:
            return False
        hooked = self._hooks.install(owner, "fit", self._fit_hook)
        self._hooks.install(owner, "evaluate", self._inference_hook)
        self._hooks.install(owner, "predict", self._inference_hook)
        base = loaded_class(BASE_TRAINER_MODULE, BASE_TRAINER_CLASS)
        if base is not None:
            self._hooks.install(base, "compile", self._compile_hook)
        self.config.install()
        return hooked

    def uninstall(self) -> None:
        self._hooks.restore()
        self.config.uninstall()

    def begin_cell(self) -> None:
        with self._lock:
            self._cell = CellFits()
        self.config.begin_cell()
        self.ranges.begin_cell()
        self.augmentation.begin_cell()
        self.preprocessing.begin_cell()

    def take(self) -> CellFits:
        with self._lock:
            cell, self._cell = self._cell, CellFits()
        cell.config = self.config.take()
        cell.ranges = self.ranges.take()
        cell.augmentation = self.augmentation.take()
        return cell

    # ------------------------------------------------------------------ hooks
    def _fit_hook(self, original: Any) -> Any:
        watcher = self

        def fit_hook(model: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True  # IPython leaves this frame out of user tracebacks
            before = None
            try:
                before = watcher._before_fit(model)
            except Exception:
                pass
            given = watcher.config.before("fit", model, args, kwargs)
            try:
                copy = validation_copy(model, args, kwargs)
                if copy is not None:
                    with watcher._lock:
                        watcher._cell.validation_copies.append(copy)
                one_scale = global_normalization(model, _inputs_given(args, kwargs))
                if one_scale is not None:
                    with watcher._lock:
                        watcher._cell.global_normalizations.append(one_scale)
            except Exception:
                pass
            history = original(model, *args, **kwargs)
            watcher.config.after(given, model, args, kwargs, history)
            watcher._record_setup("fit", model, args, kwargs, history)
            watcher._record_masked_zeros(model, args, kwargs)
            try:
                watcher.ranges.after_fit(
                    model, _inputs_given(args, kwargs), _labels_given(args, kwargs)
                )
                validation = kwargs.get("validation_data")
                if type(validation) in (tuple, list) and validation:
                    watcher.ranges.at_inference("validation", model, validation[0])
                watcher.augmentation.evaluated_on("fit", model, kwargs.get("validation_data"))
            except Exception:
                pass
            try:
                watcher.preprocessing.fitted(model, _inputs_given(args, kwargs))
            except Exception:
                pass
            if before is not None:
                try:
                    watcher._after_fit(model, before, history)
                except Exception:
                    pass
            return history

        return fit_hook

    def _compile_hook(self, original: Any) -> Any:
        watcher = self

        def compile_hook(model: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            result = original(model, *args, **kwargs)
            if _compiled_by_keras():
                # load_model (compile_from_config) restores a saved compile: the learner
                # wrote none here, and a cause in it was told where it was written; a
                # later fit of the loaded model tells what it finds then.
                return result
            try:
                with watcher._lock:
                    full = len(watcher._cell.compiles) >= MAX_SETUPS
                setup = None if full else read_compiled(model)
                if setup is not None:
                    with watcher._lock:
                        watcher._cell.compiles.append(setup)
            except Exception:
                pass
            try:
                for loss in losses_given(args, kwargs) if not full else ():
                    swapped = swapped_loss(loss, model)
                    if swapped is not None:
                        with watcher._lock:
                            watcher._cell.swapped_losses.append(swapped)
            except Exception:
                pass
            return result

        return compile_hook

    def _inference_hook(self, original: Any) -> Any:
        watcher = self

        def inference_hook(model: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            try:
                watcher._record_inference(model, getattr(original, "__name__", ""))
            except Exception:
                pass
            given = watcher.config.before(original.__name__, model, args, kwargs)
            if not kwargs.get("_use_cached_eval_dataset"):  # fit's own validation
                try:
                    watcher.ranges.at_inference(
                        original.__name__, model, _inputs_given(args, kwargs)
                    )
                    if original.__name__ == "evaluate":
                        watcher.augmentation.evaluated_on(
                            "evaluate", model, _inputs_given(args, kwargs)
                        )
                except Exception:
                    pass
            before = None
            if original.__name__ == "evaluate":
                try:
                    before = watcher._before_evaluate(model)
                except Exception:
                    pass
            result = original(model, *args, **kwargs)
            if before is not None:
                try:
                    watcher._after_evaluate(
                        model, before, bool(kwargs.get("_use_cached_eval_dataset"))
                    )
                except Exception:
                    pass
            watcher.config.after(given, model, args, kwargs, result)
            if original.__name__ == "predict":
                watcher._record_prediction(model, _inputs_given(args, kwargs), result)
            # fit's own validation calls evaluate with the split it made: not the user's.
            if original.__name__ == "evaluate" and not kwargs.get("_use_cached_eval_dataset"):
                watcher._record_setup("evaluate", model, args, kwargs, result)
            return result

        return inference_hook

    # ------------------------------------------------------------- measuring
    def _before_fit(self, model: Any) -> tuple[_Snapshot, int | None, float | None] | None:
        with self._lock:
            if len(self._cell.fits) >= MAX_FITS_PER_CELL:
                return None
        if stored(model, "_trainable_variables") is None:
            return None  # not a Keras layer as Keras 3 stores one
        snapshot = _Snapshot(model)
        optimizer = stored(model, "optimizer")
        iterations = _scalar(stored(optimizer, "_iterations")) if optimizer is not None else None
        return snapshot, id(model), iterations

    def _before_evaluate(self, model: Any) -> tuple[_Snapshot, float | None] | None:
        if not defines_own(model, "test_step"):
            return None  # Keras's own test_step changes no weight
        with self._lock:
            if len(self._cell.evaluations) >= MAX_FITS_PER_CELL:
                return None
        if stored(model, "_trainable_variables") is None:
            return None
        optimizer = stored(model, "optimizer")
        iterations = _scalar(stored(optimizer, "_iterations")) if optimizer is not None else None
        return _Snapshot(model), iterations

    def _after_evaluate(
        self, model: Any, before: tuple[_Snapshot, float | None], validation: bool
    ) -> None:
        snapshot, iterations_before = before
        weights, _unknown = snapshot.outcomes()
        steps = None
        optimizer = stored(model, "optimizer")
        if optimizer is not None and iterations_before is not None:
            after = _scalar(stored(optimizer, "_iterations"))
            steps = int(after - iterations_before) if after is not None else None
        run = EvaluationRun(
            model=weakref.ref(model),
            validation=validation,
            compared=len(weights),
            changed=sum(1 for weight in weights if weight.changed),
            optimizer_steps=steps,
        )
        with self._lock:
            if len(self._cell.evaluations) < MAX_FITS_PER_CELL:
                self._cell.evaluations.append(run)

    def _after_fit(
        self, model: Any, before: tuple[_Snapshot, int | None, float | None], history: Any
    ) -> None:
        snapshot, model_id, iterations_before = before
        weights, unknown = snapshot.outcomes()
        variables = snapshot.variables
        trainable = keras_trainable_variables(model, MAX_WEIGHTS)
        run = FitRun(
            model=weakref.ref(model),
            model_id=model_id or id(model),
            trainable_count=len(trainable) if trainable is not None else None,
            variable_count=len(keras_variables(model, with_seed_state=False, limit=MAX_WEIGHTS)),
            weights=weights,
            unknown_weights=unknown,
            compared=bool(variables),
            custom_train_step=defines_own(model, "train_step"),
            history_id=id(history) if history is not None else None,
            history=_history_of(history) if history is not None else None,
        )
        run.fitted_before = fitted_before(model)
        epochs = stored(history, "epoch") if history is not None else None
        run.epochs_run = len(epochs) if type(epochs) is list else None
        optimizer = stored(model, "optimizer")
        if optimizer is not None and iterations_before is not None:
            after = _scalar(stored(optimizer, "_iterations"))
            run.optimizer_stepped = after is not None and after != iterations_before
            if after is not None:
                run.steps_before, run.steps_after = int(iterations_before), int(after)
        if run.custom_train_step:
            tracker = stored(model, "_loss_tracker")
            count = stored(tracker, "count") if tracker is not None else None
            run.loss_tracker_count = _scalar(count) if count is not None else None
            names = []
            for metric in keras_tracked_metrics(model):
                name = stored(metric, "name")
                if type(name) is str and name not in names and _metric_is_all_zero(metric):
                    names.append(name)
            run.never_updated_metrics = names
        with self._lock:
            if len(self._cell.fits) < MAX_FITS_PER_CELL:
                self._cell.fits.append(run)

    def _record_setup(
        self, method: str, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any
    ) -> None:
        try:
            with self._lock:
                if len(self._cell.setups) >= MAX_SETUPS:
                    return
            setup = read_setup(method, model, args, kwargs, result)
        except Exception:
            return
        if setup is not None:
            with self._lock:
                self._cell.setups.append(setup)

    def _record_masked_zeros(
        self, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        try:
            with self._lock:
                if len(self._cell.masked_zeros) >= MAX_FITS_PER_CELL:
                    return
            x = kwargs["x"] if "x" in kwargs else (args[0] if args else None)
            found = read_masked_zeros(model, x)
        except Exception:
            return
        if found is not None:
            with self._lock:
                self._cell.masked_zeros.append(found)

    def _record_prediction(self, model: Any, inputs: Any, result: Any) -> None:
        try:
            with self._lock:
                if len(self._cell.predictions) >= MAX_FITS_PER_CELL:
                    return
            found = constant_prediction(model, inputs, result)
        except Exception:
            return
        if found is not None:
            with self._lock:
                self._cell.predictions.append(found)

    def _record_inference(self, model: Any, method: str = "") -> None:
        cls = type(model)
        with self._lock:
            runs = self._cell.inference_runs
            if len(runs) < 8 and not any(r() is model and m == method for r, m in runs):
                runs.append((weakref.ref(model), method))
        if not defines_own(model, "call"):
            return
        with self._lock:
            known = self._cell.inferred_classes
            if len(known) < 8 and not any(ref() is cls for ref in known):
                known.append(weakref.ref(cls))
                self._cell.inferred_models.append(weakref.ref(model))
