"""Whether a Keras 3 model's output layer, compiled loss, compiled metrics and labels agree.

A loss, an output layer and labels that do not fit together raise nothing in many cases:
the model trains badly, or fit prints an accuracy that means something else. After each
``fit`` and ``evaluate`` call that returned (once per call, never per step; a call that
raised belongs to the error families), ``read_setup`` reads what Keras stores:

- what the model ends with: its last layer's ``units`` (else the output's last dimension)
  and ``activation`` (a Dense's function, an ``Activation`` or ``Softmax`` layer after it);
  a subclassed model (no stored output) is not read;
- the compiled loss, ``_compile_loss._flat_losses`` (one output only): the Keras loss
  function it wraps and its ``from_logits`` (``_fn_kwargs``); a user's own loss is not read;
- the compiled metrics, ``_compile_metrics._flat_metrics``: the class Keras chose for
  ``"accuracy"`` (binary, categorical or sparse, from the shapes) and its threshold;
- the labels given: shape, dtype, lowest and highest value (NumPy arrays and eager
  tensors, up to ``MAX_LABELS`` values); a ``tf.data`` dataset by its ``element_spec``,
  and by its labels' values when it is a ``from_tensor_slices((x, y))`` source reached
  through pair-keeping transformations (the tensor tf.data stores, no element made);
  and for ``validation_split``, which classes the last fraction Keras keeps for
  validation holds, and whether the labels come grouped by class.

``EXPECTS`` says what each Keras loss expects; the checks in ``_findings`` compare the
setup with it. ``read_compiled`` reads the same of a ``compile`` call (no labels: the
loss and metrics as given), for ``compile_agreement.py``, which tells in the compile
cell what needs no labels, with these checks and texts. A cause written in an earlier
cell is named there (``cell In[5], line 4``, from IPython's ``In``): the last layer as
written, the compile call, the labels' last assignment.

Measured on Keras 3.15 (TensorFlow 2.21), these raise nothing and are told:

- an output with no activation (raw scores) given to a cross-entropy that expects
  probabilities (``from_logits=False``): the loss clips the scores, training crawls;
- ``categorical_crossentropy`` over one output unit: the loss is 0.0 whatever the model
  predicts, nothing is learned;
- a regression loss (mse, mae, ...) given class numbers shaped ``(n, 1)`` for an output
  of several units: the labels broadcast against every unit;
- ``binary_crossentropy`` given labels outside ``[0, 1]``: the loss goes negative;
- ``"accuracy"`` turned into ``BinaryAccuracy`` (threshold 0.5) for an output of raw
  scores (a ``from_logits=True`` loss: the boundary is 0), or for a regression's
  continuous targets (it counts exact matches with 0 or 1);
- ``validation_split`` on labels grouped by class: the validation part holds classes
  training never sees, or a single class (read for any model and loss: a setup holding
  only the split is made when the output or the loss is not one this module reads).
- a loss object built with ``reduction="sum"`` (its stored ``reduction``) whose fit's
  per-epoch loss more than doubled or went inf/nan: each step is the batch size times the
  mean's (``variables/loss_reduction.diverged`` decides, as for custom loops).
- a regression loss with a last layer whose activation cannot output the targets
  (``OUTPUT_RANGES``: relu on standardized targets, sigmoid on targets outside [0, 1]):
  ``read_setup`` counts the targets out of reach in the same pass over the labels (one
  comparison per label), told from ``UNREACHABLE_SHARE`` of them; measured on Keras
  3.15, a relu head on standardized targets ends fit at an mse of 0.51 where a linear
  head reaches 0.02.
- multi-hot labels (0/1 rows, some with several 1s: a tagger's) given to a softmax or a
  categorical loss: the outputs compete, each row is read as one class (one pass of row
  sums, only for such labels); fix: a sigmoid per output and binary cross-entropy;
- a regression output of 1 unit fitted on ``(n, k)`` targets, or k units on ``(n, 1)``:
  mse broadcasts one against the other (``(n,)`` targets for k units raise: not told).

Not told because Keras 3 on TensorFlow handles them: a softmax or sigmoid output given a
``from_logits=True`` loss (Keras warns and takes the layer's input as the logits: it trains
exactly like the right setup), ``binary_crossentropy`` over a softmax of several units with
one-hot labels (trains; ``"accuracy"`` becomes categorical accuracy, not binary). Sparse
labels past the last unit, integer labels for ``categorical_crossentropy``, one-hot labels
for the sparse loss raise (error families). A softmax over one unit is ``fit_symptoms``'s.

Nothing here imports TensorFlow or prints; every failure of our own work is swallowed.
Cost per call (measured, a loaded 2-core machine): reading the setup 0.01 ms for 600
labels to 0.1 ms for 1M (a few dict reads and one min/max pass); with ``validation_split``
0.02-0.3 ms median (one pass finds where the class changes; shuffled labels stop there);
the checks under 0.01 ms; a note, when one is due, ~0.2 ms (names and cell sources read).
"""

from __future__ import annotations

import ast
import math
import sys
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    class_namespace_lookup,
    contained_values,
    instance_dict,
    is_library_class,
    library_attribute,
    stored,
)
from jupyterlab_tfcoach.monitor.training import user_code

LOGITS_SECTION = "from-logits"
LABELS_SECTION = "labels-and-loss"
SPLIT_SECTION = "keras-validation-data"
MAX_LABELS = 5_000_000  # labels with more values are not read (their shape still is)
MAX_CLASSES = 1000
MAX_SETUPS = 20
FIT_ARGUMENTS = ("x", "y", "batch_size", "epochs", "verbose", "callbacks", "validation_split")
PROBABILITY_ACTIVATIONS = ("softmax", "sigmoid")
RAW_ACTIVATIONS = ("linear",)
REDUCTION_SECTION = "gradient-tape"
RANGE_SECTION = "output-activation"
# What each output activation can produce: (lowest, highest, whether the ends are reached).
OUTPUT_RANGES = {
    "relu": (0.0, math.inf, True),
    "relu6": (0.0, 6.0, True),
    "sigmoid": (0.0, 1.0, False),
    "hard_sigmoid": (0.0, 1.0, True),
    "softmax": (0.0, 1.0, False),
    "softplus": (0.0, math.inf, False),
    "exponential": (0.0, math.inf, False),
    "tanh": (-1.0, 1.0, False),
}
# Dataset transformations that keep each (x, y) pair as it is (``dataset_order`` kinds).
_PAIR_KEEPING = frozenset({"batch", "shuffle", "cache", "prefetch", "repeat", "take", "skip"})
# A regression's targets out of its output's reach are told from this share on.
UNREACHABLE_SHARE = 0.05


@dataclass(frozen=True)
class LossExpects:
    """What one Keras loss expects of the output and the labels."""

    kind: str  # "binary", "categorical", "sparse" or "regression"
    class_name: str  # its class in ``keras.losses``, for a fix


# The loss functions Keras wraps (``LossFunctionWrapper.fn.__name__``), by what they expect.
EXPECTS = {
    "binary_crossentropy": LossExpects("binary", "BinaryCrossentropy"),
    "binary_focal_crossentropy": LossExpects("binary", "BinaryFocalCrossentropy"),
    "categorical_crossentropy": LossExpects("categorical", "CategoricalCrossentropy"),
    "categorical_focal_crossentropy": LossExpects("categorical", "CategoricalFocalCrossentropy"),
    "sparse_categorical_crossentropy": LossExpects("sparse", "SparseCategoricalCrossentropy"),
    "mean_squared_error": LossExpects("regression", "MeanSquaredError"),
    "mean_absolute_error": LossExpects("regression", "MeanAbsoluteError"),
    "mean_absolute_percentage_error": LossExpects("regression", "MeanAbsolutePercentageError"),
    "mean_squared_logarithmic_error": LossExpects("regression", "MeanSquaredLogarithmicError"),
    "huber": LossExpects("regression", "Huber"),
    "log_cosh": LossExpects("regression", "LogCosh"),
}

