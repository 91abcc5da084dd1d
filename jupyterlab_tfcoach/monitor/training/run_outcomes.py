"""A training run whose outcome shows it failed, read against what the code aimed at.

Silent training bugs come in endless kinds, but most end in a few outcomes the monitor
can read cheaply once training has run, whatever the bug's spelling:

- nothing was learned: a ``fit``'s accuracy-type metric ended at chance (at most
  ``CHANCE_MARGIN`` above the rate of the most common label of the labels fit was given)
  and did not climb steadily (``_rising``: a slow learner climbs), or its loss moved by
  under ``FLAT`` of its first value over a first training of ``MIN_EPOCHS`` epochs and
  ``MIN_STEPS`` steps, or validation accuracy ended at chance while training accuracy
  was ``VALIDATION_GAP`` above it; in a custom loop, the loss
  sampled at a ``tape.gradient`` call site (calls 1, 2, 4, 8, ...:
  ``variables/training_symptoms.py``) moved by under ``FLAT`` over ``MIN_LOOP_CALLS``
  steps while the variables did change, or the losses the cell's loop appended to a list
  named like a loss (``losses.append(float(loss))``, read as plain numbers: the only
  trajectory of a ``tf.function`` step) did so, each tenth averaged;
- the run diverged: the loss went non-finite, ended over ``GROWTH`` times its start, or
  (a loop's) far below zero; never for a call site whose variables, read at its second
  call, all ended unchanged (one function evaluating fixed weights on many tasks, or
  several models in turn: the losses moved with the data, no run happened);
- the learning rate collapsed: the schedule of an optimizer a custom loop stepped (a
  ``tf.function`` step included: the optimizer's hook runs while it traces) under
  ``COLLAPSED`` of its start within the first tenth of its steps (for ``fit``,
  ``learning_rate_decay.py`` tells it);
- the result ignores the input: a ``predict`` whose rows (at least ``MIN_ROWS``, of
  inputs that differ) are all the same, to ``CONSTANT_SPREAD`` of their size.

Then a differential diagnosis over causes established from values read without running
the model: the optimizer's learning rate at the end of the run (a schedule asked at the
optimizer's last step, a library schedule only) against the usual range of its kind, the
range of the inputs trained on (``input_ranges.py``) with no normalising layer in the
model, labels that hold a single value, regression targets far from unit scale, a Dropout
rate that drops most units, labels mostly of one class, and, for a loss gone NaN, a
division in the learner's loss function by a sum that can be 0 (``loss_divisions.py``).
The entry says the symptom with its numbers, each cause found with its fix in the
learner's names (the optimizer's constructor as written with the usual rate, the inputs or
targets divided by their largest value); with no cause, the symptom and what was checked
and found in order, so the learner knows where to look next.

Only told when no other entry of the cell's report explains it (``extension.py`` asks
only then), once per model or call site. Runs only after a cell in which ``fit``,
``predict`` or a ``tape.gradient`` loop ran: a few dict reads and at most one eager read of
the learning rate. Nothing here imports TensorFlow, prints, or calls user code.
"""

from __future__ import annotations

import ast
import itertools
import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    is_library_class,
    keras_layers,
    library_attribute,
    stored,
)
from jupyterlab_tfcoach.monitor.training import inverted_weights, loss_divisions, user_code
from jupyterlab_tfcoach.monitor.training.loss_agreement import EXPECTS, findings

