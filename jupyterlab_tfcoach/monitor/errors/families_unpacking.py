"""Unpacking a library result into the wrong number of names: one family.

``loss, acc = model.evaluate(x, y)`` on a model compiled with two metrics, or
``for images, labels in ds`` over a dataset of 3-tuples: Python raises "too many values to
unpack" in the user's own line, after TensorFlow or Keras returned, so the message says
nothing of what came back. The reading says it, from what the line unpacks:

- ``<model>.evaluate(...)`` (and ``test_on_batch``): one value per name of the model's
  ``metrics_names`` (the loss first), read through Keras's own property only (a user's
  override is never called); the fix unpacks every one, the extra names taken from Keras's;
- a ``for`` over a ``tf.data`` dataset (or ``next(iter(ds))``, or either through ``take``,
  ``shuffle`` and the other methods that keep the elements as they are): what each element
  is, from its ``element_spec``; when the element is nested (``((x, y), u)``, a ``zip`` of
  datasets) and the line has one name per tensor, the fix nests the names the same way,
  ``for (x, y), u in ds:``;
- a name holding a tuple, a list or a tensor: how many values unpacking it gives
  (a tensor unpacks along its first axis);
- a call whose result was never kept: a recurrent layer called with ``return_state=True``
  (the output then the final states: two for an LSTM, one for a GRU or SimpleRNN, twice as
  many through ``Bidirectional``), read from the constructor's keywords written on the line
  or from the layer object a name holds; or a TensorFlow op that returns a fixed tuple
  (``tf.math.top_k``, ``tf.unique``, ``tf.nn.moments``, ``tf.split`` with a count). The fix
  unpacks as many names as the call returns, the user's names kept in order;
- a model (or its ``predict``) called on the line, whose one output has as many columns
  as the line has names (``mean, log_var = model(x)`` on a ``(None, 2)`` output): one
  tensor comes back and unpacking walks its rows; the fix takes the columns,
  ``mean, log_var = tf.unstack(model(x), axis=-1)``;
- a ``for`` whose target is a name then a tuple (``for step, (a, b) in ds``) over
  elements with as many parts as the tuple: the first name asks for a counter the
  elements do not hold; the fix numbers them, ``enumerate(ds)``.
"""

from __future__ import annotations

import ast
import inspect
import keyword
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    describe,
    show_shape,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.families_model_data import model_output_shape
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute, stored

_TOO_MANY = re.compile(r"too many values to unpack \(expected (?P<expected>\d+)\)")
_NOT_ENOUGH = re.compile(
    r"not enough values to unpack \(expected (?P<expected>\d+), got (?P<got>\d+)\)"
)
_EVALUATE_CALLS = ("evaluate", "test_on_batch")
_MAX_NAMES = 20
_TENSOR_KINDS = ("tensor", "variable", "keras_variable", "array")
WEIGHTS_SECTION = "trainable-weights"
LAYER_CALL_SECTION = "functional-api"


def _targets_and_value(statement: ast.stmt | None) -> tuple[ast.expr, ast.expr] | None:
    """``(a, b)`` and the value unpacked into them, for ``a, b = v`` and ``for a, b in v``."""
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], (ast.Tuple, ast.List))
    ):
        return statement.targets[0], statement.value
    if isinstance(statement, (ast.For, ast.AsyncFor)) and isinstance(
        statement.target, (ast.Tuple, ast.List)
    ):
        return statement.target, statement.iter
    return None


def _keras_property(owner: Any, name: str) -> Any:
    """``owner.<name>`` when Keras's own property defines it (never a user's override)."""
    try:
        prop = inspect.getattr_static(type(owner), name)
    except AttributeError:
        return None
    getter = getattr(prop, "fget", None) if isinstance(prop, property) else None
    module = getattr(getter, "__module__", "") or ""
    if getter is None or not module.startswith("keras."):
        return None
    return getter(owner)


def _evaluate_names(model: Any) -> list[str] | None:
    """The names of what ``evaluate`` returns, in its order: Keras 3 flattens the metrics
    it compiled (``compile_metrics``) into their own names, the loss first."""
    metrics = _keras_property(model, "metrics")
    if type(metrics) is not list or len(metrics) > _MAX_NAMES:
        return None
    names: list[str] = []
    for metric in metrics:
        inner = (
            _keras_property(metric, "metrics")
            if type(metric).__name__ == "CompileMetrics"
            else None
        )
        for each in inner if type(inner) is list else [metric]:
            name = getattr(each, "name", None)
            if type(name) is str:
                names.append(name)
    return names[:_MAX_NAMES] or None