# The strings ``compile`` resolves to those functions (Keras 3.15's ``losses.get``: a
# function's name, its class's name, the short aliases).
LOSS_STRINGS = {
    **{name: name for name in EXPECTS},
    **{expects.class_name: name for name, expects in EXPECTS.items()},
    **{alias: "binary_crossentropy" for alias in ("bce", "BCE")},
    **{alias: "mean_squared_error" for alias in ("mse", "MSE")},
    **{alias: "mean_absolute_error" for alias in ("mae", "MAE")},
    **{alias: "mean_absolute_percentage_error" for alias in ("mape", "MAPE")},
    **{alias: "mean_squared_logarithmic_error" for alias in ("msle", "MSLE")},
}
# The metric names Keras 3.15 turns into a binary, categorical or sparse accuracy.
ACCURACY_NAMES = ("accuracy", "acc")


@dataclass
class Labels:
    """What the labels given were (no values kept, only numbers about them)."""

    y_id: int | None
    x_id: int | None
    kind: str  # "array" (NumPy), "tensor" (eager) or "dataset" (its element_spec)
    shape: tuple[int | None, ...]
    integer: bool
    low: float | None = None
    high: float | None = None
    integral: bool | None = None  # every value a whole number
    two_values: tuple[float, float] | None = None  # the only two values, when so


@dataclass
class Split:
    """What ``validation_split`` cut from labels grouped by class."""

    fraction: float
    held_out: int  # examples in the validation part
    classes: int  # classes in all the labels
    val_classes: list[int]  # classes in the validation part (up to 10)
    unseen: list[int]  # of those, the ones training never sees
    x_numpy: bool


@dataclass
class Setup:
    """One fit/evaluate call's model ending, loss, metrics and labels."""

    model: weakref.ReferenceType[Any]
    model_id: int
    method: str
    units: int | None
    activation: str | None  # "softmax", "sigmoid", "linear", ... (None: unknown)
    layer_index: int | None  # its position in ``model.layers``
    layer: weakref.ReferenceType[Any] | None = None
    loss: str = ""  # the Keras loss function's name, a key of ``EXPECTS``
    from_logits: bool = False
    accuracy: list[tuple[str, str, float | None]] = field(default_factory=list)
    labels: Labels | None = None
    split: Split | None = None
    losses: list[float] = field(default_factory=list)  # fit's per-epoch loss
    reduction: str | None = None  # the compiled loss object's stored ``reduction``
    batch_size: int | None = None  # fit's batch size for arrays (Keras's default 32)
    unreachable: int = 0  # regression targets outside the output activation's range
    multi_hot: int = 0  # rows of 0/1 labels holding more than one 1
    # fit only: the most common class's share of the labels, and how many classes they
    # hold (``run_outcomes.py``: the accuracy a model reaches by always predicting it).
    majority: float | None = None
    classes: int | None = None
    # ``compile`` only: the CompileLoss object that call made (which compile it was).
    compiled_loss: weakref.ReferenceType[Any] | None = None


# ------------------------------------------------------------------ reading
def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    if name in kwargs:
        return kwargs[name]
    index = FIT_ARGUMENTS.index(name)
    return args[index] if len(args) > index else None


def _mro_names(obj: Any) -> list[str]:
    return [getattr(k, "__name__", "") for k in type(obj).__mro__]


def activation_name(function: Any) -> str | None:
    """The name of a Keras or TensorFlow activation function (``"sigmoid"``); None for a
    callable of the user's own, whose output range is unknown."""
    if type(function).__name__ != "function":
        return None  # a callable object of the user's: no attribute of it is read
    name = getattr(function, "__name__", None)
    module = getattr(function, "__module__", "")
    if type(name) is not str or type(module) is not str:
        return None
    if not module.startswith(("keras", "tensorflow")):
        return None  # the user's own function: what it returns is unknown
    return name


def _output_of(model: Any) -> tuple[Any, int | None, int | None, str | None] | None:
    """(last layer, its index in ``model.layers``, units, activation) of a Sequential or
    functional model with one output; None for a subclassed model."""
    names = _mro_names(model)
    if "Sequential" in names:
        layers = contained_values(stored(model, "_layers"), sequences_only=True) or []
        layers = [la for la in layers if type(la).__name__ != "InputLayer"]
    elif "Functional" in names:
        outputs = contained_values(stored(model, "_outputs"), sequences_only=True) or []
        if len(outputs) != 1:
            return None
        history = stored(outputs[0], "_keras_history")
        last = history[0] if type(history) is tuple or hasattr(history, "_fields") else None
        operations = contained_values(stored(model, "_operations"), sequences_only=True) or []
        layers = [o for o in operations if type(o).__name__ != "InputLayer"]
        if last is None or not any(o is last for o in layers):
            return None
        layers = layers[: next(i for i, o in enumerate(layers) if o is last) + 1]
    else:
        # A subclassed model: the layer its own ``call`` returns the output of
        # (``return self.head(x)``), read from the method's source (never run).
        returned = returned_layer(model)
        if returned is None:
            return None
        layers = [returned]
    if not layers:
        return None
    last = layers[-1]
    index: int | None = len(layers) - 1 if "Sequential" in names or "Functional" in names else None
    if "Functional" in names:
        # A functional model's ``layers`` lists its InputLayer too (a Sequential's does not).
        public = contained_values(stored(model, "_operations"), sequences_only=True) or []
        index = next((i for i, o in enumerate(public) if o is last), None)
    attributes = instance_dict(last) or {}
    kind = _mro_names(last)
    if "Softmax" in kind and "Activation" not in kind:
        activation: str | None = "softmax"
    else:
        activation = activation_name(attributes.get("activation"))
    units = layer_output_width(last)
    if type(units) is not int and len(layers) > 1 and ("Activation" in kind or "Softmax" in kind):
        units = layer_output_width(layers[-2])
    if type(units) is not int:
        return None
    return last, index, units, activation


def layer_output_width(layer: Any) -> int | None:
    """``output_width`` of a layer whose ``call`` is the library's own (a Dense, a Conv2D,
    a subclass that only changes ``build``); None for a layer whose ``call`` the user wrote:
    its ``units`` may be a hidden width (experts of 16 units summed to one value), so what
    it returns is not told by any attribute."""
    try:
        _, defining = class_namespace_lookup(type(layer), "call")
    except Exception:
        return None
    if defining is None or not is_library_class(defining):
        return None
    return output_width(instance_dict(layer) or {})


def output_width(attributes: Mapping[str, Any]) -> int | None:
    """The size of a layer's last output axis as its construction says it: ``units``
    (Dense), else ``filters`` of a convolution whose channels come last (Conv1D/2D/3D,
    their transposes; Keras's default ``data_format``)."""
    units = attributes.get("units")
    if type(units) is int:
        return units
    filters = attributes.get("filters")
    if type(filters) is int and attributes.get("data_format", "channels_last") == "channels_last":
        return filters
    return None


def returned_layer(model: Any) -> Any | None:
    """The Keras layer whose output a subclassed model's own ``call`` returns, when every
    ``return`` of it is ``return self.<attribute>(...)`` of one attribute; else None."""
    from jupyterlab_tfcoach.monitor.training.model_source import own_function

    function = own_function(type(model), "call")
    method = user_code.method_source(function) if function is not None else None
    if method is None:
        return None
    returned: set[str] = set()
    for node in ast.walk(method.tree):
        if not isinstance(node, ast.Return):
            continue
        value = node.value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
            return None
        owner = value.func.value
        if not (isinstance(owner, ast.Name) and owner.id == "self"):
            return None
        returned.add(value.func.attr)
    if len(returned) != 1:
        return None
    layer = (instance_dict(model) or {}).get(returned.pop())
    if layer is None or not is_library_class(type(layer)) or "Layer" not in _mro_names(layer):
        return None
    return layer


def _keras_function_name(function: Any) -> str | None:
    """The name of one of Keras's loss functions (a key of ``EXPECTS``), else None."""
    if type(function).__name__ != "function":
        return None
    name = getattr(function, "__name__", None)
    module = getattr(function, "__module__", "")
    if type(name) is not str or type(module) is not str or not module.startswith("keras"):
        return None
    return name if name in EXPECTS else None