SECTION = "stopped-learning"  # training that runs and learns nothing
DIVERGED_SECTION = "nan-inf"  # losses that grow to inf/nan
MIN_EPOCHS = 3
MIN_STEPS = 40  # fewer optimizer steps than this may simply not be enough yet
MIN_LOOP_CALLS = 32
FLAT = 0.01  # a relative change of the loss smaller than this is "did not move"
GROWTH = 3.0
CHANCE_MARGIN = 0.03
VALIDATION_GAP = 0.25
RISING = 0.02
MIN_ROWS = 16
CONSTANT_SPREAD = 1e-5
LARGE_INPUTS = 100.0  # inputs this large, unnormalised, saturate or kill units
IMBALANCED = 0.8  # the most common label's share from which chance is high
HIGH_DROPOUT = 0.8
MAX_LAYERS = 300
MIN_SCHEDULE_STEPS = 50
COLLAPSED = 0.01  # a schedule under this share of its start has stopped training
MAX_ROWS_READ = 5000
# Rates above these diverge or wreck units on a learner's data; under the low one the
# weights barely move within a run (the usual ranges, per optimizer kind).
ADAPTIVE = ("Adam", "AdamW", "Adamax", "Nadam", "RMSprop", "Adagrad", "Lion", "Adafactor")
HIGH_RATE_ADAPTIVE = 0.05
HIGH_RATE_OTHER = 1.0
LOW_RATE = 1e-6
USUAL_RATE_ADAPTIVE = 0.001
USUAL_RATE_OTHER = 0.01
ACCURACY_KEYS = (
    "accuracy",
    "acc",
    "sparse_categorical_accuracy",
    "categorical_accuracy",
    "binary_accuracy",
)
NORMALISING = ("Normalization", "Rescaling", "BatchNormalization", "LayerNormalization")
TAKES_CODES = ("Embedding", "StringLookup", "IntegerLookup", "TextVectorization", "Hashing")


@dataclass
class Prediction:
    """One ``predict`` whose rows were all the same (numbers only; the model weakly)."""

    model: weakref.ReferenceType[Any]
    result_id: int
    inputs_id: int
    rows: int
    value: float  # the first output of the first row


@dataclass
class LoopRun:
    """One custom loop's ``tape.gradient`` call site after its cell."""

    at: str  # how the report names the line
    calls: int
    losses: list[tuple[int, float]] = field(default_factory=list)
    changed: bool = False  # some watched variable changed
    # The variables the site differentiated were read at its second call and none of
    # them changed by the end: the sampled losses are those of one set of weights on
    # other data (an evaluation of many tasks, several models in turn), not a run.
    held: bool = False


# ------------------------------------------------------------------ reading
def _ndarray(value: Any) -> Any | None:
    """``value`` as a NumPy array when it is one or an eager tensor (first rows only)."""
    cls = type(value)
    if cls.__name__ == "ndarray" and cls.__module__ == "numpy":
        return value[:MAX_ROWS_READ]
    if "EagerTensor" in cls.__name__:
        numpy = library_attribute(value, "numpy")
        if numpy is None:
            return None
        shape = library_attribute(value, "shape")
        try:
            if math.prod(int(d) for d in shape) > 50 * MAX_ROWS_READ:
                return None
        except Exception:
            return None
        return numpy()[:MAX_ROWS_READ]
    return None


def constant_prediction(model: Any, inputs: Any, result: Any) -> Prediction | None:
    """A record when every row ``predict`` returned is the same while its inputs differ
    (one pass over at most ``MAX_ROWS_READ`` rows of each); else None."""
    out = _ndarray(result)
    given = _ndarray(inputs)
    if out is None or given is None or out.dtype.kind != "f" or given.dtype.kind not in "iuf":
        return None
    rows = int(out.shape[0]) if out.ndim else 0
    if rows < MIN_ROWS or given.shape[0] != rows:
        return None
    flat = out.reshape(rows, -1)
    if not bool(abs(flat).max() < math.inf):
        return None  # nan/inf rows: the divergence, told from the training run
    spread = float((flat.max(axis=0) - flat.min(axis=0)).max())
    size = max(float(abs(flat).max()), 1.0)
    if spread > CONSTANT_SPREAD * size:
        return None
    inputs_flat = given.reshape(rows, -1)
    if not bool((inputs_flat.max(axis=0) != inputs_flat.min(axis=0)).any()):
        return None  # the same input every row: the same output is right
    return Prediction(weakref.ref(model), id(result), id(inputs), rows, float(flat[0, 0]))


def _class_name(obj: Any) -> str:
    name = getattr(type(obj), "__name__", "")
    return name if type(name) is str else ""


def _mro_names(obj: Any) -> list[str]:
    return [getattr(k, "__name__", "") for k in type(obj).__mro__]


def learning_rate(optimizer: Any, step: int | None) -> float | None:
    """The optimizer's rate at ``step``: its stored variable's value, or its schedule (a
    Keras class: its ``__call__`` is one eager op) asked at that step."""
    rate = stored(optimizer, "_learning_rate")
    if rate is None:
        return None
    if type(rate) in (int, float):
        return float(rate)
    if "LearningRateSchedule" in _mro_names(rate):
        if not is_library_class(type(rate)) or step is None:
            return None
        try:
            return float(rate(step))
        except Exception:
            return None
    backing = library_attribute(rate, "value")
    numpy = library_attribute(backing if backing is not None else rate, "numpy")
    try:
        return float(numpy()) if numpy is not None else None
    except Exception:
        return None


