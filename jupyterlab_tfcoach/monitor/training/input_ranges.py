"""Inputs at inference unlike the inputs a Keras model was trained on, and inputs scaled twice.

A model learns weights for the range of values ``fit`` gave it. When the scaling lives in
the training pipeline (``ds.map(lambda x, y: (x / 255, y))``, ``x_train / 255``) rather
than in the model, ``predict``/``evaluate`` on raw data (0..255 images) raises nothing and
returns meaningless results; when it lives in both (a ``/ 255`` map and a ``Rescaling``
layer), the model trains on values near 0 and learns slowly. Both are symptoms of what
the calls were given, read cheaply by ``fit_watch``'s hooks (once per call, never per
step):

- the inputs' statistics (``InputRange``: dtype, lowest, highest value) of a NumPy array
  (its first rows, at most ``MAX_VALUES`` values), an eager tensor (at most ``MAX_VALUES``
  values) or a ``tf.data`` dataset's first batch (``ds.take(1)``, read once per dataset:
  ~30 ms for a batch of 28x28 images behind a shuffle of 2,000; read only for an
  in-memory source and links that call no Python and fill no large buffer,
  ``_cheap_to_read``: a generator, ``py_function``, a file cache or a shuffle of more
  than ``MAX_SHUFFLE_BUFFER`` elements is not read);
- after each ``fit``, the range trained on is kept per model (weakly); a later
  ``predict``/``evaluate`` (not fit's own validation), or the inputs of fit's own
  ``validation_data`` (a tuple or list; read right after that fit), whose largest
  magnitude is ``MISMATCH_RATIO`` times larger or smaller (whole numbers on both sides,
  or a model whose first layer reads ids, an ``Embedding`` or a lookup, are not compared)
  gives a note naming both ranges, the data trained on and the call; fix: the call with
  the same scaling applied (``clf.predict(raw / 255.0)``; for validation data, the
  training data's preprocessing asked for in words), or the scaling inside the model;
- at ``fit``, a model whose first layer is a ``Rescaling`` by a scale under
  ``1 / MIN_RESCALE_DIVISOR`` (1/255, 1/127.5) given inputs already within [-1, 1]: the
  layers after it see values at most ``scale`` in size.

No user code runs except tf.data's own iteration of the user's dataset (its map functions,
already traced: nothing is traced); no value is kept, only numbers. Nothing here imports
TensorFlow or prints; every failure of our own work is swallowed.
"""

from __future__ import annotations

import ast
import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    is_library_class,
    keras_layers,
    library_attribute,
)
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import (
    BATCH,
    CACHE,
    MAP,
    PREFETCH,
    REPEAT,
    SHUFFLE,
    SKIP,
    TAKE,
    chain_of,
    operation,
)
from jupyterlab_tfcoach.monitor.symptoms.random_maps import runs_python
from jupyterlab_tfcoach.monitor.symptoms.rescaled_again import division_statement
from jupyterlab_tfcoach.monitor.syntax import method_calls, parsed_source
from jupyterlab_tfcoach.monitor.training import label_sums
from jupyterlab_tfcoach.monitor.training.label_sums import LabelRows, UnnormalisedLabels

RANGE_SECTION = "tf-data"
MAX_VALUES = 1_000_000  # values read from an array or tensor (an array's first rows)
MAX_SHUFFLE_BUFFER = 10_000  # a dataset shuffling more is not read (its buffer fills first)
CODE_LAYERS = frozenset(
    {
        "Embedding",
        "StringLookup",
        "IntegerLookup",
        "CategoryEncoding",
        "Hashing",
        "TextVectorization",
        "Discretization",
    }
)
IN_MEMORY_SOURCES = frozenset({"_TensorSliceDataset", "_TensorDataset", "_RangeDataset"})
MAX_MODELS = 32
MAX_DATASETS = 32
MAX_RECORDS = 8
MISMATCH_RATIO = 20.0  # 0..1 against 0..255 is 255; 0..1 against 0..4 is not told
MIN_RESCALE_DIVISOR = 50.0
FIT_ARGUMENTS = ("x", "y")