def loss_identity(loss: Any) -> tuple[str, bool] | None:
    """(the Keras loss function's name, from_logits) of a loss as ``compile`` takes it: a
    string (``"mse"``, ``"BinaryCrossentropy"``), a Keras loss object
    (``LossFunctionWrapper``: its ``fn`` and ``_fn_kwargs``) or one of Keras's loss
    functions; None for the user's own loss, a dict or list of losses, or anything else."""
    if type(loss) is str:
        name = LOSS_STRINGS.get(loss)
        return (name, False) if name is not None else None
    if type(loss).__name__ == "function":
        name = _keras_function_name(loss)
        return (name, False) if name is not None else None
    if not is_library_class(type(loss)):
        return None
    attributes = instance_dict(loss) or {}
    name = _keras_function_name(attributes.get("fn"))
    if name is None:
        return None
    arguments = attributes.get("_fn_kwargs")
    from_logits = arguments.get("from_logits", False) if isinstance(arguments, dict) else False
    return name, from_logits is True


def _loss_of(model: Any) -> tuple[str, bool] | None:
    compiled = stored(model, "_compile_loss")
    flat = contained_values(stored(compiled, "_flat_losses"), sequences_only=True)
    if not flat or len(flat) != 1:
        return None
    return loss_identity(library_attribute(flat[0], "loss"))


def compiled_loss(model: Any) -> tuple[str, bool] | None:
    """(the Keras loss function's name, from_logits) of a model's one compiled loss, as
    Keras built it at the first fit or evaluate; None for any other loss."""
    return _loss_of(model)


def model_ending(model: Any) -> tuple[str | None, int | None, tuple[str, bool] | None] | None:
    """(last layer's activation, its units, the compiled loss's (name, from_logits) or
    None) of a Sequential or functional model with one output, for the checks that read
    what a model's predictions are (``symptoms/threshold_scores.py``); None otherwise."""
    output = _output_of(model)
    if output is None:
        return None
    loss = _loss_of(model)  # built at the first fit/evaluate; before it, as the user gave it
    if loss is None:
        compiled = stored(model, "_compile_loss")
        loss = loss_identity(stored(compiled, "_user_loss")) if compiled is not None else None
    return output[3], output[2], loss


def _reduction_of(model: Any) -> str | None:
    """The compiled loss object's stored ``reduction`` (``"sum"``, ...)."""
    compiled = stored(model, "_compile_loss")
    flat = contained_values(stored(compiled, "_flat_losses"), sequences_only=True)
    if not flat or len(flat) != 1:
        return None
    reduction = (instance_dict(library_attribute(flat[0], "loss")) or {}).get("reduction")
    return reduction if type(reduction) is str else None


def _accuracies(model: Any) -> list[tuple[str, str, float | None]]:
    """(class, name, threshold) of each compiled metric Keras made for accuracy."""
    found = []
    compiled = stored(model, "_compile_metrics")
    for listed in contained_values(stored(compiled, "_flat_metrics"), sequences_only=True) or ():
        for metric in contained_values(stored(listed, "metrics"), sequences_only=True) or ():
            cls = type(metric).__name__
            name = stored(metric, "name")
            if "Accuracy" not in cls or type(name) is not str:
                continue
            if not is_library_class(type(metric)):
                continue  # a user's metric class: its threshold is its own
            arguments = stored(metric, "_fn_kwargs")
            threshold = arguments.get("threshold") if isinstance(arguments, dict) else None
            try:
                value = float(threshold) if type(threshold) in (float, int) else None
            except Exception:
                value = None
            found.append((cls, name, value))
    return found[:10]


def _numpy_module() -> Any:
    return sys.modules.get("numpy")


def _values_of(y: Any) -> tuple[Any, str] | None:
    """The labels as a NumPy array (no copy for an array) and their kind."""
    cls = type(y)
    if cls.__name__ == "ndarray" and cls.__module__ == "numpy":
        return y, "array"
    if "EagerTensor" in cls.__name__:
        shape = library_attribute(y, "shape")
        try:
            size = math.prod(int(d) for d in shape)
        except Exception:
            return None
        if size > MAX_LABELS:
            return None  # not copied out of the tensor
        numpy = library_attribute(y, "numpy")
        return (numpy(), "tensor") if numpy is not None else None
    return None


def _labels(x: Any, y: Any) -> tuple[Labels, Any] | None:
    """What the labels are, and their values (an array) when read."""
    if y is None and x is not None and "DatasetV2" in _mro_names(x):
        spec = library_attribute(x, "element_spec")
        if type(spec) is not tuple or len(spec) < 2:
            return None
        shape = library_attribute(spec[1], "shape")
        dtype = library_attribute(spec[1], "dtype")
        try:
            dims = tuple(None if d is None else int(d) for d in shape)
        except Exception:
            return None
        integer = bool(library_attribute(dtype, "is_integer", False))
        sliced = _sliced_labels(x)
        read = _values_of(sliced) if sliced is not None else None
        if read is None:
            return Labels(None, id(x), "dataset", dims, integer), None
        values = read[0]
        labels = Labels(None, id(x), "dataset", tuple(int(d) for d in values.shape), integer)
        return _with_values(labels, values)
    read = _values_of(y)
    if read is None:
        return None
    values, kind = read
    shape = tuple(int(d) for d in values.shape)
    integer = values.dtype.kind in "iub"
    labels = Labels(id(y), id(x) if x is not None else None, kind, shape, integer)
    return _with_values(labels, values)


def _sliced_labels(dataset: Any) -> Any | None:
    """The labels tensor of a ``Dataset.from_tensor_slices((x, y))`` reached through
    transformations that keep each pair as it is (batch, shuffle, cache, prefetch, repeat,
    take, skip): what tf.data stores on the source (``_tensors``), no element produced."""
    from jupyterlab_tfcoach.monitor.symptoms.dataset_order import chain_of, operation

    chain = chain_of(dataset)
    if not chain or any(operation(link) not in _PAIR_KEEPING for link in chain[:-1]):
        return None
    source = chain[-1]
    if type(source).__name__ != "_TensorSliceDataset":
        return None
    tensors = (instance_dict(source) or {}).get("_tensors")
    if type(tensors) not in (list, tuple) or len(tensors) != 2:
        return None
    return tensors[1]


def _with_values(labels: Labels, values: Any) -> tuple[Labels, Any]:
    """The labels with their lowest and highest value and whether all are whole, read
    from their values (one pass each)."""
    integer = labels.integer
    if values.size == 0 or values.size > MAX_LABELS or values.dtype.kind not in "iubf":
        return labels, None
    labels.low, labels.high = float(values.min()), float(values.max())
    if integer:
        labels.integral = True
    else:
        numpy = _numpy_module()
        labels.integral = bool((values == numpy.floor(values)).all()) if numpy else None
    return labels, values


def _class_numbers(values: Any, labels: Labels) -> Any | None:
    """One class number per example: integral labels shaped (n,) or (n, 1), or the
    index of the 1 in one-hot rows; None for anything else."""
    shape = labels.shape
    if len(shape) == 1 or (len(shape) == 2 and shape[1] == 1):
        if labels.integral and labels.low is not None and labels.low >= 0:
            return values.reshape(-1)
        return None
    if len(shape) == 2 and labels.low == 0.0 and labels.high == 1.0:
        return values.argmax(axis=1)
    return None


def _class_shares(values: Any, labels: Labels) -> tuple[float | None, int | None]:
    """The most common class's share of the labels and the number of classes they hold
    (one ``bincount`` pass), for class labels only; (None, None) otherwise."""
    numpy = _numpy_module()
    classes = _class_numbers(values, labels)
    if numpy is None or classes is None or classes.size == 0 or (labels.high or 0) > 10_000:
        return None, None
    counts = numpy.bincount(classes.astype("int64"))
    return float(counts.max()) / float(classes.size), int((counts > 0).sum())


def _split(values: Any, labels: Labels, fraction: float, x: Any) -> Split | None:
    """The classes on either side of fit's cut (``floor(n * (1 - fraction))``, as Keras
    3.15's ``train_validation_split``) when the labels come grouped by class: one pass
    finds where the class changes; shuffled labels change too often to go further."""
    numpy = _numpy_module()
    classes = _class_numbers(values, labels)
    if numpy is None or classes is None or classes.size < 2:
        return None
    starts = numpy.flatnonzero(classes[1:] != classes[:-1]) + 1
    if starts.size == 0 or starts.size >= MAX_CLASSES:
        return None  # a single class, or shuffled: nothing to say
    blocks = [int(c) for c in classes[numpy.concatenate(([0], starts))]]
    if len(set(blocks)) != len(blocks):
        return None  # a class in two blocks: not grouped
    cut = math.floor(classes.size * (1.0 - fraction))
    if cut <= 0 or cut >= classes.size:
        return None
    # Block i runs from its start to the next block's start.
    edges = [0, *(int(e) for e in starts), int(classes.size)]
    trained = {c for i, c in enumerate(blocks) if edges[i] < cut}
    validated = sorted(c for i, c in enumerate(blocks) if edges[i + 1] > cut)
    unseen = [c for c in validated if c not in trained]
    if not unseen and len(validated) > 1:
        return None
    x_cls = type(x)
    return Split(
        fraction=fraction,
        held_out=int(classes.size - cut),
        classes=len(blocks),
        val_classes=validated[:10],
        unseen=unseen[:10],
        x_numpy=x_cls.__name__ == "ndarray" and x_cls.__module__ == "numpy",
    )