def _identifier(name: str, taken: set[str]) -> str:
    """A Python name for a metric's value: ``auc`` for "auc", ``val_2`` if it is taken."""
    base = re.sub(r"\W+", "_", name).strip("_").lower() or "value"
    if base[0].isdigit() or keyword.iskeyword(base):
        base = f"m_{base}"
    candidate, index = base, 2
    while candidate in taken:
        candidate, index = f"{base}_{index}", index + 1
    taken.add(candidate)
    return candidate


def _evaluate_finding(
    targets: ast.expr, value: ast.expr, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _EVALUATE_CALLS
    ):
        return None
    found, model = value_of(value.func.value, line.frame, context)
    names = _evaluate_names(model) if found else None
    owner = line.frame.segment(value.func.value)
    if not names or not owner:
        return None
    written = [line.frame.segment(element) or "" for element in targets.elts]  # type: ignore[attr-defined]
    listed = ", ".join(f'"{name}"' for name in names)
    rule = (
        f"{code(f'{owner}.{value.func.attr}(...)')} returns one value for the loss and one "
        f"for each metric compiled: {len(names)} here ({listed}), while the line unpacks "
        f"{len(written)}"
    )
    if not all(re.fullmatch(r"[A-Za-z_]\w*", target) for target in written):
        return Finding(rule + ".", None)
    taken = set(written)
    unpacked = written[: len(names)] + [_identifier(name, taken) for name in names[len(written) :]]
    call = line.frame.segment(value)
    if not call or "\n" in call:
        return Finding(rule + ".", None)
    fixed = f"{', '.join(unpacked)} = {call}"
    keyed = (
        f"{owner}.{value.func.attr}({', '.join(_call_arguments(value, line))}, return_dict=True)"
    )
    fix = (
        f"unpack all {len(names)}: {code(fixed)} (or ask for a dict keyed by those names: "
        f"{code(keyed)})"
        if len(unpacked) == len(names)
        else None
    )
    return Finding(rule + ".", fix)


def _call_arguments(call: ast.Call, line: FailingLine) -> list[str]:
    parts = [line.frame.segment(argument) or "..." for argument in call.args]
    parts += [
        f"{keyword_.arg}={line.frame.segment(keyword_.value) or '...'}"
        for keyword_ in call.keywords
        if keyword_.arg is not None and keyword_.arg != "return_dict"
    ]
    return parts


# Dataset methods whose elements have the receiver's structure and shapes (``batch`` and
# ``map`` change them): ``for a, b in ds.take(1)`` unpacks elements of ``ds``.
_SAME_ELEMENTS = ("take", "skip", "shuffle", "prefetch", "repeat", "cache", "as_numpy_iterator")


def _dataset_of(
    value: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[str, Any] | None:
    """The dataset a ``for`` loops over (or ``next(iter(ds))`` reads), with its source."""
    node = value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "next"
        and node.args
    ):
        node = node.args[0]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "iter"
        and node.args
    ):
        node = node.args[0]
    walked = line.frame.segment(node)
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _SAME_ELEMENTS
    ):
        node = node.func.value
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    found, dataset = value_of(node, line.frame, context)
    source = walked if walked and "\n" not in walked else None
    if not found or not source:
        return None
    kind = describe(source, dataset)
    if kind is None or kind.kind != "dataset":
        return None
    return source, dataset


