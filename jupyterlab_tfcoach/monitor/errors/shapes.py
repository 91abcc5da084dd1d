"""Shape errors that mean a missing axis: the batch axis (one example given to a model, a
``tf.data`` pipeline without ``.batch()``) or the channel axis (``Conv2D`` fed ``(N, 28, 28)``).

A missing last axis of N > 1 values (``Input(shape=(4,))`` given ``(64,)``) is not an
axis of size 1 to add: the data must be made with N values, where it was made.

The fix is written in the user's own expression: the call that failed is found in the
cell (``model.predict(ARG)``, ``model(ARG)``, ``model.fit(ARG, ...)``) and ARG rewritten.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    ParsedError,
    code,
    dotted_root,
    index_origin,
    is_postfix_safe,
    kind_of,
    rewrite,
    strip_ansi,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import show_shape, value_of
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import is_batched

# Keras 3 (``InputSpec`` of a model built from ``keras.Input``).
_EXPECTED_SHAPE = re.compile(
    r"Expected shape \((?P<expected>[^)]*)\), but input has incompatible shape \((?P<given>[^)]*)\)"
)
# Keras 3 layer input checks (``Conv2D`` has min_ndim=4, ``Dense`` min_ndim=2).
_NDIM = re.compile(
    r"of layer '(?P<layer>[^']+)' is incompatible with the layer: expected (?:min_)?"
    r"ndim=(?P<expected>\d+), found ndim=(?P<found>\d+)\. Full shape received: \((?P<given>[^)]*)\)"
)
# Keras cannot infer the batch shape of an unbatched pipeline with some models.
_UNKNOWN_RANK = (
    "Cannot take the length of shape with unknown rank",
    "as_list() is not defined on an unknown TensorShape",
)
_MODEL_METHODS = frozenset(
    {
        "fit",
        "predict",
        "evaluate",
        "predict_on_batch",
        "train_on_batch",
        "test_on_batch",
        "__call__",
    }
)
# Dataset methods that return a new dataset: an argument that calls one is a pipeline,
# and one called as a statement of its own was thrown away.
_DATASET_METHODS = frozenset(
    {"batch", "shuffle", "map", "prefetch", "cache", "repeat", "filter", "padded_batch"}
)
_BATCH, _CHANNEL, _BOTH, _DATASET = "batch", "channel", "batch+channel", "dataset"
# The last axis of N > 1 values missing (``features:4``): the data must be made with it.
_FEATURES = "features:"
_WHOLE = "batch-if-whole"
# A rank-2 input to a layer reading (batch, steps, features): which axis is missing is
# the learner's to say (one sequence, or a batch of sequences of single values).
_SEQUENCE = "sequence"
_IMAGE_CHANNELS = (1, 3, 4)


def _shape(text: str) -> list[int | None] | None:
    dims: list[int | None] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part == "None":
            dims.append(None)
        elif part.isdigit():
            dims.append(int(part))
        else:
            return None
    return dims


def _matches(expected: list[int | None], given: list[int | None]) -> bool:
    return len(expected) == len(given) and all(
        e is None or g is None or e == g for e, g in zip(expected, given, strict=True)
    )


def _show(dims: list[int | None]) -> str:
    inner = ", ".join("None" if d is None else str(d) for d in dims)
    return f"({inner},)" if len(dims) == 1 else f"({inner})"


def _missing_axis(parsed: ParsedError) -> tuple[str, str] | None:
    """Which axis is missing, and a sentence naming the expected and the given shape."""
    message = strip_ansi(parsed.message)
    match = _EXPECTED_SHAPE.search(message)
    if match:
        expected, given = _shape(match.group("expected")), _shape(match.group("given"))
        if expected is None or given is None or not expected:
            return None
        shapes = (
            f"the model expects a batch of shape {_show(expected)} but got shape {_show(given)}"
        )
        if _matches(expected[1:], given):
            return _BATCH, shapes
        if len(expected) == len(given) + 2 and _matches(expected[1:-1], given):
            return _BOTH, shapes
        if _matches(expected[:-1], given) and expected[-1] == 1:
            return _CHANNEL, shapes
        if _matches(expected[:-1], given) and expected[-1] is not None:
            # A size-1 axis added would still not be the N values each example needs.
            return f"{_FEATURES}{expected[-1]}", shapes
        return None
    match = _NDIM.search(message)
    if match:
        expected_rank, found = int(match.group("expected")), int(match.group("found"))
        given = _shape(match.group("given"))
        if given is None:
            return None
        shapes = (
            f"layer '{match.group('layer')}' needs inputs with {expected_rank} axes but got "
            f"shape {_show(given)} ({found} axes)"
        )
        if expected_rank - found == 2:
            return _BOTH, shapes
        if expected_rank - found != 1:
            return None
        # (28, 28, 1) is one image without its batch axis; (32, 28, 28) is a batch of
        # images without their channel axis.
        if expected_rank >= 4 and given and given[-1] not in _IMAGE_CHANNELS:
            return _CHANNEL, shapes
        if expected_rank == 3:
            return _SEQUENCE, shapes
        # (32,) for Dense may be a batch of scalars: only a batch axis if the whole
        # argument has that shape (checked once the call is found).
        return (_BATCH if expected_rank >= 4 else _WHOLE), shapes
    if any(phrase in parsed.message for phrase in _UNKNOWN_RANK):
        return _DATASET, ""
    return None


def _model_call(context: ErrorContext) -> tuple[CellFrame, ast.Call, ast.expr] | None:
    """The failing ``model.predict(ARG)`` / ``model(ARG)`` / ``model.fit(ARG, ...)``."""
    for frame in context.frames():
        calls = [
            node
            for part in frame.header()
            for node in ast.walk(part)
            if isinstance(node, ast.Call) and _is_model_call(node, frame, context)
        ]
        exact = [call for call in calls if frame.at_position(call)]
        for call in exact + calls:
            argument = _first_argument(call)
            if argument is not None:
                return frame, call, argument
    return None


def _is_model_call(call: ast.Call, frame: CellFrame, context: ErrorContext) -> bool:
    if isinstance(call.func, ast.Attribute) and call.func.attr in _MODEL_METHODS:
        return True
    found, value = context.resolve(call.func, frame)
    return found and kind_of(value) == "keras"


def _first_argument(call: ast.Call) -> ast.expr | None:
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    for keyword in call.keywords:
        if keyword.arg in ("x", "inputs"):
            return keyword.value
    return None


def _batched(argument: ast.expr, frame: CellFrame, context: ErrorContext) -> bool:
    """Whether the argument holds a dataset whose chain has a ``batch``."""
    found, value = context.resolve(argument, frame)
    return found and is_batched(value)


def _is_dataset(argument: ast.expr, frame: CellFrame, context: ErrorContext) -> bool:
    found, value = context.resolve(argument, frame)
    if found:
        return kind_of(value) == "dataset"
    # An inline pipeline: tf.data.Dataset.from_tensor_slices(...).shuffle(...)
    return (
        isinstance(argument, ast.Call)
        and isinstance(argument.func, ast.Attribute)
        and argument.func.attr in _DATASET_METHODS
    )


def _array_like(argument: ast.expr, frame: CellFrame, context: ErrorContext) -> bool:
    """Whether ARG (or the array it indexes) is a NumPy array or a tensor (a symbolic one
    inside a traced function too, where ``np.expand_dims`` would fail), so that
    ``[None, ...]`` indexing works on it."""
    found, value = context.resolve(argument, frame)
    if not found:
        root = dotted_root(argument)
        if root is None:
            return False
        found, value = context.lookup(root.id, frame)
    return found and kind_of(value) in ("array", "tensor", "symbolic")


def _fixed_argument(
    axis: str, argument: ast.expr, source: str, frame: CellFrame, context: ErrorContext
) -> str:
    np = context.module_alias("numpy", "np")
    tf = context.module_alias("tensorflow", "tf")
    wrapped = source if is_postfix_safe(argument) else f"({source})"
    if axis == _DATASET:
        return f"{wrapped}.batch(32)"
    array_like = _array_like(argument, frame, context)
    index = _single_index(argument)
    if array_like and index is not None:
        # x[3] -> x[3:4]: the same example, with its batch axis kept.
        base = frame.segment(argument.value) or ""  # type: ignore[attr-defined]
        if isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0:
            start = index.value
            window = ":1" if start == 0 else f"{start}:{start + 1}"
        else:
            text = frame.segment(index) or ""
            window = f"{text}:{text} + 1"
        if base and window:
            return f"{base}[{window}, ..., None]" if axis == _BOTH else f"{base}[{window}]"
    if axis == _BATCH:
        return f"{wrapped}[None, ...]" if array_like else f"{np}.expand_dims({source}, 0)"
    if axis == _CHANNEL:
        return f"{wrapped}[..., None]" if array_like else f"{tf}.expand_dims({source}, -1)"
    return f"{wrapped}[None, ..., None]" if array_like else f"{np}.expand_dims({source}, (0, -1))"


def _single_index(argument: ast.expr) -> ast.expr | None:
    if not isinstance(argument, ast.Subscript):
        return None
    index = argument.slice
    if isinstance(index, (ast.Slice, ast.Tuple)):
        return None
    if isinstance(index, ast.Constant) and type(index.value) is not int:
        return None
    return index


_WHAT = {
    _BATCH: "the leading batch axis is missing",
    _CHANNEL: "the channel axis (last) is missing",
    _BOTH: "both the batch axis (first) and the channel axis (last) are missing",
}
_HOW = {
    _BATCH: "Give it a batch of one example",
    _CHANNEL: "Add the channel axis",
    _BOTH: "Add both axes",
}


def explain_missing_axis(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    found = _missing_axis(parsed) or _one_example_given(context)
    if found is None:
        return None
    from jupyterlab_tfcoach.monitor.errors.families_keras_api import input_counts_examples

    if input_counts_examples(parsed, context):
        return None  # the Input's shape counted the examples: that family explains it
    from jupyterlab_tfcoach.monitor.errors.families_model_data import (
        unknown_rank_data,
        wrong_kind_of_data,
    )

    if wrong_kind_of_data(parsed, context):
        return None  # strings for a model of numbers (or the reverse): no axis is missing
    if unknown_rank_data(parsed, context):
        return None  # a dataset of unknown rank (a py_function's result): its family says so
    from jupyterlab_tfcoach.monitor.errors.families_skipped_embedding import skipped_embedding

    if skipped_embedding(context) is not None:
        return None  # token ids that skipped their embedding: adding an axis would fail again
    from jupyterlab_tfcoach.monitor.errors.families_lost_batch_axis import (
        example_through_helper,
    )

    if example_through_helper(context):
        return None  # one example given to the learner's helper: fixed where it is called
    axis, shapes = found
    located = _model_call(context)
    if located is not None and axis in (_BATCH, _WHOLE, _DATASET, _SEQUENCE):
        upstream = _unbatched_training_data(parsed, shapes, located, context)
        if upstream is not None:
            return upstream
    if located is not None:
        frame, call, argument = located
        call_source, argument_source = frame.segment(call), frame.segment(argument)
        if call_source and argument_source and "\n" not in call_source:
            if axis in (_BATCH, _WHOLE, _DATASET, _SEQUENCE) and _is_dataset(
                argument, frame, context
            ):
                if _batched(argument, frame, context):
                    return None  # its elements are batches: no batch axis is missing
                return _unbatched_dataset(parsed, shapes, frame, call, argument, context)
            if axis == _DATASET:
                # After a failed call Keras retraces with a relaxed shape and reports an
                # unknown rank: compare the argument with the model's declared input.
                found = _against_model_input(call, argument, frame, context)
                if found is None:
                    return None
                axis, shapes = found
            if axis == _SEQUENCE:
                return _sequence_axes(shapes, frame, call, argument, context)
            if axis.startswith(_FEATURES):
                return _missing_features(
                    int(axis[len(_FEATURES) :]), shapes, frame, call, argument, context
                )
            if axis == _WHOLE:
                if not _has_shape(argument, frame, context, parsed):
                    return None
                axis = _BATCH
            fixed = rewrite(
                frame,
                call,
                argument,
                _fixed_argument(axis, argument, argument_source, frame, context),
            )
            if fixed:
                origin = index_origin(argument_source, context) if axis in (_BATCH, _BOTH) else None
                dropped = (
                    f" {code(argument_source)} is {code(origin.item)}: an integer index takes "
                    f"one item without its batch axis ({code(origin.fixed)} keeps it)."
                    if origin is not None
                    else ""
                )
                if axis == _BATCH and "expand_dims" not in fixed:
                    # The API a teacher names for adding an axis, beside the indexing fix.
                    # A symbolic tensor (inside a traced function) takes TensorFlow's.
                    found, value = context.resolve(argument, frame)
                    traced = found and kind_of(value) == "symbolic"
                    module = ("tensorflow", "tf") if traced else ("numpy", "np")
                    expanded = f"{context.module_alias(*module)}.expand_dims({argument_source}, 0)"
                    dropped += f" {code(expanded)} adds the same axis in front."
                return (
                    f"In {code(call_source)}, {shapes}: {_WHAT[axis]} (None stands for "
                    f"the batch size).{dropped} {_HOW[axis]}: {code(fixed)}.",
                    "batch-dimension",
                )
    if axis == _SEQUENCE:
        return _input_definition(parsed, context, sequence=True)
    if axis in (_DATASET, _WHOLE) or axis.startswith(_FEATURES):
        return None
    if axis == _CHANNEL:
        definition = _input_definition(parsed, context)
        if definition is not None:
            return definition
    return _generic(axis, shapes, context)


def _missing_features(
    features: int,
    shapes: str,
    frame: CellFrame,
    call: ast.Call,
    argument: ast.expr,
    context: ErrorContext,
) -> tuple[str, str] | None:
    """A model whose examples have N > 1 values on their last axis, given data without
    that axis (``z = tf.random.normal([BATCH])`` for ``Input(shape=(4,))``): an axis of
    size 1 (``z[..., None]``) would fail again, the data must be made with N values. The
    fix is the statement that made it, its shape written with N more, when it is a call
    given the shape as a list or tuple (``tf.random.normal([BATCH, 4])``)."""
    found, value = context.resolve(argument, frame)
    try:
        floats = found and kind_of(value) in ("array", "tensor") and "float" in str(value.dtype)
    except Exception:
        floats = False
    if not floats:
        return None  # integer ids may be one example of T ids: the model-data family's
    source, call_source = frame.segment(argument) or "", frame.segment(call) or ""
    rule = (
        f"In {code(call_source)}, {shapes}: each example must have {features} values on its "
        f"last axis, and {code(source)} has no such axis. An axis of size 1 "
        f"({code(source + '[..., None]')}) would still not be {features} values: make the "
        f"data with {features} features"
    )
    made = _made_at(argument, frame, context)
    if made is None:
        return f"{rule}.", "batch-dimension"
    where, statement, fixed = made
    rule += f" where it is made, {code(statement)} ({where})"
    if fixed is None:
        return f"{rule}.", "batch-dimension"
    size = _declared_size_name(call, features, frame, context) or str(features)
    return f"{rule}. Fix: {code(_with_features(fixed, size))}.", "batch-dimension"


def _declared_size_name(
    call: ast.Call, features: int, frame: CellFrame, context: ErrorContext
) -> str | None:
    """``LATENT`` for a model whose cells declare ``keras.Input(shape=(LATENT,))`` and
    ``LATENT`` holds the size: the fix keeps the learner's name for it."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells

    model = call.func.value if isinstance(call.func, ast.Attribute) else call.func
    if not isinstance(model, ast.Name):
        return None
    for _cell, statement in assignments_in_cells(model.id, context):
        for node in ast.walk(statement.value):
            if not (isinstance(node, ast.Call) and _called_name(node) in _INPUT_CALLS):
                continue
            shape = _declared_shape(node)
            last = shape.elts[-1] if isinstance(shape, ast.Tuple) and shape.elts else None
            if isinstance(last, ast.Name):
                found, value = context.lookup(last.id, frame)
                if found and type(value) is int and value == features:
                    return last.id
            return None
        return None
    return None