def _split_only(
    method: str, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Setup | None:
    """A setup holding only what ``validation_split`` cut and the labels' class shares,
    for a model whose output or loss this module does not read (a subclassed model, a loss
    of the user's); None when there is nothing to say."""
    fraction = _argument(args, kwargs, "validation_split")
    x, y = _argument(args, kwargs, "x"), _argument(args, kwargs, "y")
    read = _labels(x, y)
    if read is None or read[1] is None:
        return None
    labels, values = read
    split = None
    if type(fraction) is float and 0 < fraction < 1 and "validation_data" not in kwargs:
        split = _split(values, labels, fraction, x)
    majority, classes = _class_shares(values, labels)
    if split is None and majority is None:
        return None
    return Setup(
        model=weakref.ref(model),
        model_id=id(model),
        method=method,
        units=None,
        activation=None,
        layer_index=None,
        labels=labels,
        split=split,
        majority=majority,
        classes=classes,
    )


def _ending_setup(
    model: Any,
    method: str,
    output: tuple[Any, int | None, int | None, str | None],
    loss: tuple[str, bool],
) -> Setup:
    """The ``Setup`` of a call's model ending (``_output_of``) and loss (``loss_identity``);
    the caller adds what its call gave."""
    layer, index, units, activation = output
    return Setup(
        model=weakref.ref(model),
        model_id=id(model),
        method=method,
        units=units,
        activation=activation,
        layer_index=index,
        layer=weakref.ref(layer),
        loss=loss[0],
        from_logits=loss[1],
    )


def read_setup(
    method: str, model: Any, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any
) -> Setup | None:
    """What one fit/evaluate call that returned was given, or None when the model's
    output or loss is not one this module reads."""
    output = _output_of(model)
    loss = _loss_of(model) if output is not None else None
    if output is None or loss is None:
        # A subclassed model or the user's own loss: only the split is checked.
        return _split_only(method, model, args, kwargs) if method == "fit" else None
    setup = _ending_setup(model, method, output, loss)
    setup.accuracy = _accuracies(model)
    x, y = _argument(args, kwargs, "x"), _argument(args, kwargs, "y")
    values = None
    read = _labels(x, y)
    if read is not None:
        setup.labels, values = read
        fraction = _argument(args, kwargs, "validation_split") if method == "fit" else None
        given = kwargs.get("validation_data")
        if values is not None and type(fraction) is float and 0 < fraction < 1 and given is None:
            setup.split = _split(values, setup.labels, fraction, x)
        if values is not None and setup.labels.low is not None:
            if EXPECTS[setup.loss].kind == "binary" and (
                setup.labels.low < 0 or setup.labels.high > 1
            ):
                numpy = _numpy_module()
                distinct = numpy.unique(values) if numpy is not None else []
                if len(distinct) == 2:
                    setup.labels.two_values = (float(distinct[0]), float(distinct[1]))
        if (
            values is not None
            and setup.labels.low is not None
            and EXPECTS[setup.loss].kind == "regression"
            and setup.activation in OUTPUT_RANGES
        ):
            setup.unreachable = _unreachable(values, setup.activation)
        if values is not None and _may_be_multi_hot(setup):
            setup.multi_hot = int((values.sum(axis=-1) > 1).sum())
        if values is not None and method == "fit":
            setup.majority, setup.classes = _class_shares(values, setup.labels)
    if method == "fit":
        logs = stored(result, "history")
        losses = logs.get("loss") if type(logs) is dict else None
        if type(losses) is list:
            setup.losses = [float(v) for v in losses[:1000] if type(v) is float]
        setup.reduction = _reduction_of(model)
        batch = _argument(args, kwargs, "batch_size")
        if type(batch) is int:
            setup.batch_size = batch
        elif batch is None and setup.labels is not None and values is not None:
            setup.batch_size = 32  # Keras's default for arrays and tensors
    return setup


def read_compiled(model: Any) -> Setup | None:
    """What one ``compile`` call that returned gave the model, as far as it is known
    without labels: its last layer, the loss (as the user gave it, ``_user_loss``) and
    the accuracy Keras will make of ``"accuracy"`` (binary for one output unit, Keras
    3.15's ``get_metric``); None when the output or the loss is not one this module reads.
    A few dict reads: no metric or loss is built, nothing is traced."""
    output = _output_of(model)
    if output is None:
        return None
    compiled = stored(model, "_compile_loss")
    loss = loss_identity(stored(compiled, "_user_loss")) if compiled is not None else None
    if loss is None:
        return None
    setup = _ending_setup(model, "compile", output, loss)
    setup.compiled_loss = weakref.ref(compiled)
    metrics = stored(stored(model, "_compile_metrics"), "_user_metrics")
    listed = metrics if type(metrics) in (list, tuple) else [metrics]
    for metric in listed[:50]:
        if type(metric) is str and metric.lower() in ACCURACY_NAMES and setup.units == 1:
            setup.accuracy.append(("BinaryAccuracy", metric, 0.5))
    return setup


def _may_be_multi_hot(setup: Setup) -> bool:
    """Labels of 0s and 1s, one column per unit, given to a softmax or a categorical
    loss: each row must then hold a single 1 (counted by one pass over the rows)."""
    labels = setup.labels
    return (
        labels is not None
        and len(labels.shape) == 2
        and labels.shape[1] == setup.units
        and (setup.units or 0) > 1
        and labels.low == 0.0
        and labels.high == 1.0
        and labels.integral is True
        and (EXPECTS[setup.loss].kind == "categorical" or setup.activation == "softmax")
    )


def _unreachable(values: Any, activation: str) -> int:
    """How many targets the activation can never output (one pass over the labels; a
    bounded end that is only approached, as sigmoid's 0 and 1, counts as reached)."""
    low, high, _reached = OUTPUT_RANGES[activation]
    outside = values < low
    if high != math.inf:
        outside = outside | (values > high)
    return int(outside.sum())


# ------------------------------------------------------------------ checking
@dataclass
class Finding:
    rule: str
    setup: Setup


def _findings(setup: Setup) -> list[Finding]:
    """Every disagreement between the setup and what its loss expects."""
    if setup.loss not in EXPECTS:  # a split-only setup
        return [Finding("validation_split_grouped", setup)] if setup.split is not None else []
    expects = EXPECTS[setup.loss]
    labels = setup.labels
    found: list[str] = []
    crossentropy = expects.kind != "regression"
    if setup.method == "compile" and setup.units == 1 and setup.activation == "softmax":
        found.append("softmax_one_unit")  # after fit, fit_symptoms tells it (any layer)
    if expects.kind == "categorical" and setup.units == 1 and setup.activation != "softmax":
        found.append("one_unit_categorical")  # a softmax there: softmax_one_unit
    elif crossentropy and not setup.from_logits and setup.activation in RAW_ACTIVATIONS:
        found.append("scores_to_probability_loss")
    if (
        expects.kind == "regression"
        and labels is not None
        and (setup.units or 0) > 1
        and len(labels.shape) == 2
        and labels.shape[1] == 1
        and (labels.integer or labels.integral)
        and (labels.low is None or (labels.low >= 0 and (labels.high or 0) < (setup.units or 0)))
    ):
        found.append("class_numbers_to_regression_loss")
    if (
        expects.kind == "regression"
        and labels is not None
        and setup.units is not None
        and labels.shape
        and "class_numbers_to_regression_loss" not in found
        and _target_width(labels) is not None
        and _target_width(labels) != setup.units
        and 1 in (_target_width(labels), setup.units)
    ):
        found.append("output_target_broadcast")
    if setup.multi_hot:
        found.append("multi_hot_labels")
    if (
        expects.kind == "binary"
        and labels is not None
        and labels.low is not None
        and (labels.low < 0 or (labels.high or 0) > 1)
    ):
        found.append("labels_outside_unit_range")
    if any(a[0] == "Accuracy" for a in setup.accuracy) and (
        setup.activation in PROBABILITY_ACTIVATIONS or setup.from_logits
    ):
        found.append("exact_accuracy_on_scores")
    binary_accuracy = [a for a in setup.accuracy if a[0] == "BinaryAccuracy" and a[2] == 0.5]
    if binary_accuracy and setup.from_logits and setup.activation in RAW_ACTIVATIONS:
        found.append("accuracy_threshold_on_scores")
    if (
        binary_accuracy
        and expects.kind == "regression"
        and labels is not None
        and labels.integral is False
    ):
        found.append("accuracy_on_regression")
    elif (
        binary_accuracy
        and expects.kind == "regression"
        and setup.method == "compile"
        and setup.activation is not None
        and setup.activation not in PROBABILITY_ACTIVATIONS
    ):
        # A regression head with no probability output: its targets are numbers, and
        # Keras's BinaryAccuracy counts exact 0/1 matches (told before any label is seen).
        found.append("accuracy_on_regression")
    if (
        labels is not None
        and setup.unreachable
        and setup.unreachable >= UNREACHABLE_SHARE * math.prod(labels.shape)
    ):
        found.append("targets_out_of_reach")
    if setup.split is not None:
        found.append("validation_split_grouped")
    if setup.method == "fit" and setup.reduction == "sum" and _diverged(setup.losses):
        found.append("summed_loss_diverged")
    return [Finding(rule, setup) for rule in found]


def findings(setup: Setup) -> list[Finding]:
    """Every disagreement of one setup (for checks that must not repeat its causes)."""
    return _findings(setup)


def _target_width(labels: Labels) -> int | None:
    """The values per example the loss compares with the output: the last dimension of
    2-D labels; None for other ranks (labels shaped ``(n,)`` against several units raise
    in Keras 3.15's gradient, measured: not silent)."""
    return labels.shape[-1] if len(labels.shape) == 2 else None


def _diverged(losses: list[float]) -> str | None:
    from jupyterlab_tfcoach.monitor.variables.loss_reduction import diverged

    return diverged([(epoch, value) for epoch, value in enumerate(losses, 1)])


# ------------------------------------------------------------------ entries
def _parsed(source: str) -> ast.Module | None:
    # The shared, cached parse: one note reads the same few cells a few dozen times (the
    # compile, the layer, the labels), and nothing here changes a tree. Imported here:
    # syntax imports modules that import this one.
    from jupyterlab_tfcoach.monitor.syntax import parsed_source

    return parsed_source(source)


def _method_call(sources: list[str], owner: str, method: str) -> tuple[ast.Call, str] | None:
    """The last ``<owner>.<method>(...)`` of the newest source that has one."""
    for source in sources:
        tree = _parsed(source)
        if tree is None:
            continue
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == method
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == owner
        ]
        if calls:
            return max(calls, key=lambda c: (c.lineno, c.col_offset)), source
    return None