def _dataset_finding(
    targets: ast.expr, value: ast.expr, line: FailingLine, context: ErrorContext
) -> Finding | None:
    found = _dataset_of(value, line, context)
    if found is None:
        return None
    source, dataset = found
    spec = getattr(type(dataset), "element_spec", None)
    try:
        element = spec.fget(dataset) if isinstance(spec, property) else None
    except Exception:
        return None
    count = len(targets.elts)  # type: ignore[attr-defined]
    if isinstance(element, tuple) and any(type(part) in (tuple, dict) for part in element):
        nested = _nested_finding(targets, value, source, element, line)
        if nested is not None:
            return nested
    if isinstance(element, tuple):
        shown = "; ".join(_spec_text(part) for part in element[:_MAX_NAMES])
        rule = (
            f"Each element of {code(source)} is a tuple of {len(element)} ({shown}), while "
            f"the line unpacks it into {count} names: unpack as many names as the element "
            "has parts, in the order the dataset was built with"
        )
        return Finding(rule + ".", None, section="tf-data")
    if isinstance(element, dict):
        keys = ", ".join(f'"{key}"' for key in list(element)[:_MAX_NAMES])
        rule = (
            f"Each element of {code(source)} is a dict (keys {keys}), and unpacking a dict "
            "gives its keys: read the values by key instead"
        )
        return Finding(rule + ".", None, section="tf-data")
    if getattr(element, "shape", None) is not None:
        rule = (
            f"Each element of {code(source)} is one {_spec_text(element)} tensor, not a tuple: "
            f"unpacking it splits it along its first axis. To get {count} parts, build the "
            "dataset from a tuple (`from_tensor_slices((features, labels))`) or "
            "`map` each element into one"
        )
        return Finding(rule + ".", None, section="tf-data")
    return None


def _leaves(structure: Any) -> int | None:
    """How many tensors a nested tuple of specs holds (None past a dict or a long tuple)."""
    if type(structure) is tuple:
        if len(structure) > _MAX_NAMES:
            return None
        counts = [_leaves(part) for part in structure]
        return None if None in counts else sum(c for c in counts if c is not None)
    return None if type(structure) is dict else 1


def _structure_text(structure: Any, names: list[str] | None) -> str:
    """``((x, y), u)``: the nesting of an element, each tensor as its spec, or as the next
    of ``names`` (consumed in order) when they are given."""
    if type(structure) is tuple:
        inner = ", ".join(_structure_text(part, names) for part in structure)
        return f"({inner},)" if len(structure) == 1 else f"({inner})"
    if type(structure) is dict:
        return "{" + ", ".join(f'"{key}": ...' for key in list(structure)[:_MAX_NAMES]) + "}"
    return names.pop(0) if names else _spec_text(structure)


def _nested_finding(
    targets: ast.expr, value: ast.expr, walked: str, element: tuple[Any, ...], line: FailingLine
) -> Finding | None:
    """``for a, b, c in ds`` over elements ``((a, b), c)`` (a ``zip`` of datasets, a
    dataset of ``((features...), label)``): the parts are nested, so the flat names do not
    match; the fix nests the learner's names as the element is nested."""
    names = [part.id for part in targets.elts if isinstance(part, ast.Name)]  # type: ignore[attr-defined]
    if len(names) != len(targets.elts):  # type: ignore[attr-defined]
        return None
    if _leaves(element) is None:
        return None
    shape = _structure_text(element, None)
    if len(shape) > 300:
        return None
    rule = (
        f"Each element of {code(walked)} is nested: {code(shape)}, a tuple of "
        f"{len(element)} whose parts are themselves tuples, so unpacking it into "
        f"{len(names)} flat names fails: the names must be nested as the element is"
    )
    walked_source = line.frame.segment(value)
    if _leaves(element) != len(names) or not walked_source or "\n" in walked_source:
        return Finding(rule + ".", None, section="tf-data")
    nested = _structure_text(element, list(names))[1:-1]
    if isinstance(line.statement, ast.For):
        return Finding(rule + ".", code(f"for {nested} in {walked_source}:"), section="tf-data")
    return Finding(rule + ".", code(f"{nested} = {walked_source}"), section="tf-data")


def _spec_text(spec: Any) -> str:
    """``(None, 4) float32`` for a ``tf.TensorSpec`` (what TensorFlow stores, no user code)."""
    try:
        dims = spec.shape.as_list()
        shape = show_shape(tuple(dims)) if dims is not None else "unknown shape"
    except Exception:
        shape = "unknown shape"
    dtype = getattr(getattr(spec, "dtype", None), "name", None)
    return f"{shape} {dtype}" if type(dtype) is str else shape


def _holds_tensors(values: Any) -> bool:
    """Whether a list or tuple holds tensors or arrays (a pure-Python list is not ours)."""
    if type(values) not in (list, tuple):
        return False
    for item in values[:_MAX_NAMES]:
        described = describe("", item, nested=True)
        if described is not None and described.kind in _TENSOR_KINDS:
            return True
    return False