def _number(value: float) -> str:
    if value != value or value in (math.inf, -math.inf):
        return str(value)
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.4g}"


def _size_word(value: float) -> str:
    return "hundreds" if value < 1e3 else "thousands" if value < 1e6 else "millions"


def _rate(value: float) -> str:
    return f"{value:g}"


# ------------------------------------------------------------------ causes
def _disagrees(setup: Any) -> bool:
    """Whether the output layer, loss, metrics and labels disagree (``loss_agreement``):
    then an entry names that cause (at compile or at this fit), and the outcome it leads
    to is not told again."""
    try:
        return bool(findings(setup))
    except Exception:
        return True


def _regression(setup: Any) -> bool:
    expects = EXPECTS.get(getattr(setup, "loss", ""))
    return expects is not None and expects.kind == "regression"


@dataclass
class Diagnosis:
    causes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)


class _Diagnoser:
    """What can be established about why a run failed, from the values held."""

    def __init__(self, namespace: Mapping[str, Any], cell_source: str) -> None:
        self.namespace = namespace
        self.cell_source = cell_source

    def name(self, obj: Any) -> str | None:
        return name_bound_to(id(obj), self.namespace) if obj is not None else None

    def rate(
        self, optimizer: Any, step: int | None, symptom: str, into: Diagnosis, fit: bool = True
    ) -> None:
        value = learning_rate(optimizer, step)
        if value is None:
            return
        kind = _class_name(optimizer)
        adaptive = kind in ADAPTIVE
        high = HIGH_RATE_ADAPTIVE if adaptive else HIGH_RATE_OTHER
        usual = USUAL_RATE_ADAPTIVE if adaptive else USUAL_RATE_OTHER
        schedule = "LearningRateSchedule" in _mro_names(stored(optimizer, "_learning_rate"))
        said = f"{_rate(value)} for {kind}"
        if schedule:
            said += " (its schedule, at the last step)"
        if value >= high:
            into.causes.append(
                f"the learning rate is {said}, far above the usual {_rate(usual)} for "
                f"{kind}: each step overshoots the minimum, so the loss jumps around or "
                f"grows to inf/nan (and ReLU units can die for good). "
                f"{self._rate_fix(optimizer, kind, usual, fit)}"
            )
        elif value <= LOW_RATE and symptom != "diverged":
            into.causes.append(
                f"the learning rate is {said}: steps that small leave the weights where "
                f"they started. {self._rate_fix(optimizer, kind, usual, fit)}"
            )
        else:
            into.checked.append(f"the learning rate ({said}) is in the usual range")

    def _rate_fix(self, optimizer: Any, kind: str, usual: float, fit: bool) -> str:
        written = self._written_optimizer(kind, usual)
        name = self.name(optimizer)
        if written is None:
            written = f"keras.optimizers.{kind}(learning_rate={_rate(usual)})"
        if name and not fit:  # the optimizer a custom loop steps
            return (
                f"Create it with the usual rate, `{name} = {written}`, and create the "
                f"variables it trains again (this rate wrecked them) before training"
            )
        return (
            f"Build the model again and compile it with `optimizer={written}` (the "
            f"weights this rate wrecked must start again)"
        )

    def _written_optimizer(self, kind: str, usual: float) -> str | None:
        """The newest ``<...>.<kind>(...)`` call in the cells, with the usual rate."""
        from jupyterlab_tfcoach.monitor.training import learning_rate_decay as decay

        sources, _counts = user_code.cell_sources(self.namespace, self.cell_source)
        written = decay._written(sources, kind)
        if written is None:
            return None
        call = written[1]
        if call.args[1:]:
            return None  # more positional arguments than the rate: left as written
        keywords = [k for k in call.keywords if k.arg not in ("learning_rate", "lr")]
        fixed = ast.Call(
            func=call.func,
            args=[],
            keywords=[ast.keyword("learning_rate", ast.Constant(usual)), *keywords],
        )
        return user_code.valid_code(ast.unparse(fixed))

    def inputs(self, model: Any, trained: Any, into: Diagnosis) -> None:
        """Inputs far from unit scale with nothing in the model to bring them there."""
        inputs = getattr(trained, "inputs", None)
        magnitude = getattr(inputs, "magnitude", None)
        if inputs is None or type(magnitude) is not float:
            return
        layers = [_class_name(layer) for layer in keras_layers(model, MAX_LAYERS)[1:]]
        if any(any(code in name for code in TAKES_CODES) for name in layers):
            return  # ids, not values
        said = inputs.said()
        if magnitude >= LARGE_INPUTS and not any(n in NORMALISING for n in layers):
            data = name_bound_to(getattr(trained, "data_id", None), self.namespace)
            scaled = f"`{data} / {_number(magnitude)}`" if data else "the inputs divided by it"
            into.causes.append(
                f"the inputs trained on run {said}, and no layer of the model normalises "
                f"them: the first layer's sums are then in the {_size_word(magnitude)}, "
                f"which saturates or kills its units and makes the steps erratic. Scale "
                f"them to about [-1, 1] for fit and predict alike ({scaled}, or put "
                f"`keras.layers.Rescaling(1 / {_number(magnitude)})` first in the model), "
                f"then build the model again and train"
            )
        else:
            into.checked.append(f"the inputs run {said}")

    def labels(self, setup: Any, symptom: str, into: Diagnosis) -> None:
        labels = getattr(setup, "labels", None) if setup is not None else None
        if labels is None or labels.low is None:
            return
        y = name_bound_to(labels.y_id, self.namespace)
        called = f"`{y}`" if y else "the labels"
        if labels.low == labels.high:
            into.causes.append(
                f"every label in {called} is {_number(labels.low)}: there is nothing to "
                f"learn; check how {called} was built (a column taken from the wrong "
                f"array, a threshold no value passes, a slice of one class)"
            )
            return
        magnitude = max(abs(labels.low), abs(labels.high or 0.0))
        if symptom == "flat" and _regression(setup) and magnitude >= LARGE_INPUTS:
            scaled = f"{y} / {_number(magnitude)}" if y else "the targets divided by it"
            into.causes.append(
                f"{called} run from {_number(labels.low)} to {_number(labels.high)}, while "
                f"the output starts near 0 and each step moves it by about the learning "
                f"rate: closing a gap in the {_size_word(magnitude)} takes far more steps "
                f"than this run had. Train on targets near unit scale (`{scaled}`) and "
                f"multiply the predictions back by {_number(magnitude)}"
            )
            return
        majority = getattr(setup, "majority", None)
        if symptom == "chance" and majority is not None and majority >= IMBALANCED:
            into.causes.append(
                f"{_number(round(majority * 100, 1))}% of {called} are one class, so "
                f"always predicting it already scores {majority:.2f}: the loss is lowest "
                f"there and accuracy cannot show anything else. Weigh the classes in fit "
                f"(`class_weight={{0: 1.0, 1: {_number(round(majority / (1 - majority), 1))}}}` "
                f"for two classes) and watch a metric that sees the rare class "
                f"(`keras.metrics.AUC()`, recall)"
            )
            return
        classes = getattr(setup, "classes", None)
        if classes and setup.units and setup.loss:
            # Only reached when loss_agreement found nothing wrong with these (_disagrees).
            into.checked.append(
                f"{called} hold {classes} classes for {setup.units} output unit"
                f"{'s' if (setup.units or 0) != 1 else ''} ({setup.activation or '?'}) "
                f"and {setup.loss or 'the loss'}, which agree"
            )

    def dropout(self, model: Any, into: Diagnosis) -> None:
        for layer in keras_layers(model, MAX_LAYERS)[1:]:
            if "Dropout" not in _mro_names(layer):
                continue
            rate = stored(layer, "rate")
            if type(rate) in (int, float) and rate >= HIGH_DROPOUT:
                into.causes.append(
                    f"a `{_class_name(layer)}` layer drops {_number(rate * 100)}% of its "
                    f"inputs at every step (`rate={_number(rate)}`), so almost no signal "
                    f"reaches the layers after it in training. Dropout's rate is the share "
                    f"dropped: use `rate=0.2` to `0.5`"
                )
                return