def _segment(source: str, node: ast.AST) -> str:
    from jupyterlab_tfcoach.monitor.syntax import source_segment

    # ``ast.get_source_segment``'s text, with the source split into lines once.
    text = source_segment(source, node)
    return " ".join((text if text is not None else ast.unparse(node)).split())


def _keyword_or_position(call: ast.Call, keyword: str, position: int) -> ast.AST | None:
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    return call.args[position] if len(call.args) > position else None


def _with_keyword(call: ast.Call, source: str, keyword: str, position: int, value: str) -> str:
    """The call as written with one argument's value replaced (or added as a keyword)."""
    text = _segment(source, call)
    fixed = _parsed(text)
    if fixed is None or not isinstance(fixed.body[0], ast.Expr):
        return text
    node = fixed.body[0].value
    if not isinstance(node, ast.Call):
        return text
    old = _keyword_or_position(node, keyword, position)
    if old is not None:
        start, end = old.col_offset, old.end_col_offset
        if old.lineno == old.end_lineno == 1 and end is not None:
            return text[:start] + value + text[end:]
    closing = text.rstrip()[:-1].rstrip()
    separator = ", " if not closing.endswith("(") else ""
    return f"{closing}{separator}{keyword}={value})"


def _with_from_logits(call: ast.Call, source: str) -> str:
    """A loss constructor as written (``keras.losses.X(...)``) with ``from_logits=True``."""
    return _with_keyword(call, source, "from_logits", 0, "True")


# What a fit-time check is told as at compile time, when it was (``compile_agreement``).
Skip = Callable[[Setup, str], bool]