@dataclass(frozen=True)
class InputRange:
    """What one call's inputs held: numbers only."""

    dtype: str
    low: float
    high: float
    origin: str  # "array", "tensor" or "dataset" (its first batch)

    @property
    def magnitude(self) -> float:
        return max(abs(self.low), abs(self.high))

    def said(self) -> str:
        return f"from {_number(self.low)} to {_number(self.high)} ({self.dtype})"


@dataclass
class Trained:
    model: weakref.ReferenceType[Any]
    inputs: InputRange
    data_id: int


@dataclass
class Mismatch:
    """A predict/evaluate whose inputs are far from the range fit trained on."""

    model_id: int
    method: str
    trained: InputRange
    trained_data_id: int
    given: InputRange
    data_id: int


@dataclass
class ScaledTwice:
    """A fit whose inputs, already in [-1, 1], go through the model's Rescaling."""

    model_id: int
    inputs: InputRange
    data_id: int
    scale: float
    offset: float


@dataclass
class CellRanges:
    mismatches: list[Mismatch] = field(default_factory=list)
    scaled_twice: list[ScaledTwice] = field(default_factory=list)
    # Soft labels whose rows do not sum to 1 under a categorical loss (``label_sums.py``).
    unnormalised: list[UnnormalisedLabels] = field(default_factory=list)
    # What each model was fitted on (the watcher's own records, weak): read after the
    # cell for the calls of a SavedModel exported from one of them (``served.py``).
    trained: Mapping[int, Trained] = field(default_factory=dict)


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.3g}"