# ------------------------------------------------------------------ symptoms
def _accuracy_key(history: dict[str, list[float]]) -> str | None:
    for key in ACCURACY_KEYS:
        if history.get(key):
            return key
    return None


def _rising(values: list[float]) -> bool:
    """A steady climb: each of the last epochs above the one before, and by
    ``RISING`` overall (a run that learns slowly, from a bad start or on hard data)."""
    last = values[-3:]
    steady = all(b > a for a, b in itertools.pairwise(last))
    return steady and values[-1] - values[0] >= RISING


def fit_symptom(
    history: dict[str, list[float]] | None, majority: float | None, trained_before: bool
) -> tuple[str, str] | None:
    """(kind, what was measured) for a fit's History that shows a failed run."""
    if not history:
        return None
    losses = history.get("loss") or []
    epochs = len(losses)
    if epochs == 0:
        return None
    bad = next((i for i, v in enumerate(losses) if not math.isfinite(v)), None)
    if bad is not None and (bad == 0 or losses[bad - 1] >= 0):
        return "diverged", (
            f"the loss became {losses[bad]} at epoch {bad + 1}"
            + (f" (it was {_number(losses[0])} at epoch 1)" if bad else "")
        )
    if epochs < MIN_EPOCHS:
        return None
    first, last = losses[0], losses[-1]
    if first > 0 and last > GROWTH * first:
        return "diverged", f"the loss grew from {_number(first)} to {_number(last)}"
    key = _accuracy_key(history)
    if key is not None and majority is not None:
        values = history[key]
        shown = f"{key} {values[-1]:.2f} after {epochs} epochs"
        if values[-1] <= majority + CHANCE_MARGIN and not _rising(values):
            best = max(values)
            where = values.index(best) + 1
            return "chance", (
                f"{shown} (its best was {best:.2f}, at epoch {where}), while always "
                f"predicting the most common label scores {majority:.2f}"
            )
        validation = history.get(f"val_{key}") or []
        if validation and validation[-1] <= majority + CHANCE_MARGIN:
            if values[-1] >= majority + VALIDATION_GAP:
                return "validation", (
                    f"{shown} but val_{key} {validation[-1]:.2f}: always predicting the "
                    f"most common label scores {majority:.2f}"
                )
    if trained_before or first == 0:
        return None  # a model trained further from where it was can stay level
    if abs(last - first) < FLAT * abs(first):
        return "flat", (
            f"the loss went from {_number(first)} to {_number(last)} over {epochs} "
            f"epochs (a change of {abs(last - first) / abs(first) * 100:.2g}%)"
        )
    return None