class _Entries:
    def __init__(
        self,
        namespace: Mapping[str, Any],
        cell_source: str,
        skip: Skip | None = None,
        told: set[tuple[str, int]] | None = None,
    ) -> None:
        self.namespace = namespace
        self.sources, self.counts = user_code.cell_sources(namespace, cell_source)
        self.notes: list[Note] = []
        self._told: set[tuple[str, int]] = set()
        self._skip = skip
        self.told_now = told if told is not None else set()

    def earlier_place(self, source: str, node: ast.AST) -> str | None:
        """``cell In[5], line 3`` when ``node`` (of ``source``, one of ``self.sources``) is
        in an earlier cell; None in this cell (the learner is looking at it)."""
        for text, count in zip(self.sources, self.counts, strict=True):
            if text is source:
                return user_code.cell_place(count, getattr(node, "lineno", 1)) if count else None
        return None

    def written_layer(self, setup: Setup) -> tuple[ast.Call, str] | None:
        """The last layer's constructor as written: searched first from the cell that
        last assigned the model's name (its layers were built there or before), then in
        every cell, newest first."""
        layer = setup.layer() if setup.layer is not None else None
        if layer is None:
            return None
        name = name_bound_to(setup.model_id, self.namespace)
        start = self._assigned_in(name) if name else None
        if start:
            found = _written_layer_node(self.sources[start:], layer, setup)
            if found is not None:
                return found
        return _written_layer_node(self.sources, layer, setup)

    def _assigned_in(self, name: str) -> int | None:
        """The index in ``self.sources`` of the newest cell assigning ``name``."""
        for index, source in enumerate(self.sources):
            tree = _parsed(source)
            if tree is not None and any(
                isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
                for node in ast.walk(tree)
            ):
                return index
        return None

    def given(self, labels: Labels, y: str | None, what: str) -> str:
        """The labels as the learner named them: ``y`` (and where it was made), the
        labels of a named dataset, else ``the labels given``."""
        if y:
            return f"`{y}`{self.made(y)}"
        dataset = name_bound_to(labels.x_id, self.namespace) if labels.kind == "dataset" else None
        return f"the {what} in `{dataset}`" if dataset else f"the {what} given"

    def made(self, name: str | None) -> str:
        """`` (made in cell In[3], line 4: `y = ...`)`` for a name last assigned in an
        earlier cell (its data's preparation), else nothing."""
        if not name:
            return ""
        for source, count in zip(self.sources, self.counts, strict=True):
            tree = _parsed(source)
            if tree is None:
                continue
            found = [
                node
                for node in ast.walk(tree)
                if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign)
                and any(
                    isinstance(t, ast.Name) and t.id == name
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    for t in ast.walk(target)
                )
            ]
            if not found:
                continue
            if count is None:
                return ""  # made in this cell
            node = max(found, key=lambda n: (n.lineno, n.col_offset))
            statement = _segment(source, node)
            if len(statement) > 120:
                return f" (made in {user_code.cell_place(count, node.lineno)})"
            return f" (made in {user_code.cell_place(count, node.lineno)}: `{statement}`)"
        return ""

    def keras(self) -> str:
        for name, spelled in (("keras", "keras"), ("tf", "tf.keras")):
            if isinstance(self.namespace.get(name), ModuleType):
                return spelled
        return "keras"

    def module_name(self, module: str) -> str | None:
        for name, value in list(self.namespace.items())[:10_000]:
            if isinstance(value, ModuleType) and getattr(value, "__name__", "") == module:
                if type(name) is str and not name.startswith("_"):
                    return name
        return None

    def add(self, finding: Finding) -> None:
        setup = finding.setup
        if (finding.rule, setup.model_id) in self._told:
            return
        model = setup.model()
        if model is None:
            return
        self._told.add((finding.rule, setup.model_id))
        if self._skip is not None and self._skip(setup, finding.rule):
            return  # told already (at compile): each cause once
        self.told_now.add((finding.rule, setup.model_id))
        name = name_bound_to(setup.model_id, self.namespace)
        compiled = _method_call(self.sources, name, "compile") if name else None
        told = getattr(self, finding.rule)(setup, name, compiled)
        if told is not None:
            self.notes.append(reports.note(*told))

    # What each piece is called in the text.
    @staticmethod
    def who(name: str | None) -> str:
        return f"`{name}`" if name else "the model"

    def layer(self, setup: Setup, name: str | None) -> str:
        """The last layer as the learner can type it (``m.get_layer('head')`` for a name
        they chose, else ``m.layers[i]``), and the call they wrote for it when found."""
        from jupyterlab_tfcoach.monitor.training.fit_symptoms import written_layer_name

        activation = (
            "no activation"
            if setup.activation in RAW_ACTIVATIONS
            else f"activation {setup.activation!r}"
        )
        layer = setup.layer() if setup.layer is not None else None
        chosen = written_layer_name(layer, "\n".join(self.sources)) if layer is not None else None
        if name and chosen:
            where = f"`{name}.get_layer({chosen!r})`"
        elif name and setup.layer_index is not None:
            where = f"`{name}.layers[{setup.layer_index}]`"
        else:
            where = "its last layer"
        found = self.written_layer(setup) if layer is not None else None
        if found:
            node, source = found
            written = _segment(source, node)
            plain = " (no activation)" if setup.activation in RAW_ACTIVATIONS else ""
            place = self.earlier_place(source, node)
            if place and plain:
                return f"{where}, `{written}` (no activation; defined in {place})"
            if place:
                return f"{where}, `{written}` (defined in {place})"
            return f"{where}, `{written}`{plain}"
        return f"{where} ({setup.units} unit{'s' if setup.units != 1 else ''}, {activation})"

    def written_loss(self, setup: Setup, compiled: tuple[ast.Call, str] | None) -> str:
        if compiled is not None:
            node = _keyword_or_position(compiled[0], "loss", 1)
            if node is not None:
                place = self.earlier_place(compiled[1], compiled[0])
                written = f"`loss={_segment(compiled[1], node)}`"
                return f"{written} (compiled in {place})" if place else written
        return f"the loss ({setup.loss})"

    def fixed_compile(
        self,
        compiled: tuple[ast.Call, str] | None,
        loss: str | None = None,
        metrics: str | None = None,
    ) -> str | None:
        if compiled is None:
            return None
        call, source = compiled
        text = _segment(source, call)
        if loss is not None:
            text = _with_keyword(_reparsed(text), text, "loss", 1, loss)
        if metrics is not None:
            text = _with_keyword(_reparsed(text), text, "metrics", 2, metrics)
        return text if _parsed(text) is not None else None

    def loss_with_logits(self, setup: Setup, compiled: tuple[ast.Call, str] | None) -> str:
        """The loss as written with ``from_logits=True``, else its class."""
        if compiled is not None:
            node = _keyword_or_position(compiled[0], "loss", 1)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute | ast.Name)
                and _segment(compiled[1], node.func).endswith(EXPECTS[setup.loss].class_name)
            ):
                return _with_from_logits(node, compiled[1])
        return f"{self.keras()}.losses.{EXPECTS[setup.loss].class_name}(from_logits=True)"

    # ---------------------------------------------------------- the rules
    def scores_to_probability_loss(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str]:
        squash = "softmax" if EXPECTS[setup.loss].kind != "binary" else "sigmoid"
        loss = self.loss_with_logits(setup, compiled)
        metrics = None
        if EXPECTS[setup.loss].kind == "binary" and any(
            a[0] == "BinaryAccuracy" for a in setup.accuracy
        ):
            # Raw scores split at 0: "accuracy" must not stay at its 0.5 threshold.
            metrics = self.binary_accuracy_at_zero(setup)
        fix = self.fixed_compile(compiled, loss=loss, metrics=metrics)
        text = (
            f"{self.who(name)} ends with {self.layer(setup, name)}: it outputs raw scores "
            f"(logits), any real number, but {self.written_loss(setup, compiled)} expects "
            f"probabilities (from_logits=False). It clips the scores into [1e-7, 1 - 1e-7], "
            f"and a clipped score gets no gradient, so {_raises(setup)} no error while "
            f"the model trains badly."
        )
        if fix:
            text += f" Tell the loss it gets raw scores{_and_again(setup)}: `{fix}`"
            text += " (the accuracy then splits the scores at 0)." if metrics is not None else "."
        else:
            text += f" Compile with `loss={loss}`."
        text += f" Or give the last layer activation={squash!r}, not both."
        return text, LOGITS_SECTION

    def binary_accuracy_at_zero(self, setup: Setup) -> str:
        names = [a[1] for a in setup.accuracy if a[0] == "BinaryAccuracy"]
        label = names[0] if names else "accuracy"
        return f'[{self.keras()}.metrics.BinaryAccuracy(name="{label}", threshold=0.0)]'

    def softmax_one_unit(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str]:
        layer = setup.layer() if setup.layer is not None else None
        found = self.written_layer(setup) if layer is not None else None
        text = (
            f"{self.who(name)} ends with {self.layer(setup, name)}: softmax divides each "
            f"output by the sum of all outputs, so over a single unit it is always 1.0, "
            f"whatever the weights: the model will predict the same class for every input "
            f"and fit raises no error."
        )
        sigmoid = None
        if found is not None:
            written = _segment(found[1], found[0])
            sigmoid = user_code.valid_code(written.replace("softmax", "sigmoid"))
        loss = None
        if EXPECTS[setup.loss].kind != "binary":
            loss = self.fixed_compile(compiled, loss='"binary_crossentropy"')
        head = f"`{sigmoid}`" if sigmoid else 'activation="sigmoid" in the last layer'
        text += f" For a yes/no target, build the model with {head}"
        text += (
            f", then compile with binary cross-entropy: `{loss}`." if loss else ", then compile."
        )
        text += (
            " For several classes, give the last layer one unit per class with "
            "sparse_categorical_crossentropy."
        )
        return text, RANGE_SECTION

    def one_unit_categorical(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str]:
        metrics = None
        if setup.activation in RAW_ACTIVATIONS:
            loss = f"{self.keras()}.losses.BinaryCrossentropy(from_logits=True)"
            if any(a[0] == "BinaryAccuracy" for a in setup.accuracy):
                metrics = self.binary_accuracy_at_zero(setup)  # raw scores split at 0
        elif compiled is not None and isinstance(
            _keyword_or_position(compiled[0], "loss", 1), ast.Call
        ):
            # The learner wrote a loss object (``CategoricalCrossentropy()``): its binary
            # counterpart, written the same way.
            loss = f"{self.keras()}.losses.BinaryCrossentropy()"
        else:
            loss = '"binary_crossentropy"'
        fix = self.fixed_compile(compiled, loss=loss, metrics=metrics)
        zeros = (
            f" (fit's loss was {setup.losses[-1]:g} every epoch)"
            if setup.losses and all(v == 0.0 for v in setup.losses)
            else ""
        )
        text = (
            f"{self.who(name)} ends with {self.layer(setup, name)} and is compiled with "
            f"{self.written_loss(setup, compiled)}, a loss over one unit per class: it "
            f"normalizes the outputs to sum to 1 over the last axis, which with a single "
            f"unit is always 1, so the loss is 0.0 whatever the model predicts{zeros} and "
            f"nothing is learned. One unit means a yes/no target: use binary cross-entropy"
        )
        text += f": `{fix}`." if fix else f" (`loss={loss}`)."
        return text, LABELS_SECTION

    def class_numbers_to_regression_loss(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str]:
        labels = setup.labels
        shape = labels.shape if labels is not None else ()
        loss = '"sparse_categorical_crossentropy"'
        if setup.activation in RAW_ACTIVATIONS:
            loss = f"{self.keras()}.losses.SparseCategoricalCrossentropy(from_logits=True)"
        fix = self.fixed_compile(compiled, loss=loss)
        text = (
            f"{self.who(name)} ends with {self.layer(setup, name)}, one unit per class, but "
            f"{self.written_loss(setup, compiled)} is a regression loss and the labels are "
            f"class numbers shaped {shape}: the loss broadcasts each class number against "
            f"all {setup.units} outputs and pulls every unit toward it, so the model learns "
            f"nothing about which class is right (no error: the shapes broadcast). Class "
            f"numbers go with the sparse categorical cross-entropy"
        )
        text += f": `{fix}`." if fix else f" (`loss={loss}`)."
        return text, LABELS_SECTION

    def last_layer_with(self, setup: Setup, keyword: str, position: int, value: str) -> str | None:
        """The last layer's constructor as written with one argument replaced."""
        layer = setup.layer() if setup.layer is not None else None
        found = self.written_layer(setup) if layer is not None else None
        if not found:
            return None
        written = _segment(found[1], found[0])
        return user_code.valid_code(
            _with_keyword(_reparsed(written), written, keyword, position, value)
        )

    def output_target_broadcast(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str] | None:
        labels = setup.labels
        width = _target_width(labels) if labels is not None else None
        if labels is None or width is None or setup.units is None:
            return None
        y = name_bound_to(labels.y_id, self.namespace)
        given = self.given(labels, y, "targets")
        shape = "(" + ", ".join("None" if d is None else str(d) for d in labels.shape)
        shape += ",)" if len(labels.shape) == 1 else ")"
        output = f"(None, {setup.units})"
        per = f"{width} target value{'s' if width != 1 else ''} per example"
        text = (
            f"{self.who(name)} ends with {self.layer(setup, name)}: its output is shaped "
            f"{output}, {setup.units} value{'s' if setup.units != 1 else ''} per example, "
            f"but {given} are shaped {shape}, {per}. {self.written_loss(setup, compiled)} "
            f"broadcasts the {output} output against the targets "
            f"(to (None, {max(width, setup.units)})) instead of raising"
        )
        if setup.units == 1:
            text += (
                f", so the single output is pulled toward all {width} targets at once and "
                f"learns their mean: the model can never predict the {width} of them."
            )
        else:
            text += (
                f", so each of the {setup.units} outputs is pulled toward the same target "
                f"and the loss measures {setup.units} copies of one error."
            )
        layer = self.last_layer_with(setup, "units", 0, str(width))
        if layer:
            text += (
                f" Give the model one output per target: build it with `{layer}` as its "
                f"last layer, then compile and {setup.method} again"
            )
        else:
            text += (
                f" Give the last layer {width} unit{'s' if width != 1 else ''} (one output "
                f"per target), then compile and {setup.method} again"
            )
        text += " (or, if the model was meant to predict something else, give it those targets)."
        return text, LABELS_SECTION

    def multi_hot_labels(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str] | None:
        labels = setup.labels
        if labels is None:
            return None
        y = name_bound_to(labels.y_id, self.namespace)
        given = self.given(labels, y, "labels")
        rows = labels.shape[0]
        what = []
        if setup.activation == "softmax":
            what.append(
                f"softmax makes the {setup.units} outputs compete and sum to 1, so they cannot "
                f"all be near 1"
            )
        if EXPECTS[setup.loss].kind == "categorical":
            what.append(
                f"{self.written_loss(setup, compiled)} treats each row as a single class out "
                f"of {setup.units}"
            )
        else:
            what.append(f"{self.written_loss(setup, compiled)} cannot undo that")
        text = (
            f"{given} are multi-hot, not one-hot: {setup.multi_hot} of {rows} rows hold "
            f"more than one 1 (several labels per example, as in a tagger). "
            f"{self.who(name)} ends with {self.layer(setup, name)}: "
            f"{'; '.join(what)}, so the model cannot say yes to several labels at once "
            f"and nothing raises (the shapes fit). Each label is its own yes/no question: "
            f"one sigmoid per output and binary cross-entropy"
        )
        layer = self.last_layer_with(setup, "activation", 1, '"sigmoid"')
        metric = f"[{self.keras()}.metrics.BinaryAccuracy(threshold=0.5)]"
        fix = self.fixed_compile(compiled, loss='"binary_crossentropy"', metrics=metric)
        if layer and fix:
            text += (
                f": build the model with `{layer}` as its last layer and compile it with "
                f"`{fix}` (the accuracy of each label at 0.5), then {setup.method} again."
            )
        else:
            text += (
                f': give the last layer activation="sigmoid" and compile with '
                f'`loss="binary_crossentropy", metrics={metric}`, then {setup.method} again.'
            )
        return text, LABELS_SECTION

    def labels_outside_unit_range(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str] | None:
        labels = setup.labels
        if labels is None or labels.low is None or labels.high is None:
            return None
        y = name_bound_to(labels.y_id, self.namespace)
        given = self.given(labels, y, "labels")
        text = (
            f"{self.who(name)} is compiled with {self.written_loss(setup, compiled)}, which "
            f"reads each label as the probability of the positive class, between 0 and 1, "
            f"but {given} run from {labels.low:g} to {labels.high:g}. The loss takes them "
            f"anyway: it can go below 0, the gradients push the outputs the wrong way, "
            f"and the accuracy compares the labels with 0 or 1."
        )
        if labels.two_values is not None:
            positive = labels.two_values[1]
            value = int(positive) if positive.is_integer() else positive
            numpy = self.module_name("numpy")
            if y and labels.kind == "array" and numpy:
                text += (
                    f" The labels have two values: make them 0 and 1 (1 for {value:g}), "
                    f"then {setup.method} again: `{y} = ({y} == {value!r}).astype({numpy}."
                    f"float32)`."
                )
            else:
                text += f" The labels have two values: make them 0 and 1 (1 for {value:g})."
        else:
            text += (
                " If they are class numbers, give the last layer one unit per class with "
                "activation='softmax' and use sparse_categorical_crossentropy."
            )
        return text, LABELS_SECTION

    def accuracy_threshold_on_scores(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str]:
        metric = self.binary_accuracy_at_zero(setup)
        fix = self.fixed_compile(compiled, metrics=metric)
        label = next((a[1] for a in setup.accuracy if a[0] == "BinaryAccuracy"), "accuracy")
        text = (
            f"{self.who(name)} ends with {self.layer(setup, name)} and its loss has "
            f"from_logits=True, so it outputs raw scores that split the classes at 0, but "
            f"Keras made the metric {label!r} a BinaryAccuracy with threshold 0.5: every "
            f"score between 0 and 0.5 is counted as the wrong class, so the {label} "
            f"{_prints(setup)} the model's accuracy. Split at 0"
        )
        text += f": `{fix}`." if fix else f": `metrics={metric}`."
        return text, LOGITS_SECTION

    def exact_accuracy_on_scores(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str]:
        label = next((a[1] for a in setup.accuracy if a[0] == "Accuracy"), "accuracy")
        outputs = (
            f"probabilities ({setup.activation})"
            if setup.activation in PROBABILITY_ACTIVATIONS
            else "raw scores (from_logits=True)"
        )
        fix = None
        if compiled is not None:
            node = _keyword_or_position(compiled[0], "metrics", 2)
            if isinstance(node, ast.List | ast.Tuple) and len(node.elts) == 1:
                fix = self.fixed_compile(compiled, metrics='["accuracy"]')
        text = (
            f"{self.who(name)} is compiled with the metric `{label}`, a "
            f"`{self.keras()}.metrics.Accuracy`: it counts the predictions exactly equal to "
            f"the labels, but the model outputs {outputs}, which are almost never exactly "
            f"a class number, so {label} stays near 0 however well the model learns. "
            'Nothing raises. Use the string `"accuracy"`, which Keras turns into the '
            "accuracy for the model's output and labels (binary, categorical or sparse)"
        )
        text += f": `{fix}`." if fix else ': `metrics=["accuracy"]`.'
        return text, LABELS_SECTION

    def accuracy_on_regression(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str]:
        label = next((a[1] for a in setup.accuracy if a[0] == "BinaryAccuracy"), "accuracy")
        fix = self.fixed_compile(compiled, metrics='["mae"]')
        if setup.method == "compile":
            labels = (
                "For targets other than 0 and 1 (prices, temperatures, counts), "
                f"{label} will stay near 0 however well the model fits"
            )
        else:
            labels = (
                f"The labels are not whole numbers, so {label} stays near 0 however well "
                f"the model fits"
            )
        text = (
            f"{self.who(name)} is compiled with {self.written_loss(setup, compiled)}, a "
            f"regression loss, and the metric {label!r}: for one output unit Keras makes it "
            f"a BinaryAccuracy, which rounds each prediction to 0 or 1 and counts the ones "
            f"equal to the label. {labels}. Measure the error instead"
        )
        text += f": `{fix}`." if fix else ': `metrics=["mae"]`.'
        return text, LABELS_SECTION

    def summed_loss_diverged(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str]:
        how = _diverged(setup.losses)
        how = (how or "").replace("step", "epoch")
        batch = f"{setup.batch_size}" if setup.batch_size else "the batch size"
        fix = None
        if compiled is not None:
            node = _keyword_or_position(compiled[0], "loss", 1)
            written = _segment(compiled[1], node) if node is not None else None
            loss = _sum_reduction_fixed(written) if written else None
            fix = self.fixed_compile(compiled, loss=loss) if loss else None
        text = (
            f"{self.who(name)}'s training loss {how}: training diverges. "
            f'{self.written_loss(setup, compiled)} is built with `reduction="sum"`: it '
            f"adds up the losses of each batch instead of averaging them, so every step is "
            f"{batch} times that of the mean loss the optimizer's learning rate is usually "
            f"tuned for."
        )
        if fix:
            text += f" Average over the batch, then {setup.method} again: `{fix}`."
        else:
            text += ' Build the loss with `reduction="sum_over_batch_size"` (the default).'
        text += f" (Or divide the learning rate by {batch}.)"
        return text, REDUCTION_SECTION

    def targets_out_of_reach(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str] | None:
        labels = setup.labels
        if labels is None or labels.low is None or labels.high is None:
            return None
        low, high, _reached = OUTPUT_RANGES[str(setup.activation)]
        reach = f"[{low:g}, inf)" if high == math.inf else f"[{low:g}, {high:g}]"
        if setup.activation in ("sigmoid", "softmax", "tanh", "softplus", "exponential"):
            reach = f"({low:g}, {high:g})" if high != math.inf else f"({low:g}, inf)"
        y = name_bound_to(labels.y_id, self.namespace)
        given = self.given(labels, y, "targets")
        total = max(1, math.prod(labels.shape))
        share = 100.0 * setup.unreachable / total
        written_loss = self.written_loss(setup, compiled)
        text = (
            f"{self.who(name)} ends with {self.layer(setup, name)}: activation "
            f"{setup.activation!r} only outputs values in {reach}, but {given} run from "
            f"{labels.low:g} to {labels.high:g} and {setup.unreachable} of {total} "
            f"({share:.0f}%) lie outside that range. The model can never predict them, so "
            f"{written_loss} stays high for those examples whatever it learns (no error: "
            f"the loss takes any number)."
        )
        layer = setup.layer() if setup.layer is not None else None
        found = self.written_layer(setup) if layer is not None else None
        written = _segment(found[1], found[0]) if found else None
        if written:
            fixed = _with_keyword(_reparsed(written), written, "activation", 1, "None")
            text += (
                f" A regression's output layer has no activation (linear): build the model "
                f"with `{fixed}` as its last layer, then compile and {setup.method} again."
            )
        else:
            text += (
                " A regression's output layer has no activation (linear): give the last "
                "layer activation=None, then compile and fit again."
            )
        return text, RANGE_SECTION

    def validation_split_grouped(
        self, setup: Setup, name: str | None, compiled: tuple[ast.Call, str] | None
    ) -> tuple[str, str] | None:
        split = setup.split
        labels = setup.labels
        if split is None or labels is None:
            return None
        y = name_bound_to(labels.y_id, self.namespace)
        x = name_bound_to(labels.x_id, self.namespace)
        given = f"`{y}`" if y else "the labels"
        listed = ", ".join(str(c) for c in split.val_classes)
        if split.unseen:
            holds = (
                f"class{'es' if len(split.unseen) > 1 else ''} "
                f"{', '.join(str(c) for c in split.unseen)}, which training never sees"
            )
        else:
            holds = f"only class {listed}"
        text = (
            f"{given} come grouped by class ({split.classes} classes, each in one block), and "
            f"validation_split={split.fraction:g} makes fit keep the last "
            f"{split.held_out} examples for validation before it shuffles anything: the "
            f"validation part holds {holds}. The val_ numbers then measure something else "
            f"than the model's accuracy on new data (fit's shuffle=True shuffles only the "
            f"training part, after the split)."
        )
        numpy = self.module_name("numpy")
        if x and y and labels.kind == "array" and split.x_numpy and numpy:
            text += (
                f" Shuffle the examples before fit: `order = {numpy}.random.permutation("
                f"len({y})); {x}, {y} = {x}[order], {y}[order]`, then fit again."
            )
        else:
            text += " Shuffle the examples and labels together before fit."
        return text, SPLIT_SECTION