def _is_ndarray(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "ndarray" and cls.__module__ == "numpy"


def _range_of(values: Any, origin: str) -> InputRange | None:
    """The range of a NumPy array of numbers (an empty or non-numeric one: None)."""
    if values.size == 0 or values.dtype.kind not in "iuf":
        return None
    low, high = float(values.min()), float(values.max())
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    return InputRange(str(values.dtype), low, high, origin)


def _array_range(array: Any) -> InputRange | None:
    shape = array.shape
    if not shape:
        return None
    per_row = max(1, math.prod(int(d) for d in shape[1:]))
    rows = max(1, MAX_VALUES // per_row)
    return _range_of(array[:rows], "array")


def _tensor_range(tensor: Any, origin: str) -> InputRange | None:
    shape = library_attribute(tensor, "shape")
    try:
        size = math.prod(int(d) for d in shape)
    except Exception:
        return None
    if size > MAX_VALUES:
        return None
    numpy = library_attribute(tensor, "numpy")
    return _range_of(numpy(), origin) if numpy is not None else None


def _first_inputs(element: Any) -> Any:
    """The inputs of a dataset element: the first of an (x, y[, w]) tuple, else itself."""
    if type(element) is tuple and element:
        return element[0]
    return element


class RangeWatcher:
    """Keeps the range each model was trained on; compares inference calls with it."""

    def __init__(self) -> None:
        self._trained: dict[int, Trained] = {}
        # Per dataset read (weakly): its first batch's inputs' range and labels' row sums.
        self._datasets: dict[
            int, tuple[weakref.ReferenceType[Any], InputRange | None, LabelRows | None]
        ] = {}
        self._cell = CellRanges()

    def begin_cell(self) -> None:
        self._cell = CellRanges()

    def trained_on(self, model: Any) -> Trained | None:
        """What ``model`` was last fitted on (its inputs' range), or None."""
        trained = self._trained.get(id(model))
        return trained if trained is not None and trained.model() is model else None

    def take(self) -> CellRanges:
        cell, self._cell = self._cell, CellRanges()
        cell.trained = self._trained
        return cell

    # ------------------------------------------------------------- reading
    def inputs_of(self, data: Any) -> InputRange | None:
        if data is None:
            return None
        if _is_ndarray(data):
            return _array_range(data)
        if "EagerTensor" in type(data).__name__:
            return _tensor_range(data, "tensor")
        if operation(data) is not None:
            return self._dataset_range(data)
        return None

    def _dataset_range(self, dataset: Any) -> InputRange | None:
        known = self._datasets.get(id(dataset))
        if known is not None and known[0]() is dataset:
            return known[1]
        found = None
        rows = None
        if _cheap_to_read(chain_of(dataset)):
            take = library_attribute(dataset, "take")
            if take is not None:
                for element in take(1):
                    inputs = _first_inputs(element)
                    if "EagerTensor" in type(inputs).__name__:
                        found = _tensor_range(inputs, "dataset")
                    labels = label_sums.element_labels(element)
                    rows = label_sums.tensor_rows(labels) if labels is not None else None
        if len(self._datasets) >= MAX_DATASETS:
            self._datasets = {k: v for k, v in self._datasets.items() if v[0]() is not None}
        if len(self._datasets) < MAX_DATASETS:
            self._datasets[id(dataset)] = (weakref.ref(dataset), found, rows)
        return found

    def _dataset_rows(self, dataset: Any) -> LabelRows | None:
        """The row sums of the labels of the dataset's first batch, read with its inputs."""
        known = self._datasets.get(id(dataset))
        return known[2] if known is not None and known[0]() is dataset else None

    # ------------------------------------------------------------- calls
    def after_fit(self, model: Any, data: Any, labels: Any = None) -> None:
        inputs = self.inputs_of(data)
        try:
            self._label_rows(model, data, labels)
        except Exception:
            pass
        if inputs is None:
            return
        if len(self._trained) >= MAX_MODELS:
            self._trained = {k: v for k, v in self._trained.items() if v.model() is not None}
        if len(self._trained) < MAX_MODELS or id(model) in self._trained:
            self._trained[id(model)] = Trained(weakref.ref(model), inputs, id(data))
        rescale = _leading_rescaling(model)
        if (
            rescale is not None
            and len(self._cell.scaled_twice) < MAX_RECORDS
            and 0 < rescale[0] * MIN_RESCALE_DIVISOR < 1
            and inputs.magnitude <= 1.0
            and inputs.high > inputs.low
        ):
            self._cell.scaled_twice.append(
                ScaledTwice(id(model), inputs, id(data), rescale[0], rescale[1])
            )

    def _label_rows(self, model: Any, data: Any, labels: Any) -> None:
        """Keep a fit whose soft labels' rows do not sum to 1 under a categorical loss."""
        if len(self._cell.unnormalised) >= label_sums.MAX_RECORDS:
            return
        dataset = labels is None and operation(data) is not None
        rows = self._dataset_rows(data) if dataset else label_sums.tensor_rows(labels)
        if rows is None or not rows.unnormalised:
            return
        loss = label_sums.categorical_loss(model)
        if loss is None:
            return
        self._cell.unnormalised.append(
            UnnormalisedLabels(
                model_id=id(model),
                data_id=id(data),
                labels_id=None if dataset else id(labels),
                rows=rows,
                loss=loss,
                mapped=label_sums.mapped_functions(data) if dataset else [],
            )
        )

    def at_inference(self, method: str, model: Any, data: Any) -> None:
        trained = self._trained.get(id(model))
        if trained is None or trained.model() is not model or trained.data_id == id(data):
            return
        given = self.inputs_of(data)
        if given is None or len(self._cell.mismatches) >= MAX_RECORDS:
            return
        if _whole_numbers(given) and _whole_numbers(trained.inputs):
            return  # token ids or raw pixels on both sides: no scaling to compare
        if _takes_codes(model):
            return  # an Embedding or lookup first: its inputs are ids, not values
        small, large = sorted((trained.inputs.magnitude, given.magnitude))
        if small <= 0 or large / small < MISMATCH_RATIO:
            return
        self._cell.mismatches.append(
            Mismatch(id(model), method, trained.inputs, trained.data_id, given, id(data))
        )


def _cheap_to_read(chain: list[Any]) -> bool:
    """Whether one batch can be read without running the user's Python or filling a large
    buffer: an in-memory source (``from_tensor_slices``, ``from_tensors``, ``range``), then
    only batch, shuffle (a buffer up to ``MAX_SHUFFLE_BUFFER``), memory cache, take, skip,
    prefetch, repeat and maps that call no Python (a generator source, ``py_function``,
    a file cache or any other link: not read)."""
    if not chain or type(chain[-1]).__name__ not in IN_MEMORY_SOURCES:
        return False
    for link in chain[:-1]:
        kind = operation(link)
        if kind == SHUFFLE and _buffer(link) > MAX_SHUFFLE_BUFFER:
            return False
        if kind == MAP and runs_python(link):
            return False
        if kind == CACHE and _filename(link):
            return False
        if kind not in (BATCH, SHUFFLE, CACHE, TAKE, SKIP, MAP, PREFETCH, REPEAT):
            return False
    return True


def _filename(cache: Any) -> bool:
    value = (instance_dict(cache) or {}).get("_filename")
    numpy = library_attribute(value, "numpy") if value is not None else None
    try:
        return bool(numpy()) if numpy is not None else bool(value)
    except Exception:
        return True


def _whole_numbers(inputs: InputRange) -> bool:
    return inputs.dtype.startswith(("int", "uint", "bool"))


def _takes_codes(model: Any) -> bool:
    """Whether the model's first layer reads ids or categories (their size is no scale)."""
    for layer in keras_layers(model, 8)[1:]:
        name = type(layer).__name__
        if name == "InputLayer":
            continue
        return name in CODE_LAYERS
    return False


def _buffer(shuffle: Any) -> int:
    value = (instance_dict(shuffle) or {}).get("_buffer_size")
    numpy = library_attribute(value, "numpy") if value is not None else None
    try:
        return int(numpy()) if numpy is not None else int(value)
    except Exception:
        return MAX_SHUFFLE_BUFFER + 1  # unknown: not read


def _leading_rescaling(model: Any) -> tuple[float, float] | None:
    """(scale, offset) of the model's first layer when it is Keras's ``Rescaling``."""
    for layer in keras_layers(model, 8)[1:]:
        cls = type(layer)
        if cls.__name__ == "InputLayer":
            continue
        if cls.__name__ != "Rescaling" or not is_library_class(cls):
            return None
        attributes = instance_dict(layer) or {}
        scale, offset = attributes.get("scale"), attributes.get("offset", 0.0)
        if type(scale) not in (int, float) or type(offset) not in (int, float):
            return None
        return float(scale), float(offset)
    return None


# ------------------------------------------------------------------ notes
def _module_name(namespace: Mapping[str, Any], module: str) -> str | None:
    for name, value in namespace.items():
        if isinstance(value, ModuleType) and value.__name__ == module:
            return name
    return None


def _batch_said(inputs: InputRange) -> str:
    return " (its first batch)" if inputs.origin == "dataset" else ""


def _factor(ratio: float) -> str:
    """The scale as the learner would write it: 255.0 for 8-bit images."""
    if abs(ratio - 255.0) / 255.0 < 0.15:
        return "255.0"
    return f"{ratio:.3g}"


def _call_written(source: str, model: str, method: str, data: str) -> tuple[str, str] | None:
    """(the call as written, its first argument as written) of ``model.method(data, ...)``."""
    for node in method_calls(source, model, method):
        if node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == data:
            call = ast.get_source_segment(source, node)
            if call is not None:
                return call, data
    return None


def _scaled(data: str, given: InputRange, factor: str, divide: bool, tf: str | None) -> str:
    op = "/" if divide else "*"
    if given.origin == "array":
        return f"{data} {op} {factor}"
    if tf is None:
        return ""
    if given.origin == "tensor":
        return f"{tf}.cast({data}, {tf}.float32) {op} {factor}"
    return f"{data}.map(lambda x, *rest: ({tf}.cast(x, {tf}.float32) {op} {factor}, *rest))"


MAX_NAMES_SEARCHED = 2000


def _scaled_copy(namespace: Mapping[str, Any], record: Mismatch) -> str | None:
    """A name holding an array of the given data's shape whose values lie on the training
    scale (``X_test_n`` next to ``X_test``): the learner already made the scaled copy."""
    given_name = name_bound_to(record.data_id, namespace)
    given = namespace.get(given_name) if given_name else None
    shape = getattr(given, "shape", None) if _is_ndarray(given) else None
    if shape is None:
        return None
    trained = record.trained.magnitude
    for index, (name, value) in enumerate(namespace.items()):
        if index >= MAX_NAMES_SEARCHED:
            break
        if name.startswith("_") or id(value) == record.data_id or not _is_ndarray(value):
            continue
        if value.shape != shape:
            continue
        found = _array_range(value)
        if found is not None and trained / 2 <= found.magnitude <= trained * 2:
            return name
    return None


_MAX_STEPS_BACK = 3


def _uint8(value: Any) -> bool:
    """Whether ``value`` is a uint8 NumPy array or tensor (its dtype read, nothing run)."""
    if value is None:
        return False
    dtype = value.dtype if _is_ndarray(value) else library_attribute(value, "dtype")
    name = getattr(dtype, "name", None) if dtype is not None else None
    return name == "uint8"


def _unscaled_cast(source: str, data: str, namespace: Mapping[str, Any], tf: str) -> str | None:
    """The sentence and fix when ``data`` comes (through at most ``_MAX_STEPS_BACK``
    assignments of the cell, each reading one earlier name) from ``Y = tf.cast(X, ...)`` of
    uint8 ``X``: ``tf.cast`` keeps 0..255 where ``tf.image.convert_image_dtype`` scales to
    [0, 1], so the cast is fixed where it is made, and with it every name computed from it
    (the targets as well as the inputs)."""
    tree = parsed_source(source)
    if tree is None:
        return None
    assigned = {
        statement.targets[0].id: statement
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    }
    name = data
    for _ in range(_MAX_STEPS_BACK):
        statement = assigned.get(name)
        if statement is None:
            return None
        value = statement.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "cast"
            and value.args
            and isinstance(value.args[0], ast.Name)
            and _uint8(namespace.get(value.args[0].id))
        ):
            raw = value.args[0].id
            written = ast.get_source_segment(source, statement)
            if written is None or "\n" in written:
                return None
            readers = sorted(
                {
                    other.targets[0].id  # type: ignore[attr-defined]
                    for other in assigned.values()
                    if other.lineno > statement.lineno
                    and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(other.value))
                }
                | {name}
            )
            fixed = f"{name} = {tf}.image.convert_image_dtype({raw}, {tf}.float32)"
            uses = ", ".join(f"`{reader}`" for reader in readers)
            return (
                f"The scale comes from `{written}` (line {statement.lineno} of this cell): "
                f"`{tf}.cast` turns the uint8 pixels of `{raw}` into floats from 0 to 255 "
                f"without rescaling, where `{tf}.image.convert_image_dtype` also divides by "
                f"255 to give [0, 1]. Every value computed from `{name}` is on the 0..255 "
                f"scale ({uses}), targets as well as inputs, so rescale it once, where it "
                f"is made, not only the model's input: "
                f"`{fixed}` (or `{tf}.cast({raw}, {tf}.float32) / 255.0`)."
            )
        names = [n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in assigned]
        if len(set(names)) != 1:
            return None
        name = names[0]
    return None