def _with_features(fixed: tuple[str, str, str], features: str) -> str:
    before, shape, after = fixed
    inner = shape[1:-1].rstrip().rstrip(",")
    closing = shape[-1]
    return f"{before}{shape[0]}{inner}, {features}{closing}{after}"


# Calls that make an array or tensor of the shape given as their first argument (or
# ``shape=``/``size=``): written with one more axis, they make the data the model needs.
_SHAPED_MAKERS = frozenset(
    {"normal", "uniform", "zeros", "ones", "rand", "randn", "truncated_normal", "full"}
)


def _made_at(
    argument: ast.expr, frame: CellFrame, context: ErrorContext
) -> tuple[str, str, tuple[str, str, str] | None] | None:
    """Where the name given was made: (``line 2 of this cell``, the statement, and, when
    its call writes the shape as a list or tuple, the statement cut around that shape)."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells

    if not isinstance(argument, ast.Name):
        return None
    running = frame.source()
    for cell, statement in assignments_in_cells(argument.id, context):
        if cell.source == running and statement.lineno >= frame.position.line:
            continue  # assigned after the failing line: not what it read
        written = cell.segment(statement)
        if not written or "\n" in written:
            return None
        where = f"line {statement.lineno} of {cell.label}"
        value = statement.value
        shape = None
        if isinstance(value, ast.Call) and _called_name(value) in _SHAPED_MAKERS:
            shape = next(
                (k.value for k in value.keywords if k.arg in ("shape", "size")),
                value.args[0] if value.args else None,
            )
        if not isinstance(shape, (ast.List, ast.Tuple)) or not shape.elts:
            return where, written, None
        shape_source = cell.segment(shape) or ""
        start = shape.col_offset - statement.col_offset
        end = start + len(shape_source)
        if shape.lineno != statement.lineno or written[start:end] != shape_source:
            return where, written, None
        return where, written, (written[:start], shape_source, written[end:])
    return None


def _sequence_axes(
    shapes: str, frame: CellFrame, call: ast.Call, argument: ast.expr, context: ErrorContext
) -> tuple[str, str] | None:
    """An LSTM (or Conv1D) given a rank-2 input: both readings, each with its fix."""
    source, call_source = frame.segment(argument) or "", frame.segment(call) or ""
    one = rewrite(frame, call, argument, _fixed_argument(_BATCH, argument, source, frame, context))
    many = rewrite(
        frame, call, argument, _fixed_argument(_CHANNEL, argument, source, frame, context)
    )
    if not one or not many or "\n" in one or "\n" in many:
        return None
    return (
        f"In {code(call_source)}, {shapes}: a sequence layer reads (batch, steps, features), "
        f"and {code(source)} has only two of those axes. If each row is a sequence of single "
        f"values, the features axis (last) is missing: {code(many)}. If {code(source)} is one "
        f"sequence (steps, features), the batch axis (first) is missing: {code(one)}.",
        "batch-dimension",
    )


_INPUT_CALLS = ("Input", "InputLayer")


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _declared_shape(call: ast.Call) -> ast.expr | None:
    """The shape a model definition declares: ``keras.Input(shape=...)`` (or its first
    argument), or a first layer's ``input_shape=...`` keyword."""
    if _called_name(call) in _INPUT_CALLS:
        return next((k.value for k in call.keywords if k.arg == "shape"), None) or (
            call.args[0] if call.args else None
        )
    return next((k.value for k in call.keywords if k.arg == "input_shape"), None)