def level(losses: list[tuple[int, float]], calls: int) -> bool:
    """Whether a loop's sampled loss stayed within ``FLAT`` of its start over enough steps
    (the one symptom that needs to know whether the variables changed)."""
    if calls < MIN_LOOP_CALLS or len(losses) < 2:
        return False
    first, last = losses[0][1], losses[-1][1]
    return first != 0 and abs(last - first) < FLAT * abs(first)


def loop_symptom(run: LoopRun) -> tuple[str, str] | None:
    losses = run.losses
    if len(losses) < 2 or run.held:
        return None
    (_c0, first), (call, last) = losses[0], losses[-1]
    bad = next(((c, v) for c, v in losses if not math.isfinite(v)), None)
    if bad is not None and first >= 0:
        return "diverged", f"the loss was {bad[1]} at step {bad[0]} (it was {_number(first)})"
    if run.calls < MIN_LOOP_CALLS:
        return None
    if first > 0 and last > GROWTH * first:
        return "diverged", f"the loss grew from {_number(first)} to {_number(last)}"
    # Below zero by several times the start and at least GROWTH: a bounded negative loss
    # (Keras's cosine similarity, -1 at best) is not mistaken for a runaway.
    if last < -GROWTH * max(abs(first), 1.0):
        return "diverged", (
            f"the loss went from {_number(first)} to {_number(last)}, far below zero, where "
            f"no loss that measures an error can go"
        )
    if run.changed and level(losses, run.calls):
        return "flat", (
            f"the loss went from {_number(first)} at step 1 to {_number(last)} at "
            f"step {call} of {run.calls}"
        )
    return None


_MEANS = {
    "diverged": "the run diverged",
    "chance": "the model learned nothing",
    "validation": "what the model learned does not carry over to the validation data",
    "flat": "training barely moved the loss",
}