# Divisors that bring 8-bit (or 16-bit) pixels to [0, 1] or [-1, 1]: training inputs whose
# largest value is about 1 over one of them are [0, 1] data divided once more.
_PIXEL_DIVISORS = (255.0, 256.0, 127.5, 65535.0)
# Inputs on a [0, 1]-like scale: what a call is given when the training data were the odd ones.
_UNIT_INPUTS = 1.5


def _trained_scaled_twice(
    trained: InputRange,
    given: InputRange,
    trained_on: str | None,
    namespace: Mapping[str, Any],
    source: str,
    model: str,
) -> str | None:
    """The cause, in words, when the training inputs are the odd ones: their largest value
    is about 1/255 (data already in [0, 1] divided by 255 again) and the inputs given now
    are on a [0, 1]-like scale, so the call that shows the gap is right."""
    if not trained_on or given.magnitude > _UNIT_INPUTS or trained.low < 0:
        return None
    divisor = next((d for d in _PIXEL_DIVISORS if 0.5 <= trained.magnitude * d <= 1.001), None)
    if divisor is None:
        return None
    found = division_statement(trained_on, namespace, source)
    written = f" (`{found[0]}`, {found[1]})" if found is not None else ""
    shown = _number(divisor)
    return (
        f" Here the training data are the odd ones, not these inputs: no value of "
        f"`{trained_on}` exceeds about 1/{shown}, which is what data already in [0, 1] give "
        f"when divided by {shown} once more{written}. This call is not where the "
        f"scaling went wrong: `{model}` learned from inputs squeezed close to 0. Fix: "
        f"delete that division of the training data (and of any split divided with it), "
        f"then train `{model}` again; this cell then needs no change."
    )