def _input_definition(
    parsed: ParsedError, context: ErrorContext, sequence: bool = False
) -> tuple[str, str] | None:
    """A model definition whose ``keras.Input(shape=...)`` lacks the last axis a layer
    needs: the channel axis of a ``Conv2D`` (batch, height, width, channels), or, with
    ``sequence``, the features axis of an ``LSTM``/``GRU``/``Conv1D`` (batch, steps,
    features) given ``Input(shape=(T,))``. The fix is the declared shape (and the data fed
    later), not a call. The Input is read in the failing statement, else where a name the
    statement reads was assigned it (``inp = keras.Input(...)`` in the cells)."""
    match = _NDIM.search(strip_ansi(parsed.message))
    if match is None:
        return None
    layer = match.group("layer")
    for frame in reversed(context.frames()):
        calls = [
            node for part in frame.header() for node in ast.walk(part) if isinstance(node, ast.Call)
        ]
        declared = next(
            (
                (frame, call, call, node)
                for call in calls
                for node in [_declared_shape(call)]
                if node is not None
            ),
            None,
        ) or _input_assigned(frame, context)
        if declared is None:
            continue
        input_frame, statement, input_call, shape_node = declared
        found, shape = value_of(shape_node, input_frame, context)
        if not found and isinstance(shape_node, ast.Tuple):
            # ``(IMG, IMG)``: each item read on its own.
            items = [
                (True, item.value)
                if isinstance(item, ast.Constant)
                else value_of(item, input_frame, context)
                for item in shape_node.elts
            ]
            found = all(present for present, _ in items)
            shape = tuple(value for _, value in items)
        if not found or type(shape) is not tuple or not all(type(d) is int for d in shape):
            continue
        if sequence and (len(shape) != 1 or _declares_integers(input_call)):
            continue  # integer ids want an Embedding (the layer-chain family says so)
        layer_class = _layer_class(calls, layer) or f"layer '{layer}'"
        input_source = input_frame.segment(input_call)
        shape_source = input_frame.segment(shape_node)
        if not input_source or not shape_source or "\n" in input_source:
            continue
        # The channels the data has (RGB images: 3), read from the one array of shape
        # (N, *shape, C) in the namespace; 1 when no data says otherwise.
        with_channels = None if sequence else _data_with_channels(shape, context)
        channels = with_channels[1] if with_channels is not None else 1
        wanted = (*shape, channels)
        # A written tuple keeps the learner's names: (IMG, IMG) -> (IMG, IMG, 1).
        widened = (
            shape_source.rstrip()[:-1].rstrip().rstrip(",") + f", {channels})"
            if isinstance(shape_node, ast.Tuple) and shape_source.rstrip().endswith(")")
            else show_shape(wanted)
        )
        fixed = rewrite(input_frame, statement, shape_node, widened)
        if not fixed or "\n" in fixed:
            continue
        root = dotted_root(shape_node)
        data_name = (
            root.id
            if root is not None and _array_like(root, input_frame, context)
            else _data_of_shape(shape, context)
        )
        if sequence:
            points = _steps_in_data(shape, context)
            if points is not None and isinstance(shape_node, ast.Tuple):
                features = ", ".join(input_frame.segment(item) or "" for item in shape_node.elts)
                with_steps = rewrite(
                    input_frame, statement, shape_node, f"({points[1]}, {features})"
                )
                if with_steps and "\n" not in with_steps and all(shape_node.elts):
                    return _steps_definition(
                        match.group("given"), layer_class, input_source, shape, points, with_steps
                    )
            return _sequence_definition(
                match.group("given"), layer_class, input_source, shape, data_name, fixed, context
            )
        data = ""
        if with_channels is not None:
            data = (
                f", with the {channels} channel{'s' if channels != 1 else ''} the data has "
                f"({code(with_channels[0])} is {show_shape(with_channels[2])})"
            )
        elif data_name is not None:
            data = f", and feed the data with that axis: {code(f'{data_name}[..., None]')}"
        return (
            f"{code(input_source)} declares each example as {show_shape(shape)} "
            f"({code(shape_source)}), so {code(layer_class)} gets ({match.group('given')}) but "
            f"needs (batch, height, width, channels): the channel axis is missing from the "
            f"model's definition, not from a call. Declare it there{data}. Fix: "
            f"{code(fixed)}.",
            "batch-dimension",
        )
    return None