def _entry(subject: str, symptom: str, measured: str, found: Diagnosis) -> Note:
    head = f"{subject}: {_MEANS[symptom]}: {measured}."
    section = DIVERGED_SECTION if symptom == "diverged" else SECTION
    if found.causes:
        listed = " Also: ".join(c[0].upper() + c[1:] + "." for c in found.causes)
        return reports.note(f"{head} Cause: {listed}", section)
    checked = "; ".join(found.checked) if found.checked else "nothing else could be read"
    if symptom == "validation":
        left = (
            "the validation data must be prepared like the training data (same scaling, "
            "same label encoding, same class mapping), and its labels must still belong "
            "to its inputs"
        )
    elif symptom == "diverged":
        left = (
            "a loss with no lower bound (a mean of residuals not squared, a log-likelihood "
            "without its minus), a loss that takes a log or a division of the model's "
            "output (clip it, or use a Keras loss), and inputs or labels holding nan "
            "(`np.isnan(x).any()`)"
        )
    else:
        left = (
            "that each label still belongs to its input (a shuffle, sort or split applied "
            "to only one of the two arrays breaks the pairs: permute both with one index, "
            "`order = np.random.permutation(len(x)); x, y = x[order], y[order]`), and that "
            "the loss and the output layer are meant for these labels"
        )
    return reports.note(f"{head} Checked: {checked}. Left to check: {left}.", section)


def fit_notes(
    cell: Any, namespace: Mapping[str, Any], cell_source: str, trained_range: Any
) -> list[Note]:
    """The outcome of each of the cell's fit calls, and its predict calls."""
    notes: list[Note] = []
    diagnoser = _Diagnoser(namespace, cell_source)
    told: set[int] = set()
    for run in getattr(cell, "fits", []):
        model = run.model()
        if model is None or id(model) in told:
            continue
        steps = None
        if run.steps_after is not None and run.steps_before is not None:
            steps = run.steps_after - run.steps_before
            if steps < MIN_STEPS and not _nonfinite(run.history):
                continue
        setup = next(
            (
                s
                for s in getattr(cell, "setups", [])
                if s.model_id == id(model) and s.method == "fit"
            ),
            None,
        )
        if setup is not None and _disagrees(setup):
            continue  # told where it was compiled or by this fit's own entry: the cause
        trained_before = bool(run.steps_before) or run.fitted_before
        symptom = fit_symptom(run.history, getattr(setup, "majority", None), trained_before)
        if symptom is None:
            continue
        told.add(id(model))
        kind, measured = symptom
        found = Diagnosis()
        if kind in ("chance", "flat"):
            inverted = _inverted_loss(model)
            if inverted is not None:
                found.causes.append(inverted_weights.cause_text(inverted))
        if kind == "diverged" and _nonfinite(run.history):
            division = loss_divisions.zero_sum_division(
                (instance_dict(model) or {}).get("loss"), namespace
            )
            if division is not None:
                found.causes.append(loss_divisions.cause_text(division))
        diagnoser.labels(setup, kind, found)
        diagnoser.inputs(model, trained_range(model), found)
        optimizer = stored(model, "optimizer")
        if optimizer is not None:
            diagnoser.rate(optimizer, run.steps_after, kind, found)
        if kind != "diverged":
            diagnoser.dropout(model, found)
        if kind in ("chance", "flat") and run.weights and not found.causes:
            moved = sum(1 for w in run.weights if w.changed)
            still = [f"`{w.path}`" for w in run.weights if not w.changed]
            named = (
                f" (unchanged: {', '.join(still[:4])}{' ...' if len(still) > 4 else ''})"
                if still and moved
                else ""
            )
            found.checked.append(f"{moved} of {len(run.weights)} trainable weights changed{named}")
        name = diagnoser.name(model)
        subject = f"`{name}.fit`" if name else "This fit"
        notes.append(_entry(subject, kind, measured, found))
    for prediction in getattr(cell, "predictions", []):
        model = prediction.model()
        if model is None or id(model) in told:
            continue
        told.add(id(model))
        found = Diagnosis()
        diagnoser.inputs(model, trained_range(model), found)
        optimizer = stored(model, "optimizer")
        steps = _iterations(optimizer)
        if optimizer is not None and steps:
            diagnoser.rate(optimizer, steps, "constant", found)
        elif optimizer is None or steps == 0:
            found.checked.append("the model was never trained (its optimizer took no step)")
        diagnoser.dropout(model, found)
        result = name_bound_to(prediction.result_id, namespace)
        inputs = name_bound_to(prediction.inputs_id, namespace)
        name = diagnoser.name(model)
        subject = f"`{name}.predict`" if name else "This predict"
        held = f" (`{result}`)" if result else ""
        measured = (
            f"all {prediction.rows} rows it returned{held} are the same (the first output "
            f"is {_number(prediction.value)} in every row), though the rows of "
            f"{f'`{inputs}`' if inputs else 'its inputs'} differ: the output ignores the "
            "input"
        )
        if not (optimizer is None or steps == 0):
            # Dead or saturated units are a cause training makes; with no step taken the
            # entry says only what it measured and what it checked.
            measured += (
                ", usually because the hidden units all died (ReLU stuck at 0) or "
                "saturated during training"
            )
        notes.append(_entry(subject, "chance", measured, found))
    return notes