def _value_finding(
    targets: ast.expr, value: ast.expr, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if not isinstance(value, (ast.Name, ast.Attribute)):
        return None
    source = line.frame.segment(value)
    found, held = value_of(value, line.frame, context)
    described = describe(source, held) if found and source else None
    if described is None:
        return None
    count = len(targets.elts)  # type: ignore[attr-defined]
    if described.kind in _TENSOR_KINDS and described.shape:
        unpacked = f"{described.shape[0]}" if described.shape[0] is not None else "one per row"
        rule = (
            f"{described.sentence()}: unpacking a tensor or array gives one value per row of "
            f"its first axis ({unpacked}), and the line unpacks {count}"
        )
        return Finding(rule + ".", None, section=GENERAL_SECTION)
    if described.kind == "list" and _holds_tensors(held):
        rule = f"{described.sentence()}, and the line unpacks {count}."
        return Finding(rule, None, section=GENERAL_SECTION)
    return None


_STEPS = {"train_step": "fit", "test_step": "evaluate"}
_WEIGHT_ARGUMENTS = ("class_weight", "sample_weight")


def _step_function(line: FailingLine) -> ast.FunctionDef | None:
    """The ``train_step``/``test_step`` method the failing line is in."""
    tree = line.frame.tree()
    at = line.frame.position.line
    if tree is None:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef)
            and node.name in _STEPS
            and node.lineno <= at <= (node.end_lineno or node.lineno)
        ):
            return node
    return None


def _weights_given(context: ErrorContext) -> str | None:
    """The weighting keyword (``class_weight=``) of the Keras call the error went through,
    read in the outermost frame's statement."""
    for frame in reversed(context.frames()):
        statement = frame.statement()
        if statement is None:
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                for keyword_ in node.keywords:
                    if keyword_.arg in _WEIGHT_ARGUMENTS:
                        return keyword_.arg
    return None