def mismatch_note(record: Mismatch, namespace: Mapping[str, Any], source: str) -> Note | None:
    model = name_bound_to(record.model_id, namespace)
    if model is None:
        return None
    data = name_bound_to(record.data_id, namespace)
    trained_on = name_bound_to(record.trained_data_id, namespace)
    given, trained = record.given, record.trained
    larger = given.magnitude > trained.magnitude
    ratio = (given.magnitude / trained.magnitude) if larger else trained.magnitude / given.magnitude
    factor = _factor(ratio)
    given_as = f"`{data}`, " if data else ""
    trained_as = f"`{trained_on}`, " if trained_on else ""
    validating = record.method == "validation"
    called = f"`{model}.fit`" if validating else f"`{model}.{record.method}`"
    text = (
        f"{called} was given {given_as}{'validation ' if validating else ''}inputs "
        f"{given.said()}"
        f"{_batch_said(given)}, but fit trained `{model}` on {trained_as}inputs "
        f"{trained.said()}{_batch_said(trained)}: about {factor.removesuffix('.0')} times "
        f"{'larger' if larger else 'smaller'}. The weights were learned for the training "
        f"range, so the {'predictions' if record.method == 'predict' else 'loss and metrics'} "
        f"mean little, and nothing raises."
    )
    if larger:
        twice = _trained_scaled_twice(trained, given, trained_on, namespace, source, model)
        if twice is not None:
            return reports.note(text + twice, RANGE_SECTION)
    text += (
        " The scaling was done to the training data outside the model, so it must be done "
        "again to every input the model gets."
    )
    written = _call_written(source, model, record.method, data) if data else None
    if record.method == "validation":
        written = None  # the call's first argument is the training data
    keras = "keras" if isinstance(namespace.get("keras"), ModuleType) else "tf.keras"
    # Only 8-bit values against [0, 1] say what the scaling was (a division by 255); any
    # other gap (standardised features, another unit) is the learner's own preprocessing,
    # which a ratio of ranges cannot rebuild: an already-scaled copy is named, else the
    # same preprocessing is asked for in words.
    eight_bit = factor == "255.0" and larger and trained.low >= 0 and given.low >= 0
    copy = _scaled_copy(namespace, record) if not eight_bit and written is not None else None
    cast = None
    if written is not None and eight_bit:
        tf = _module_name(namespace, "tensorflow")
        scaled = _scaled(data, given, factor, larger, tf) if data else ""
        cast = _unscaled_cast(source, data, namespace, tf) if data and tf else None
        if cast is not None:
            text += f" {cast}"
        elif scaled:
            call_text, argument = written
            fixed = call_text.replace(f"({argument}", f"({scaled}", 1)
            text += f" Apply the same scaling: `{fixed}`."
        else:
            text += " Apply the same scaling to these inputs."
    elif written is not None and copy is not None:
        call_text, argument = written
        fixed = call_text.replace(f"({argument}", f"({copy}", 1)
        text += f" `{copy}` holds inputs of the same shape on the training scale: `{fixed}`."
    else:
        source_name = f" to `{trained_on}`" if trained_on else " to the training data"
        text += (
            f" Apply the preprocessing you applied{source_name} (the same statistics, "
            "computed on the training data) to these inputs."
        )
    if cast is not None:
        # Scaling inside the model would leave the targets made from the cast on 0..255.
        return reports.note(text, RANGE_SECTION)
    inside = (
        f"a `{keras}.layers.Rescaling(1 / 255)` or an adapted `Normalization`"
        if eight_bit
        else f"a `{keras}.layers.Normalization` adapted on the raw training data"
    )
    text += (
        f" Or put it inside the model ({inside} as its first layer, trained on raw "
        f"inputs), so that fit, evaluate and predict all scale the same way."
    )
    return reports.note(text, RANGE_SECTION)