def _inverted_loss(model: Any) -> inverted_weights.InvertedWeight | None:
    """The learner's compiled loss function read for an inverted focal weight."""
    compiled = stored(model, "_compile_loss")
    user = stored(compiled, "_user_loss") if compiled is not None else None
    if user is None or not callable(user):
        return None
    try:
        return inverted_weights.inverted_weight(user)
    except Exception:
        return None


# Models a fit ran on, weakly: fine-tuning compiles the same model again (a new optimizer,
# its step count back at 0), and a model trained before may rightly move little.
# Keyed by id: a weak set would hash the model, and a user's class may define __hash__.
_FITTED: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def fitted_before(model: Any) -> bool:
    """Whether an earlier ``fit`` ran on ``model`` (and remember that this one did)."""
    try:
        before = _FITTED.get(id(model)) is model
        _FITTED[id(model)] = model
    except TypeError:
        return False
    return before


def _nonfinite(history: dict[str, list[float]] | None) -> bool:
    return any(not math.isfinite(v) for v in (history or {}).get("loss", []))


def _iterations(optimizer: Any) -> int | None:
    iterations = stored(optimizer, "_iterations") if optimizer is not None else None
    backing = library_attribute(iterations, "value")
    numpy = library_attribute(backing if backing is not None else iterations, "numpy")
    try:
        return int(numpy()) if numpy is not None else None
    except Exception:
        return None


def loop_notes(
    runs: list[LoopRun],
    optimizers: list[Any],
    namespace: Mapping[str, Any],
    cell_source: str,
) -> list[Note]:
    """The outcome of each custom loop's ``tape.gradient`` call site in the cell."""
    notes: list[Note] = []
    diagnoser = _Diagnoser(namespace, cell_source)
    for run in runs:
        symptom = loop_symptom(run)
        if symptom is None:
            continue
        kind, measured = symptom
        found = Diagnosis()
        for optimizer in optimizers[:2]:
            diagnoser.rate(optimizer, _iterations(optimizer), kind, found, fit=False)
        if not optimizers:
            _plain_rate(namespace, kind, found)
        notes.append(_entry(f"The training loop at {run.at}", kind, measured, found))
    return notes


def _plain_rate(namespace: Mapping[str, Any], symptom: str, into: Diagnosis) -> None:
    """A learning rate held by a plain name (``lr = 5.0``) for a hand-written update."""
    for name in ("learning_rate", "lr", "step_size", "eta", "alpha"):
        value = namespace.get(name)
        if type(value) not in (int, float) or isinstance(value, bool):
            continue
        if value >= HIGH_RATE_OTHER:
            into.causes.append(
                f"the update steps by `{name} = {_number(value)}` times the gradient, large "
                f"enough to overshoot every step. Use `{name} = 0.01` and start the "
                f"variables again"
            )
        elif value <= LOW_RATE and symptom != "diverged":
            into.causes.append(
                f"the update steps by `{name} = {value:g}` times the gradient: the "
                f"variables barely move. Use `{name} = 0.01`"
            )
        else:
            into.checked.append(f"the learning rate (`{name} = {_number(value)}`)")
        return