def _raises(setup: Setup) -> str:
    return "fit will raise" if setup.method == "compile" else f"{setup.method} raises"


def _and_again(setup: Setup) -> str:
    return " in the compile call" if setup.method == "compile" else f", and {setup.method} again"


def _prints(setup: Setup) -> str:
    return (
        "fit prints will not be" if setup.method == "compile" else f"{setup.method} prints is not"
    )


def _sum_reduction_fixed(loss_text: str) -> str | None:
    """The loss as written with ``reduction="sum_over_batch_size"`` in place of
    ``reduction="sum"``; None when it has no ``reduction`` keyword."""
    tree = _parsed(loss_text)
    node = tree.body[0].value if tree is not None and isinstance(tree.body[0], ast.Expr) else None
    if not isinstance(node, ast.Call):
        return None
    for keyword in node.keywords:
        if keyword.arg == "reduction":
            value = _segment(loss_text, keyword.value)
            written = _segment(loss_text, keyword)
            return loss_text.replace(written, f"reduction={value[0]}sum_over_batch_size{value[0]}")
    return None


def _written_layer_node(
    sources: list[str], layer: Any, setup: Setup
) -> tuple[ast.Call, str] | None:
    """The constructor call the learner wrote for the last layer and the source holding
    it: the newest ``<...>.Dense(<units>, ...)`` of its class whose ``activation`` keyword
    (a string, or none for no activation) matches what Keras stores; None when not found
    or ambiguous."""
    cls = type(layer).__name__
    for source in sources:
        tree = _parsed(source)
        if tree is None:
            continue
        found = []
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else None
            callee = node.func.id if isinstance(node.func, ast.Name) else callee
            units = _keyword_or_position(node, "units", 0)
            if callee != cls or not isinstance(units, ast.Constant) or units.value != setup.units:
                continue
            activation = _keyword_or_position(node, "activation", 1)
            if activation is None:
                written = "linear"
            elif isinstance(activation, ast.Constant) and type(activation.value) is str:
                written = activation.value
            elif isinstance(activation, ast.Attribute):  # ``tf.nn.sigmoid``
                written = activation.attr
            else:
                continue
            if written == setup.activation:
                found.append(node)
        if found:
            texts = {_segment(source, node) for node in found}
            if len(texts) != 1:
                return None
            return max(found, key=lambda n: (n.lineno, n.col_offset)), source
    return None


def _reparsed(text: str) -> ast.Call:
    tree = _parsed(text)
    node = tree.body[0].value if tree is not None and isinstance(tree.body[0], ast.Expr) else None
    if not isinstance(node, ast.Call):
        raise ValueError("not a call")
    return node


def loss_notes(
    setups: list[Setup],
    namespace: Mapping[str, Any],
    cell_source: str,
    skip: Skip | None = None,
    told: set[tuple[str, int]] | None = None,
) -> list[Note]:
    """The notes of one cell's fit/evaluate (or compile) setups, each disagreement once per
    model; ``skip(setup, rule)`` leaves out what was told already (at compile), ``told``
    gets the (rule, model id) of each note made."""
    if not setups:
        return []
    entries = _Entries(namespace, cell_source, skip, told)
    for setup in setups:
        try:
            findings = _findings(setup)
        except Exception:
            continue
        for finding in findings:
            try:
                entries.add(finding)
            except Exception:
                continue
    return entries.notes