def _sequence_definition(
    given: str,
    layer_class: str,
    input_source: str,
    shape: tuple[int, ...],
    data_name: str | None,
    fixed: str,
    context: ErrorContext,
) -> tuple[str, str]:
    keras = context.module_alias("keras", "keras")
    steps = shape[0]
    data = (
        f" The data must then have that axis too: {code(f'{data_name}[..., None]')} (shape "
        f"(N, {steps}, 1)), or keep the data as it is and put "
        f"{code(f'{keras}.layers.Reshape(({steps}, 1))')} right after the Input."
        if data_name is not None
        else f" Give the data that axis too (`x[..., None]`), or put "
        f"{code(f'{keras}.layers.Reshape(({steps}, 1))')} right after the Input."
    )
    return (
        f"{code(input_source)} declares each example as {show_shape(shape)}, so "
        f"{code(layer_class)} gets ({given}) but reads (batch, steps, features): each example "
        f"is {steps} steps of one value, and the features axis (last, of size 1) is missing "
        f"from the model's definition.{data} Fix: {code(fixed)}.",
        "batch-dimension",
    )


def _steps_definition(
    given: str,
    layer_class: str,
    input_source: str,
    shape: tuple[int, ...],
    points: tuple[str, int, tuple[int | None, ...]],
    fixed: str,
) -> tuple[str, str]:
    name, steps, dims = points
    return (
        f"{code(input_source)} declares each example as {show_shape(shape)}, so "
        f"{code(layer_class)} gets ({given}) but reads (batch, steps, features). The data "
        f"says what an example is: {code(name)} is {show_shape(dims)}, {steps} steps of "
        f"{shape[0]} features each, so one example is {show_shape((steps, shape[0]))} and the "
        f"Input describes a single step of it. Declare the whole example. Fix: {code(fixed)}.",
        "batch-dimension",
    )