def _step_data_finding(
    targets: ast.expr, value: ast.expr, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``x, y = data`` in a custom ``train_step``/``test_step`` that got (x, y,
    sample_weight): Keras adds a third item when the call was given ``class_weight=`` or
    ``sample_weight=``. ``keras.utils.unpack_x_y_sample_weight`` takes every form."""
    method = _step_function(line)
    if method is None or not isinstance(value, ast.Name):
        return None
    names = getattr(targets, "elts", [])
    found, held = value_of(value, line.frame, context)
    if not found or type(held) is not tuple or len(held) != 3 or len(names) != 2:
        return None
    if not all(isinstance(n, ast.Name) for n in names):
        return None
    given = _weights_given(context)
    taken = {n.id for n in ast.walk(method) if isinstance(n, ast.Name)}
    weight = _identifier("sample_weight", taken)
    keras = context.module_alias("keras", "keras")
    written = ", ".join(n.id for n in names)
    fixed = f"{written}, {weight} = {keras}.utils.unpack_x_y_sample_weight({value.id})"
    because = (
        f"`{_STEPS[method.name]}` was given `{given}=`, which Keras turns into one weight "
        "per example, so"
        if given
        else "The data holds weights, so"
    )
    unpacking = code(line.frame.segment(line.statement) or "")
    rule = (
        f"{because} every batch reaching "
        f"`{method.name}` is (x, y, sample_weight), and {unpacking} "
        f"unpacks 2. Unpack it with `{keras}.utils.unpack_x_y_sample_weight`, which takes "
        f"(x, y, sample_weight), (x, y) and x alike, and weight the loss by {code(weight)} "
        f"(a loss's `sample_weight=` argument), or drop the weights from the call"
    )
    return Finding(rule + ".", code(fixed))


# A recurrent layer with return_state=True returns its output, then these final states.
_RNN_STATES: dict[str, tuple[str, ...]] = {
    "LSTM": ("state_h", "state_c"),
    "ConvLSTM1D": ("state_h", "state_c"),
    "ConvLSTM2D": ("state_h", "state_c"),
    "ConvLSTM3D": ("state_h", "state_c"),
    "GRU": ("state",),
    "SimpleRNN": ("state",),
}
# TensorFlow ops that return a fixed tuple: the op's last name -> the parts' names.
_OP_PARTS: dict[str, tuple[str, ...]] = {
    "top_k": ("values", "indices"),
    "unique": ("y", "idx"),
    "unique_with_counts": ("y", "idx", "count"),
    "moments": ("mean", "variance"),
    "weighted_moments": ("mean", "variance"),
    "eigh": ("eigenvalues", "eigenvectors"),
    "qr": ("q", "r"),
    "svd": ("s", "u", "v"),
    "clip_by_global_norm": ("clipped", "global_norm"),
}


def _keyword_flag(call: ast.Call, name: str) -> bool | None:
    for keyword_ in call.keywords:
        if keyword_.arg == name:
            value = keyword_.value
            constant = isinstance(value, ast.Constant) and type(value.value) is bool
            return value.value if constant else None  # type: ignore[union-attr]
    return False


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _rnn_of(
    func: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[str, tuple[str, ...], bool] | None:
    """The recurrent layer a call runs: (its class, its states, return_sequences), when it
    was made with ``return_state=True``; written inline or held by a name."""
    if isinstance(func, ast.Call):
        outer = _last_name(func.func)
        inner: ast.expr | None = func
        if outer == "Bidirectional" and func.args and isinstance(func.args[0], ast.Call):
            inner = func.args[0]
        if not isinstance(inner, ast.Call):
            return None
        name = _last_name(inner.func)
        if name not in _RNN_STATES or _keyword_flag(inner, "return_state") is not True:
            return None
        states = _RNN_STATES[name]
        if outer == "Bidirectional":
            states = tuple(f"forward_{s}" for s in states) + tuple(f"backward_{s}" for s in states)
            name = f"Bidirectional({name})"
        return name, states, _keyword_flag(inner, "return_sequences") is True
    found, layer = value_of(func, line.frame, context)
    if not found or value_kind(layer) != "layer":
        return None
    wrapped = stored(layer, "forward_layer")
    inner_layer = layer if wrapped is None else wrapped
    name = type(inner_layer).__name__
    if name not in _RNN_STATES or stored(inner_layer, "return_state") is not True:
        return None
    states = _RNN_STATES[name]
    if wrapped is not None:
        states = tuple(f"forward_{s}" for s in states) + tuple(f"backward_{s}" for s in states)
        name = f"Bidirectional({name})"
    return name, states, stored(inner_layer, "return_sequences") is True


def _op_parts(call: ast.Call, line: FailingLine, context: ErrorContext) -> tuple[str, ...] | None:
    """What a TensorFlow op with a fixed tuple result returns, by its parts' names."""
    root: ast.expr = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    found, module = context.lookup(root.id, line.frame)
    if not found or not str(getattr(module, "__name__", "")).startswith("tensorflow"):
        return None
    name = _last_name(call.func)
    if name == "split":
        count = call.args[1] if len(call.args) > 1 else None
        for keyword_ in call.keywords:
            if keyword_.arg == "num_or_size_splits":
                count = keyword_.value
        if isinstance(count, ast.Constant) and type(count.value) is int and 0 < count.value < 50:
            return tuple(f"part_{i}" for i in range(count.value))
        if isinstance(count, (ast.List, ast.Tuple)) and 0 < len(count.elts) < 50:
            return tuple(f"part_{i}" for i in range(len(count.elts)))
        return None
    return _OP_PARTS.get(name or "")


def _weight_names(call: ast.Call, line: FailingLine, context: ErrorContext) -> list[str] | None:
    """The names of the weights ``<layer>.get_weights()`` returns, in order (Keras's own
    ``weights`` property and each variable's ``name``)."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "get_weights"):
        return None
    from jupyterlab_tfcoach.monitor.errors.families_library_values import library_value

    found, owner = library_value(call.func.value, line, context)
    if not found or value_kind(owner) not in ("layer", "model"):
        return None
    weights = library_attribute(owner, "weights", None)
    if type(weights) is not list or len(weights) > _MAX_NAMES:
        return None
    names = [library_attribute(weight, "name", None) for weight in weights]
    if not all(type(name) is str for name in names):
        return None
    return names


def _call_finding(
    targets: ast.expr, value: ast.expr, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if not isinstance(value, ast.Call) or not isinstance(line.statement, ast.Assign):
        return None
    written = [line.frame.segment(element) or "" for element in targets.elts]  # type: ignore[attr-defined]
    call_text = line.frame.segment(value)
    if not call_text or "\n" in call_text:
        return None
    rnn = _rnn_of(value.func, line, context)
    weights = _weight_names(value, line, context) if rnn is None else None
    if weights is not None:
        parts = tuple(weights)
        owner = line.frame.segment(value.func.value)  # type: ignore[attr-defined]
        rule = (
            f"{code(call_text)} returns one NumPy array per weight of {code(owner or '...')}: "
            f"{len(parts)} here ({', '.join(parts)}), and the line unpacks {len(written)}"
        )
        section = WEIGHTS_SECTION
    elif rnn is not None:
        name, states, sequences = rnn
        parts = ("output", *states)
        output = "the whole output sequence" if sequences else "the output of the last step"
        said = " and ".join(", ".join(states).rsplit(", ", 1))
        article = "An" if name.startswith("LSTM") else "A"
        rule = (
            f"{article} {name} layer made with `return_state=True` returns {len(parts)} values: "
            f"{output}, then its final {said}, and the line unpacks {len(written)}"
        )
        section = LAYER_CALL_SECTION
    else:
        op_parts = _op_parts(value, line, context)
        if op_parts is None:
            return None
        parts = op_parts
        rule = (
            f"{code(call_text)} returns {len(parts)} values ({', '.join(parts)}), and the line "
            f"unpacks {len(written)}"
        )
        section = GENERAL_SECTION
    if len(parts) == len(written):
        return None
    if not all(re.fullmatch(r"[A-Za-z_]\w*", target) for target in written):
        return Finding(rule + ".", None, section=section)
    taken = set(written)
    names = written[: len(parts)] + [_identifier(part, taken) for part in parts[len(written) :]]
    fixed = f"{', '.join(names)} = {call_text}"
    return Finding(rule + ".", code(fixed), section=section)


def _element_parts(value: ast.expr, line: FailingLine, context: ErrorContext) -> int | None:
    """How many parts each element of what a ``for`` walks has: a dataset's tuple
    ``element_spec``, a ``zip`` of N iterables, a list or tuple of tuples (its first item)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        if value.func.id == "zip" and value.args and not value.keywords:
            return len(value.args)
        return None
    found = _dataset_of(value, line, context)
    if found is not None:
        spec = library_attribute(found[1], "element_spec")
        return len(spec) if type(spec) is tuple else None
    if not isinstance(value, (ast.Name, ast.Attribute)):
        return None
    known, held = value_of(value, line.frame, context)
    if known and type(held) in (list, tuple) and held and type(held[0]) is tuple:
        return len(held[0])
    return None


def _counter_finding(
    targets: ast.expr, value: ast.expr, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``for step, (a, b) in ds``: the elements are ``(a, b)``; ``step`` asks for a
    counter, which ``enumerate`` gives."""
    statement = line.statement
    elts = targets.elts  # type: ignore[attr-defined]
    if not isinstance(statement, ast.For) or len(elts) != 2:
        return None
    counter, inner = elts
    if not isinstance(counter, ast.Name) or not isinstance(inner, (ast.Tuple, ast.List)):
        return None
    parts = _element_parts(value, line, context)
    if parts is None or parts != len(inner.elts):
        return None
    walked = line.frame.segment(value)
    target = line.frame.segment(targets)
    if not walked or not target or "\n" in walked:
        return None
    rule = (
        f"Each element of {code(walked)} has {parts} parts, which {code(target)} unpacks into "
        f"its inner tuple; the name {code(counter.id)} before it asks for one more value, a "
        f"step number, which the elements do not hold (Python then unpacks a part into the "
        f"inner names). `enumerate` gives the number with each element: "
        f"`for {target} in enumerate({walked}):`"
    )
    fix = code(f"enumerate({walked})")
    if _dataset_of(value, line, context) is not None:
        return Finding(rule + ".", fix, section="tf-data")
    return Finding(rule + ".", fix, section=GENERAL_SECTION)


_MODEL_CALLS = ("predict", "predict_on_batch", "__call__")


def _model_columns_finding(
    targets: ast.expr, value: ast.expr, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``a, b = model(x)`` on a model whose one output is ``(None, 2)``: Keras returns one
    tensor (or array), which unpacking walks row by row; its columns are the parts."""
    if not isinstance(value, ast.Call) or not isinstance(line.statement, ast.Assign):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _MODEL_CALLS:
        owner_node: ast.expr = func.value
    else:
        owner_node = func
    found, model = value_of(owner_node, line.frame, context)
    owner = line.frame.segment(owner_node)
    described = describe(owner or "", model) if found and owner else None
    if described is None or described.kind not in ("model", "layer"):
        return None
    shape = model_output_shape(model)
    count = len(targets.elts)  # type: ignore[attr-defined]
    if shape is None or len(shape) != 2 or shape[-1] != count:
        return None
    call_text = line.frame.segment(value)
    target = line.frame.segment(targets)
    if not call_text or not target or "\n" in call_text:
        return None
    rule = (
        f"{code(owner)} has one output, of shape {show_shape(shape)}, so {code(call_text)} "
        f"returns one tensor, not {count} values: unpacking it walks its rows (one per "
        f"example), not its {count} columns. Take the columns apart instead (`[:, 0]` is "
        f"the first column of every row)"
    )
    fix = code(f"{target} = {tf_alias(context)}.unstack({call_text}, axis=-1)")
    return Finding(rule + ".", fix, section=GENERAL_SECTION)


def _read_unpacking(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    found = _targets_and_value(line.statement)
    if found is None:
        return None
    targets, value = found
    readings = (
        _counter_finding,
        _model_columns_finding,
        _step_data_finding,
        _evaluate_finding,
        _dataset_finding,
        _value_finding,
        _call_finding,
    )
    for reading in readings:
        finding = reading(targets, value, line, context)
        if finding is not None:
            return finding
    return None


UNPACKED_RESULT = ErrorFamily(
    "a result unpacked into the wrong number of names",
    messages=(Message(_TOO_MANY), Message(_NOT_ENOUGH)),
    exception_type="ValueError",
    read=_read_unpacking,
    section="keras-model-api",
    # Python raises it in the user's line, after the library returned.
    without_library=True,
)


# ------------------------------------------------------------------ one number unpacked
_NOT_ITERABLE = re.compile(r"cannot unpack non-iterable (?P<type>float|int) object")
# Keras methods that return the loss alone when the model was compiled without metrics.
_LOSS_ALONE_CALLS = ("evaluate", "test_on_batch", "train_on_batch")


def _read_single_loss(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``loss, acc = model.evaluate(x, y)`` on a model compiled without metrics: Keras
    returns the loss alone, one float, and Python cannot unpack a number. Claimed only
    when the model's metrics (read through Keras's own property) are the loss alone."""
    found = _targets_and_value(line.statement)
    if found is None or not isinstance(line.statement, ast.Assign):
        return None
    targets, value = found
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _LOSS_ALONE_CALLS
    ):
        return None
    found_model, model = value_of(value.func.value, line.frame, context)
    names = _evaluate_names(model) if found_model else None
    owner = line.frame.segment(value.func.value)
    call = line.frame.segment(value)
    written = [line.frame.segment(element) or "" for element in targets.elts]  # type: ignore[attr-defined]
    if names != ["loss"] or not owner or not call or "\n" in call:
        return None
    method = value.func.attr
    rule = (
        f"{code(f'{owner}.{method}(...)')} returned one {error.group('type')}, the loss, "
        f"because {code(owner)} was compiled without metrics: what {code(method)} returns "
        f"beyond the loss is decided by {code('compile(metrics=...)')}, so there is "
        f"nothing for {', '.join(code(name) for name in written[1:])} to take"
    )
    if not written or not re.fullmatch(r"[A-Za-z_]\w*", written[0]):
        return Finding(rule + ".", None)
    wanted = "accuracy" if any("acc" in name.lower() for name in written[1:]) else None
    metrics = f'metrics=["{wanted}"]' if wanted else "metrics=[...]"
    rule += (
        f". Either compile {code(owner)} with the metrics the line expects ({code(metrics)} "
        f"in its {code('compile')} call, then run {code(method)} again), or keep the one value"
    )
    fix = code(f"{written[0]} = {call}")
    return Finding(rule + ".", fix)


SINGLE_LOSS = ErrorFamily(
    "the loss alone unpacked into several names",
    messages=(Message(_NOT_ITERABLE),),
    exception_type="TypeError",
    read=_read_single_loss,
    section="keras-model-api",
    # Python raises it in the user's line, after Keras returned.
    without_library=True,
)