def schedule_notes(
    optimizers: list[Any], namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    """An optimizer the cell's custom loop stepped (its apply hook ran, even while a
    ``tf.function`` traced) whose schedule fell under ``COLLAPSED`` of its start within
    the first tenth of the steps it took: the rest of the run barely moved the weights."""
    from jupyterlab_tfcoach.monitor.training import learning_rate_decay as decay

    notes: list[Note] = []
    for optimizer in optimizers[:4]:
        schedule = stored(optimizer, "_learning_rate")
        if "LearningRateSchedule" not in _mro_names(schedule):
            continue
        if not is_library_class(type(schedule)):
            continue  # a schedule class of the learner's: never called
        steps = _iterations(optimizer)
        if steps is None or steps < MIN_SCHEDULE_STEPS:
            continue
        early = steps // 10
        start = learning_rate(optimizer, 0)
        at_early = learning_rate(optimizer, early)
        end = learning_rate(optimizer, steps)
        if start is None or at_early is None or start <= 0 or at_early >= COLLAPSED * start:
            continue
        name = name_bound_to(id(optimizer), namespace)
        who = f"`{name}`" if name else f"the {_class_name(optimizer)} optimizer"
        kind = _class_name(schedule)
        written = decay._written(decay._sources(namespace, cell_source), kind)
        shown = (
            " ".join((ast.get_source_segment(written[0], written[1]) or "").split())
            if written
            else ""
        )
        what = f"`{shown}`" if shown else f"its {kind}"
        ended = f", and {end:.3g} at the end" if end is not None else ""
        text = (
            f"The training loop's learning rate collapsed long before the end: {who} took "
            f"{steps} steps, and its rate follows {what}, which counts optimizer steps: it "
            f"was {start:.3g} at step 0, {at_early:.3g} at step {early} (a tenth of the "
            f"run){ended}. After the first few steps the weights barely moved, so the loss "
            f"stopped improving with no error."
        )
        fix = decay._with_decay_steps(written[0], written[1], steps) if written else None
        if fix:
            text += (
                f" Decay over the whole run ({steps} steps here), then create the optimizer "
                f"and the model again and train: `{fix}`."
            )
        else:
            text += f" Set decay_steps to the number of steps the loop runs ({steps} here)."
        notes.append(reports.note(text, SECTION))
    return notes


LOSS_WORDS = ("loss", "cost", "hist", "curve", "err", "objective")
MAX_RECORDED = 100_000


def _recorded(value: Any) -> list[float] | None:
    """A list of plain numbers (Python or NumPy scalars), as floats; None otherwise."""
    if type(value) is not list or len(value) > MAX_RECORDED:
        return None
    numbers = []
    for item in value:
        cls = type(item)
        if cls in (float, int) or (cls.__module__ == "numpy" and cls.__name__.startswith("float")):
            numbers.append(float(item))
        else:
            return None
    return numbers


def recorded_loss_notes(
    optimizers: list[Any], namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    """The losses a loop of the cell appended to a list (``losses.append(float(loss))``):
    the trajectory of a loop the gradient hook could not sample (a ``tf.function`` step),
    judged as a sampled loop's is, each tenth of the list averaged."""
    tree = user_code.parse(cell_source) if "append" in cell_source else None
    if tree is None:
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "append"
            and isinstance(node.func.value, ast.Name)
            and any(word in node.func.value.id.lower() for word in LOSS_WORDS)
            # Validation or test losses may rightly grow (overfitting): training's only.
            and not node.func.value.id.lower().startswith(("val", "test", "eval", "dev"))
            and node.func.value.id not in names
        ):
            names.append(node.func.value.id)
    notes: list[Note] = []
    diagnoser = _Diagnoser(namespace, cell_source)
    for name in names[:4]:
        values = _recorded(namespace.get(name))
        if values is None or len(values) < MIN_LOOP_CALLS:
            continue
        tenth = max(1, len(values) // 10)
        first = sum(values[:tenth]) / tenth
        last = sum(values[-tenth:]) / tenth
        nonfinite = next((i for i, v in enumerate(values) if not math.isfinite(v)), None)
        losses = [(1, first)]
        if nonfinite is not None:
            losses.append((nonfinite + 1, values[nonfinite]))
        losses.append((len(values), last))
        symptom = loop_symptom(LoopRun(f"`{name}`", len(values), losses, True))
        if symptom is None:
            continue
        kind, measured = symptom
        found = Diagnosis()
        for optimizer in optimizers[:2]:
            diagnoser.rate(optimizer, _iterations(optimizer), kind, found, fit=False)
        subject = f"The losses the loop recorded in `{name}` (first and last tenth averaged)"
        notes.append(_entry(subject, kind, measured, found))
    return notes