def _leading_spec(dataset: Any) -> tuple[int | None, ...] | None:
    """The shape of a dataset's first input (the first leaf of ``element_spec``)."""
    spec = library_attribute(dataset, "element_spec")
    for _ in range(3):
        if type(spec) not in (tuple, list) or not spec:
            break
        spec = spec[0]
    dims = library_attribute(spec, "shape")
    try:
        return tuple(None if d is None else int(d) for d in dims) if dims is not None else None
    except (TypeError, ValueError):
        return None


def _steps_in_data(
    shape: tuple[int, ...], context: ErrorContext
) -> tuple[str, int, tuple[int | None, ...]] | None:
    """(name, steps, its shape) when the learner's data holds sequences of examples of
    ``shape`` features: arrays (N, T, F), or datasets whose inputs are (T, F) per element
    or (None, T, F) per batch, all agreeing on T, with F the one axis declared. Rows of F
    values, (N, F) with N != T (and not a square transform), make it a table: not read."""
    if len(shape) != 1 or context.namespace is None:
        return None
    features = shape[0]
    found: list[tuple[str, int, tuple[int | None, ...]]] = []
    table_rows: set[int] = set()
    for name, dims in _namespace_arrays(context):
        if len(dims) == 2 and dims[1] == features and dims[0] != features:
            table_rows.add(dims[0])
        if len(dims) == 3 and dims[-1] == features and dims[1] > 1:
            found.append((name, dims[1], dims))
    for count, (name, value) in enumerate(context.namespace.items()):
        if count > 5000 or len(found) > 8:
            break
        if type(name) is not str or name.startswith("_") or kind_of(value) != "dataset":
            continue
        spec = _leading_spec(value)
        if spec is None or spec[-1:] != (features,):
            continue
        steps = spec[-2] if len(spec) in (2, 3) and not (len(spec) == 3 and spec[0]) else None
        if len(spec) == 2 and is_batched(value):
            continue  # batches of rows: a table
        if steps is not None and steps > 1:
            found.append((name, steps, spec))
    if not found or len({each[1] for each in found}) != 1:
        return None
    # A (T, F) array is one example of the sequences (a cloud, a clip); other row counts
    # are a table of F values per row, the reading with a unit axis.
    if table_rows - {found[0][1]}:
        return None
    return found[0]