def scaled_twice_note(record: ScaledTwice, namespace: Mapping[str, Any]) -> Note | None:
    model = name_bound_to(record.model_id, namespace)
    if model is None:
        return None
    data = name_bound_to(record.data_id, namespace)
    inputs = record.inputs
    low = inputs.low * record.scale + record.offset
    high = inputs.high * record.scale + record.offset
    divisor = 1 / record.scale
    given_as = f"`{data}`, " if data else ""
    text = (
        f"`{model}` starts with a Rescaling layer (scale {record.scale:.3g}, that is "
        f"1/{_number(round(divisor, 1))}), but fit gave it {given_as}inputs already scaled, "
        f"{inputs.said()}{_batch_said(inputs)}: they are scaled twice, and "
        f"the layers after the Rescaling train on values from {_number(low)} to "
        f"{_number(high)}, so learning crawls. Scale once: give fit the raw data (drop the "
        f"division by {_number(round(divisor, 1))} from the data or its pipeline's map) and "
        f"keep the Rescaling layer, which then scales what predict and evaluate get too."
    )
    return reports.note(text, RANGE_SECTION)


def range_notes(cell: CellRanges | None, namespace: Mapping[str, Any], source: str) -> list[Note]:
    if cell is None or not (cell.mismatches or cell.scaled_twice or cell.unnormalised):
        return []
    notes: list[Note] = label_sums.notes(cell.unnormalised, namespace, source)
    told: set[tuple[int, int]] = set()
    for twice in cell.scaled_twice:
        if (twice.model_id, twice.data_id) in told:
            continue
        told.add((twice.model_id, twice.data_id))
        try:
            note = scaled_twice_note(twice, namespace)
        except Exception:
            note = None
        if note is not None:
            notes.append(note)
    for mismatch in cell.mismatches:
        if (mismatch.model_id, mismatch.data_id) in told:
            continue
        told.add((mismatch.model_id, mismatch.data_id))
        try:
            note = mismatch_note(mismatch, namespace, source)
        except Exception:
            note = None
        if note is not None:
            notes.append(note)
    return notes


def cheap_to_read(dataset: Any) -> bool:
    """Whether one batch of ``dataset`` can be read without running the user's Python or
    filling a large buffer (``_cheap_to_read`` of its chain), for other checks that read
    a dataset's first batch."""
    try:
        return _cheap_to_read(chain_of(dataset))
    except Exception:
        return False