def _declares_integers(call: ast.Call) -> bool:
    """``keras.Input(shape=(20,), dtype="int32")``: token ids, not values."""
    dtype = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    if dtype is None:
        return False
    written = ast.unparse(dtype)
    return "int" in written


def _input_assigned(
    frame: CellFrame, context: ErrorContext
) -> tuple[CellFrame, ast.stmt, ast.Call, ast.expr] | None:
    """``inp = keras.Input(shape=(20,))`` in the cells, for a name the failing statement
    reads: (a frame over its cell, the assignment, the Input call, its shape)."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame

    names = {
        node.id
        for part in frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    for name in sorted(names):
        for cell, node in assignments_in_cells(name, context):
            value = node.value
            if isinstance(value, ast.Call) and _called_name(value) in _INPUT_CALLS:
                shape_node = _declared_shape(value)
                if shape_node is not None:
                    return cell_frame(cell), node, value, shape_node
            break  # the newest assignment of the name is the one the statement read
    return None


def _namespace_arrays(context: ErrorContext) -> Iterator[tuple[str, tuple[int, ...]]]:
    """The learner's arrays and tensors (name, shape), among the first 5,000 names: the
    candidates for the data a model was declared for."""
    if context.namespace is None:
        return
    for count, (name, value) in enumerate(context.namespace.items()):
        if count > 5000:
            return
        if type(name) is not str or name.startswith("_"):
            continue
        if kind_of(value) not in ("array", "tensor"):
            continue
        try:
            yield name, tuple(int(d) for d in value.shape)
        except Exception:
            continue


def _data_with_channels(
    shape: tuple[int, ...], context: ErrorContext
) -> tuple[str, int, tuple[int, ...]] | None:
    """The array or tensor of the namespace of shape (N, *shape, C): images the model
    is declared for, with their channels (name, C, its shape)."""
    found = []
    for name, dims in _namespace_arrays(context):
        if len(dims) == len(shape) + 2 and dims[1:-1] == shape:
            found.append((name, dims[-1], dims))
            if len(found) > 1:
                break
    # Train, validation and test arrays agree on their channels: any of them says it.
    return found[0] if found and len({each[1] for each in found}) == 1 else None


def _data_of_shape(shape: tuple[int, ...], context: ErrorContext) -> str | None:
    """The one array or tensor of the namespace of shape (N, *shape): the learner's data
    for a model declared on ``shape``."""
    found = []
    for name, dims in _namespace_arrays(context):
        if len(dims) == len(shape) + 1 and dims[1:] == shape:
            found.append(name)
            if len(found) > 1:
                break
    return found[0] if len(found) == 1 else None


def _layer_class(calls: list[ast.Call], layer: str) -> str | None:
    """``Conv2D`` for Keras's default layer name ``conv2d_3`` (or a ``name=`` given)."""
    base = re.sub(r"_\d+$", "", layer).replace("_", "").lower()
    for call in calls:
        name = _called_name(call)
        given = next((k.value for k in call.keywords if k.arg == "name"), None)
        if isinstance(given, ast.Constant) and given.value == layer and name:
            return name
        if name and name.replace("_", "").lower() == base:
            return name
    return None


def _one_example_given(context: ErrorContext) -> tuple[str, str] | None:
    """A model called on one example, whatever the message says (Keras 3 may add an axis
    and fail deep inside a layer): the argument's shape is exactly the model's declared
    input without its batch axis."""
    located = _model_call(context)
    if located is None:
        return None
    frame, call, argument = located
    # fit/evaluate get a whole dataset: data shaped like one example there means the
    # Input counted the examples (another family), not a missing batch axis.
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    if method not in (None, "predict", "predict_on_batch", "__call__"):
        return None
    found = _against_model_input(call, argument, frame, context)
    return found if found is not None and found[0] == _BATCH else None


def _against_model_input(
    call: ast.Call, argument: ast.expr, frame: CellFrame, context: ErrorContext
) -> tuple[str, str] | None:
    model_node = call.func.value if isinstance(call.func, ast.Attribute) else call.func
    found, model = context.resolve(model_node, frame)
    # Only Keras' own model classes: a subclass's input_shape may be user code.
    module = getattr(type(model), "__module__", "") if found else ""
    if type(module) is not str or not module.startswith("keras.") or kind_of(model) != "keras":
        return None
    given = indexed_shape(argument, frame, context)
    try:
        expected = [None if d is None else int(d) for d in model.input_shape]
    except Exception:
        return None
    if not expected or given is None:
        return None
    shapes = f"the model expects a batch of shape {_show(expected)} but got shape {_show(given)}"
    if _matches(expected[1:], given):
        return _BATCH, shapes
    if len(expected) == len(given) + 2 and _matches(expected[1:-1], given):
        return _BOTH, shapes
    return None


def indexed_shape(
    node: ast.expr, frame: CellFrame | None, context: ErrorContext
) -> list[int | None] | None:
    """The shape of an array or tensor named on the line, or of one indexed there with
    constants (``xb[0]``, ``imgs[0][..., None]``, ``x[:1]``), worked out from the shape
    alone: the indexing is never run."""
    found, value = context.resolve(node, frame)
    if found:
        if kind_of(value) not in ("array", "tensor"):
            return None
        try:
            return [None if d is None else int(d) for d in value.shape]
        except Exception:
            return None
    if not isinstance(node, ast.Subscript):
        return None
    base = indexed_shape(node.value, frame, context)
    if base is None:
        return None
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    return _after_index(base, items)


def _constant(node: ast.expr | None) -> tuple[bool, object]:
    if node is None:
        return True, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _after_index(shape: list[int | None], items: list[ast.expr]) -> list[int | None] | None:
    """``shape`` after NumPy basic indexing by constant ``items`` (ints, slices, None,
    ...); None for anything else (a name, an array of indices)."""
    consuming = sum(
        1
        for item in items
        if not (isinstance(item, ast.Constant) and (item.value is None or item.value is ...))
    )
    result: list[int | None] = []
    position = 0
    for item in items:
        if isinstance(item, ast.Constant) and item.value is None:
            result.append(1)
        elif isinstance(item, ast.Constant) and item.value is ...:
            span = len(shape) - consuming
            if span < 0:
                return None
            result.extend(shape[position : position + span])
            position += span
        elif isinstance(item, ast.Slice):
            if position >= len(shape):
                return None
            bounds = [_constant(part) for part in (item.lower, item.upper, item.step)]
            if not all(ok and (v is None or type(v) is int) for ok, v in bounds):
                return None
            size = shape[position]
            lower, upper, step = (v for _, v in bounds)
            if step == 0:
                return None
            cut = slice(lower, upper, step)  # type: ignore[arg-type]
            result.append(None if size is None else len(range(*cut.indices(size))))
            position += 1
        else:
            ok, index = _constant(item)
            if not ok or type(index) is not int or position >= len(shape):
                return None
            position += 1
    if position > len(shape):
        return None
    return result + shape[position:]


def _has_shape(
    argument: ast.expr, frame: CellFrame, context: ErrorContext, parsed: ParsedError
) -> bool:
    """Whether the argument is an array of exactly the shape the layer received."""
    found, value = context.resolve(argument, frame)
    if not found or kind_of(value) not in ("array", "tensor"):
        return False
    match = _NDIM.search(strip_ansi(parsed.message))
    try:
        shape = [int(d) for d in value.shape]
    except Exception:
        return False
    return match is not None and shape == _shape(match.group("given"))


def _unbatched_dataset(
    parsed: ParsedError,
    shapes: str,
    frame: CellFrame,
    call: ast.Call,
    argument: ast.expr,
    context: ErrorContext,
    inner: str | None = None,
) -> tuple[str, str] | None:
    """``inner``: the model call inside the learner's own traced code that refused an
    element (a custom ``train_step``), named so the learner sees where it surfaced and why
    an axis added there is no fix."""
    source = frame.segment(argument) or ""
    fixed = rewrite(
        frame, call, argument, _fixed_argument(_DATASET, argument, source, frame, context)
    )
    if not fixed:
        return None
    given = f" ({shapes})" if shapes else ""
    surfaced = ""
    if inner is not None:
        surfaced = (
            f" Each element reached {code(inner)}, inside the model's own code, one example "
            f"at a time{given}; an axis added there would only make batches of one example, "
            "and a loss that compares the examples of a batch (in-batch negatives, a batch "
            "statistic) would have nothing to compare."
        )
        given = ""
    discarded = _discarded_batch(source, context)
    if discarded is not None:
        # `ds.batch(16)` on its own line: a new dataset, thrown away.
        return (
            f"{code(source)} yields single examples, not batches{given}: "
            f"{code(discarded)} made a new, batched dataset and threw it away (dataset "
            "methods never change the dataset they are called on, they return a new "
            f"one).{surfaced} Keep the result: "
            f"{code(f'{source} = {discarded}')}, then run {code(frame.segment(call) or '')} "
            "again.",
            "tf-data",
        )
    return (
        f"{code(source)} yields single examples, not batches{given}.{surfaced} Keras takes a "
        f"tf.data pipeline as it is (batch_size does not apply to it), so batch it: "
        f"{code(fixed)}.",
        "batch-dimension",
    )


# Keras methods that run the model (its ``train_step``, ``call``...) on a dataset's elements.
_DATASET_RUNNERS = frozenset({"fit", "evaluate", "predict"})


def _unbatched_training_data(
    parsed: ParsedError,
    shapes: str,
    located: tuple[CellFrame, ast.Call, ast.expr],
    context: ErrorContext,
) -> tuple[str, str] | None:
    """A model call inside the learner's own traced code (a custom ``train_step``, a
    subclass's ``call``) refused one element without its batch axis, and an outer frame
    is ``fit``/``evaluate``/``predict`` given a dataset with no ``batch`` in its chain:
    the cause is the pipeline, not the inner line. An axis added there would give batches
    of one (an in-batch loss then sees a 1x1 matrix), so the fix batches the dataset."""
    inner_frame, inner_call, inner_argument = located
    frames = context.frames()
    # By identity: comparing frames as dataclasses would compare the learner's locals.
    position = next((i for i, frame in enumerate(frames) if frame is inner_frame), None)
    if position is None:
        return None
    found, value = context.resolve(inner_argument, inner_frame)
    if _is_dataset(inner_argument, inner_frame, context) or (
        found and kind_of(value) not in ("symbolic", "tensor")
    ):
        return None
    for frame in frames[position + 1 :]:
        calls = [
            node
            for part in frame.header()
            for node in ast.walk(part)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _DATASET_RUNNERS
        ]
        for call in calls:
            argument = _first_argument(call)
            if argument is None or not _is_dataset(argument, frame, context):
                continue
            found, dataset = context.resolve(argument, frame)
            if not found or is_batched(dataset) or not _element_of_rank(dataset, shapes):
                continue
            inner = inner_frame.segment(inner_call)
            return _unbatched_dataset(
                parsed,
                shapes,
                frame,
                call,
                argument,
                context,
                inner=inner if inner and "\n" not in inner else None,
            )
    return None


def _element_of_rank(dataset: Any, shapes: str) -> bool:
    """Whether the dataset's first input has the rank of the shape the model was given
    (the last shape the sentence quotes): an element of the dataset is what reached it."""
    spec = _leading_spec(dataset)
    quoted = re.findall(r"shape \(([^)]*)\)", shapes)
    if spec is None or not quoted:
        return spec is not None
    given = _shape(quoted[-1])
    return given is not None and len(given) == len(spec)


def _discarded_batch(name: str, context: ErrorContext) -> str | None:
    """``ds.batch(16)`` as a statement of its own in one of the last cells (IPython keeps
    their source in ``In``): the learner meant ``ds = ds.batch(16)``."""
    if not name.isidentifier() or context.namespace is None:
        return None
    history = context.namespace.get("In")
    if type(history) is not list:
        return None
    for cell in reversed(history[-20:]):
        if type(cell) is not str or f"{name}.batch(" not in cell or len(cell) > 20_000:
            continue
        try:
            tree = ast.parse(cell)
        except SyntaxError:
            continue
        # Every dataset method the cell called on ``name`` and threw away, in order
        # (`ds.shuffle(64)` then `ds.batch(16)`): the learner meant them chained.
        thrown: list[str] = []
        for node in tree.body:
            if (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr in _DATASET_METHODS
                and isinstance(node.value.func.value, ast.Name)
                and node.value.func.value.id == name
            ):
                call = ast.get_source_segment(cell, node.value)
                if call is not None:
                    thrown.append(call[len(name) :])  # ".shuffle(64)"
        if any(part.startswith(".batch(") for part in thrown):
            return name + "".join(thrown)
    return None


def _generic(axis: str, shapes: str, context: ErrorContext) -> tuple[str, str]:
    np = context.module_alias("numpy", "np")
    if axis == _BATCH:
        fix = (
            f"slice instead of indexing (`x[:1]` rather than `x[0]`), or add the axis to "
            f"one example `x_new`: `{np}.expand_dims(x_new, 0)`"
        )
    elif axis == _CHANNEL:
        fix = f"add the axis to the images: `{np}.expand_dims(images, -1)`"
    else:
        fix = f"add both to one image: `{np}.expand_dims(image, (0, -1))`"
    return (f"The {shapes}: {_WHAT[axis]}. To fix it, {fix}.", "batch-dimension")
