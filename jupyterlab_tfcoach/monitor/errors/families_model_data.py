"""What a model's data methods and a preprocessing layer's ``adapt`` were given (issue #25).

Keras 3 refuses these with messages about something else (``None values not supported``,
``Unrecognized data type``, ``Invalid dtype: str96``, ``Cast string to float``, a Pack
op's dtypes, a graph's matmul sizes), so each family here is recognised by reading the
failing call: which method of which model or layer, and what each argument holds as
written (a Python list of strings, a NumPy array of ``str``, a string tensor, a 1-tuple,
a dataset's ``element_spec``, an array's last axis against the model's declared input):

- ``validation_data`` that is not an ``(x, y)`` pair: ``(x_val)`` is ``x_val`` itself
  (parentheses without a comma), ``(x_val,)`` a 1-tuple, a dataset of features alone;
  Keras reads it as inputs without labels, trains the first epoch and fails validating;
- text given to a model that takes numbers (the vectorizer only in the dataset's
  ``map``), numbers given to a model that starts with a ``TextVectorization`` or
  ``StringLookup``, string labels, and Python lists Keras's data adapters do not take;
- ``adapt`` given a dataset of ``(text, label)`` pairs: the layer reads each element
  whole, so the labels go in with the text;
- a ``StringLookup`` called on (or adapted to) integers, an ``IntegerLookup`` on strings;
- labels given as a Python list or tuple (``[y, y]``, ``list(y)``) to a model of one
  output, read by Keras as one label array per output;
- a dataset whose features or labels have an unknown rank (a ``tf.py_function`` in its
  ``map``): the model's input or output shape to reshape them to;
- data with another number of features than the model's declared input (a column
  added after the model was built): which of the two to change.

Values are read as the failing line reads them (``failing_line.value_of``: locals, the
namespace, library attributes), shapes and dtypes only; the vectorizer a fix names is the
namespace's own ``TextVectorization``/``StringLookup`` instance, by identity.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    assignments_in_cells,
    cell_frame,
    error_cells,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    ParsedError,
    class_mro,
    code,
    is_postfix_safe,
    rewrite,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    model_input_shapes,
    read_failing_line,
    show_shape,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.families_keras import LAYER_AXIS
from jupyterlab_tfcoach.monitor.errors.families_keras_api import call_argument
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    shape_list,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.stored_state import (
    is_library_class,
    keras_sublayers,
    library_attribute,
    stored,
)

# Adapting a text layer; a dataset's elements (adapting another layer on pairs).
ADAPT_SECTION = "preprocessing-adapt"
DATA_SECTION = "tf-data"
_DATA_METHODS = ("fit", "evaluate", "predict", "predict_on_batch", "train_on_batch")
_TEXT_LAYERS = ("TextVectorization", "StringLookup")
_MAX_NAMES = 5000
_MAX_ITEMS = 16
_type_name = type.__dict__["__name__"].__get__


# ------------------------------------------------------------------ reading the call
def _model_call(line: FailingLine, context: ErrorContext) -> tuple[ast.Call, str, Any] | None:
    """The failing line's ``model.fit(...)`` (``predict``, ``evaluate``, ``model(x)``): the
    call, the method (``__call__`` for a call of the model), the model."""
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr in _DATA_METHODS:
        owner, method = call.func.value, call.func.attr
    else:
        owner, method = call.func, "__call__"
    found, model = value_of(owner, line.frame, context)
    if not found or value_kind(model) != "model":
        return None
    return call, method, model


def _model_call_data(
    line: FailingLine, context: ErrorContext
) -> tuple[ast.Call, str, Any, ast.expr] | None:
    """``_model_call``'s call, method and model, and the data given it: the node of ``x``
    (``inputs`` for a call of the model), by position or keyword."""
    located = _model_call(line, context)
    if located is None:
        return None
    call, method, model = located
    x_node = call_argument(call, 0, "x" if method != "__call__" else "inputs")
    if x_node is None:
        return None
    return call, method, model, x_node


_ARRAY_MAKERS = ("array", "asarray")
_TENSOR_MAKERS = ("constant", "convert_to_tensor")


class _WrittenText:
    """Strings written on the line inside ``np.array(...)`` or ``tf.constant(...)``
    (never evaluated): what ``_text_kind`` says of them."""

    def __init__(self, words: str) -> None:
        self.words = words


def _literal(node: ast.expr) -> tuple[bool, Any]:
    """A literal written on the line; strings inside ``np.array([...])`` /
    ``tf.constant([...])`` (also ``["yes", "no"] * 32``) as ``_WrittenText``."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute):
        maker = node.func.attr
        if maker in _ARRAY_MAKERS + _TENSOR_MAKERS:
            leaves = [
                leaf.value for leaf in ast.walk(node.args[0]) if isinstance(leaf, ast.Constant)
            ]
            strings = [leaf for leaf in leaves if type(leaf) in (str, bytes)]
            others = [leaf for leaf in leaves if type(leaf) not in (str, bytes, int)]
            if (
                strings
                and not others
                and all(
                    isinstance(part, (ast.List, ast.Tuple, ast.Constant, ast.BinOp))
                    for part in ast.walk(node.args[0])
                    if isinstance(part, ast.expr) and not isinstance(part, ast.operator)
                )
            ):
                noun = "a NumPy array" if maker in _ARRAY_MAKERS else "a string tensor"
                return True, _WrittenText(noun + (" of strings" if "NumPy" in noun else ""))
        node = node.args[0]
    try:
        return True, ast.literal_eval(node)
    except Exception:
        return False, None


def _data(node: ast.expr, line: FailingLine, context: ErrorContext) -> tuple[bool, Any]:
    found, value = value_of(node, line.frame, context)
    if found:
        return True, value
    return _literal(node)


def _dtype_name(value: Any) -> str | None:
    numpy = sys.modules.get("numpy")
    if numpy is not None and type(value) is getattr(numpy, "ndarray", None):
        kind = value.dtype.kind
        if kind in "US":
            return "string"
        if kind == "O":
            first = value.flat[0] if value.size else None
            return "string" if type(first) in (str, bytes) else "object"
        name = value.dtype.name
        return name if type(name) is str else None
    dtype = library_attribute(value, "dtype")
    if dtype is not None:
        name = library_attribute(dtype, "name")
        return name if type(name) is str else None
    return None


def _text_kind(value: Any) -> str | None:
    """What holds strings: "a Python list of strings", "a NumPy array of strings", "a
    string tensor", or None."""
    if type(value) in (list, tuple) and value:
        items = value[:_MAX_ITEMS]
        if all(type(item) in (str, bytes) for item in items):
            return f"a Python {_type_name(type(value))} of strings"
        return None
    if type(value) in (str, bytes):
        return "a single string"
    if type(value) is _WrittenText:
        return value.words
    kind = value_kind(value)
    if kind in ("array", "tensor", "variable") and _dtype_name(value) == "string":
        return "a NumPy array of strings" if kind == "array" else "a string tensor"
    return None


def _is_numeric(value: Any) -> bool:
    if value_kind(value) not in ("array", "tensor", "variable"):
        return False
    dtype = _dtype_name(value) or ""
    return dtype.startswith(("int", "uint", "float"))


def _class_names(value: Any) -> tuple[str, ...]:
    return tuple(_type_name(cls) for cls in class_mro(value))


def _first_layer(model: Any) -> Any:
    """The model's first layer that is not an ``InputLayer`` (stored ``_layers``)."""
    for layer in list(keras_sublayers(model))[:4]:
        if "InputLayer" not in _class_names(layer):
            return layer
    return None


def _text_layer_kind(layer: Any) -> str | None:
    names = _class_names(layer)
    return next((name for name in _TEXT_LAYERS if name in names), None)


def _name_of(value: Any, context: ErrorContext) -> str | None:
    try:
        for name, held in list(context.namespace.items())[:_MAX_NAMES]:
            if held is value and type(name) is str and not name.startswith("_"):
                return name
    except Exception:
        return None
    return None


def _vectorizers(context: ErrorContext) -> list[tuple[str, Any]]:
    """The namespace's ``TextVectorization``/``StringLookup`` layers, by name."""
    found: list[tuple[str, Any]] = []
    try:
        items = list(context.namespace.items())[:_MAX_NAMES]
    except Exception:
        return found
    for name, value in items:
        # The class's own name first: one slot read per value of a large namespace.
        if (
            type(name) is not str
            or name.startswith("_")
            or _type_name(type(value)) not in _TEXT_LAYERS
        ):
            continue
        if value_kind(value) != "layer":
            continue
        if _text_layer_kind(value) is not None and all(value is not v for _, v in found):
            found.append((name, value))
    return found


def _vectorizer_for(model: Any, context: ErrorContext) -> tuple[str, str] | None:
    """The text layer whose ids the model was made for: the only one in the namespace,
    else the one whose ``output_sequence_length`` is the model's input length."""
    candidates = _vectorizers(context)
    if len(candidates) > 1:
        shapes = model_input_shapes(model)
        length = shapes[0][-1] if len(shapes) == 1 and shapes[0] else None
        candidates = [
            (name, layer)
            for name, layer in candidates
            if stored(layer, "_output_sequence_length") == length and length is not None
        ]
    if len(candidates) != 1:
        return None
    name, layer = candidates[0]
    return name, _text_layer_kind(layer) or "TextVectorization"


def _compiled_again(
    finding: Finding | None, model: Any, method: str, context: ErrorContext, model_name: str
) -> Finding | None:
    """A fit that failed while Keras traced its first training step leaves that step
    half-built (the optimizer's variables never made): the fixed call alone then raises
    ``Creating variables on a non-first call``, so the fix starts with the model's newest
    ``compile`` of the cells, run again."""
    if finding is None or finding.fix is None or method not in ("fit", "train_on_batch"):
        return finding
    optimizer = stored(model, "optimizer")
    if stored(model, "train_function") is None or stored(optimizer, "built") is not False:
        return finding
    compiled = _compile_statement(model_name, context)
    if compiled is None:
        return finding
    fix = (
        f"run {code(compiled)} again first (this failed {method} left the model's training "
        f"step half-built), then {finding.fix}"
    )
    return Finding(finding.rule, fix, finding.section)


def _compile_statement(model_name: str, context: ErrorContext) -> str | None:
    for cell in error_cells(context):
        tree = cell.tree()
        if tree is None:
            continue
        for node in reversed(list(ast.walk(tree))):
            if (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "compile"
                and cell.segment(node.value.func.value) == model_name
            ):
                statement = cell.segment(node)
                if statement and "\n" not in statement:
                    return statement
    return None


# ------------------------------------------------------------------ text and lists
def _read_model_data(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    located = _model_call(line, context)
    if located is None:
        return None
    _, method, model = located
    finding = _model_data(error, line, context)
    name = line.frame.segment(located[0].func.value if method != "__call__" else located[0].func)
    return _compiled_again(finding, model, method, context, name or "")


def _model_data(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    located = _model_call_data(line, context)
    if located is None:
        return None
    call, method, model, x_node = located
    found, x = _data(x_node, line, context)
    if "incompatible shape" in (error.parsed.message or "") and not isinstance(x_node, ast.List):
        x_written = line.frame.segment(x_node)
        short = (
            _short_sequence(call, x_node, x_written, model, line, context) if x_written else None
        )
        if short is not None:
            return short
    if not found and not isinstance(x_node, ast.List):
        return None
    model_name = line.frame.segment(call.func.value if method != "__call__" else call.func)
    x_source = line.frame.segment(x_node)
    if not model_name or not x_source or "\n" in x_source:
        return None
    examples = _listed_examples(x_node, model, line, context)
    if examples is not None:
        return _stacked(call, x_node, examples, model_name, line, context)
    first = _first_layer(model)
    text_first = _text_layer_kind(first) if first is not None else None
    if found and value_kind(x) == "dataset" and text_first is None:
        return _text_dataset(call, x_node, x, model, model_name, line, context)
    text = _text_kind(x)
    if text is not None and text_first is None:
        return _text_to_numbers(
            call, method, model, model_name, x_node, x_source, text, line, context
        )
    if text_first is not None and _is_numeric(x):
        return _numbers_to_text(model_name, x_source, x, first, text_first, call, line, context)
    if method in ("fit", "evaluate", "train_on_batch"):
        y_node = call_argument(call, 1, "y")
        if y_node is not None:
            found_y, y = _data(y_node, line, context)
            if found_y and _text_kind(y) is not None and text is None:
                return _string_labels(call, y_node, y, line, context)
    message = error.parsed.message or ""
    if "Unrecognized data type" in message and type(x) is list and text is None:
        return _python_list(call, x_node, x, x_source, model_name, line, context, model)
    return None


def _flat_ids_length(node: ast.expr, line: FailingLine, context: ErrorContext) -> int | None:
    """The length of a 1-D array or tensor of integers ``node`` holds, or that a call
    making one from a flat list of ints writes (``np.array(tokens)``: not run again)."""
    operand = operand_of(node, line, context)
    if operand is not None and operand.shape is not None:
        integer = (operand.dtype or "").startswith(("int", "uint"))
        length = operand.shape[0] if len(operand.shape) == 1 else None
        return length if integer and type(length) is int else None
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("array", "asarray", "constant", "convert_to_tensor")
        and isinstance(node.args[0], ast.Name)
    ):
        found, value = context.lookup(node.args[0].id, line.frame)
        if found and type(value) is list and value and all(type(v) is int for v in value):
            return len(value)
    return None


def _short_sequence(
    call: ast.Call,
    x_node: ast.expr,
    x_source: str,
    model: Any,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    """``model.predict(np.array(tokens))``: one sequence of integer ids, shorter than the
    model's ``(None, T)`` input and without the batch axis: a batch of one, padded to T."""
    shapes = model_input_shapes(model)
    ids = _flat_ids_length(x_node, line, context)
    if ids is None or len(shapes) != 1 or len(shapes[0]) != 2:
        return None
    length, steps = ids, shapes[0][1]
    if type(length) is not int or type(steps) is not int or not 0 < length < steps:
        return None
    keras = context.module_alias("keras", "keras")
    rule = (
        f"{code(x_source)} is one sequence of {length} ids, while the model takes a batch of "
        f"sequences of {steps} ids, shaped (batch, {steps}): it needs the batch axis and "
        f"{steps} values, padded with zeros at the end (as the training data was padded: "
        "check that it padded at the end too)"
    )
    padded = f'{keras}.utils.pad_sequences([{x_source}], maxlen={steps}, padding="post")'
    fixed = rewrite(line.frame, call, x_node, padded)
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


def _text_dataset(
    call: ast.Call,
    x_node: ast.expr,
    dataset: Any,
    model: Any,
    model_name: str,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    """A dataset of (text, label) pairs (or string labels) given to a model of numbers:
    the text layer was never mapped over it."""
    spec = library_attribute(dataset, "element_spec")
    if type(spec) is not tuple or len(spec) != 2:
        return None
    if type(spec[0]) is dict:
        return _feature_dict(call, x_node, spec[0], model, model_name, line, context)
    dtypes = [_dtype_name(part) for part in spec]
    source = line.frame.segment(x_node) or "the dataset"
    if dtypes[0] == "string":
        rule = (
            f"Each element of {code(source)} is (text, label): its first part is a string "
            f"tensor, but {code(model_name)} takes numbers (its first layer: "
            f"{_type_name(type(_first_layer(model)))}); the text must become ids before the "
            "model, by mapping the text layer over the dataset (or putting it first in the "
            "model)"
        )
        vectorizer = _vectorizer_for(model, context)
        if vectorizer is None or not is_postfix_safe(x_node):
            return Finding(rule + ".", None, section="preprocessing-adapt")
        name = vectorizer[0]
        mapped = f"{source}.map(lambda text, label: ({name}(text), label))"
        fixed = rewrite(line.frame, call, x_node, mapped)
        fix = code(fixed) if fixed and "\n" not in fixed else None
        return Finding(rule + f": {code(name)}.", fix, section="preprocessing-adapt")
    if dtypes[1] == "string":
        rule = (
            f"Each element of {code(source)} is (features, label) with string labels, but a "
            "loss compares numbers: class names must become class numbers before fit, e.g. "
            "a `keras.layers.StringLookup(num_oov_indices=0)` adapted on the labels and "
            "mapped over the dataset"
        )
        return Finding(rule + ".", None, section="labels-and-loss")
    return None


def _feature_dict(
    call: ast.Call,
    x_node: ast.expr,
    features: dict[Any, Any],
    model: Any,
    model_name: str,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    """A dataset of ({name: column}, label) pairs (``from_tensor_slices((dict(df), y))``)
    given to a model of one unnamed input: the columns must become one tensor."""
    shapes = model_input_shapes(model)
    if len(shapes) != 1 or not features or not all(type(k) is str for k in features):
        return None
    declared = shapes[0]
    widths = []
    for part in list(features.values())[:64]:
        stored_shape = library_attribute(part, "shape")
        dims = library_attribute(stored_shape, "_dims") if stored_shape is not None else None
        if type(dims) is not tuple or len(dims) not in (1, 2):
            return None
        widths.append(1 if len(dims) == 1 else dims[1])
    source = line.frame.segment(x_node) or "the dataset"
    keys = list(features)
    rule = (
        f"Each element of {code(source)} is (a dict of {len(keys)} named columns, label), "
        f"but {code(model_name)} has one input, {show_shape(declared)}: one tensor per "
        "batch, not a dict (a model built with one `keras.Input(name=...)` per column "
        "takes a dict by those names). Join the columns into one tensor in the pipeline"
    )
    if (
        not is_postfix_safe(x_node)
        or len(declared) != 2
        or not all(width == 1 for width in widths)
        or len(widths) != declared[1]
    ):
        return Finding(rule + ".", None, section=DATA_SECTION)
    tf = tf_alias(context)
    columns = ", ".join(f"features[{key!r}]" for key in keys)
    mapped = f"{source}.map(lambda features, label: ({tf}.stack([{columns}], axis=-1), label))"
    fixed = rewrite(line.frame, call, x_node, mapped)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section=DATA_SECTION)


def _listed_examples(
    x_node: ast.expr, model: Any, line: FailingLine, context: ErrorContext
) -> list[str] | None:
    """``[x[0], x[1]]`` for a model of one input: a Python list of single examples (each
    of the input's example shape), which Keras reads as one input per item."""
    if not isinstance(x_node, ast.List) or len(x_node.elts) < 2:
        return None
    shapes = model_input_shapes(model)
    if len(shapes) != 1:
        return None
    example = shapes[0][1:]
    items = []
    for element in x_node.elts[:_MAX_ITEMS]:
        shape = _item_shape(element, line, context)
        source = line.frame.segment(element)
        if shape is None or source is None or len(shape) != len(example):
            return None
        if any(
            d is not None and e is not None and d != e for d, e in zip(shape, example, strict=True)
        ):
            return None
        items.append(source)
    return items if len(items) == len(x_node.elts) else None


def _item_shape(
    node: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[int | None, ...] | None:
    """The shape of a value named on the line, or of ``xs[3]`` (an array indexed by one
    int: its shape without the first axis)."""
    found, value = value_of(node, line.frame, context)
    if found:
        return _shape(value)
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
    ):
        found, owner = value_of(node.value, line.frame, context)
        shape = _shape(owner) if found else None
        return shape[1:] if shape else None
    return None


def _stacked(
    call: ast.Call,
    x_node: ast.expr,
    items: list[str],
    model_name: str,
    line: FailingLine,
    context: ErrorContext,
) -> Finding:
    numpy = context.module_alias("numpy", "np")
    listed = line.frame.segment(x_node) or ""
    rule = (
        f"{code(listed)} is a Python list of {len(items)} single examples, and Keras reads a "
        f"list as one array per model input; {code(model_name)} has one input, so the "
        "examples must be stacked into one batch (a new first axis)"
    )
    fixed = rewrite(line.frame, call, x_node, f"{numpy}.stack({listed})")
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section="batch-dimension")


def _text_to_numbers(
    call: ast.Call,
    method: str,
    model: Any,
    model_name: str,
    x_node: ast.expr,
    x_source: str,
    text: str,
    line: FailingLine,
    context: ErrorContext,
) -> Finding:
    shapes = model_input_shapes(model)
    declared = f" of shape {show_shape(shapes[0])}" if len(shapes) == 1 else ""
    first = _first_layer(model)
    first_name = _type_name(type(first)) if first is not None else "layer"
    rule = (
        f"{code(x_source)} is {text}, but {code(model_name)} takes numbers (inputs{declared}; "
        f"its first layer: {first_name}): a model only sees text through a layer inside "
        "it that turns strings into ids (TextVectorization, StringLookup). Turning text into "
        "ids in the dataset's `map` (as for training) does nothing for data given to the "
        f"model directly, so {code(x_source)} must go through the same layer first"
    )
    vectorizer = _vectorizer_for(model, context)
    if vectorizer is None:
        return Finding(
            rule + " (or put that layer first in the model, for an end-to-end model).",
            None,
            section="preprocessing-adapt",
        )
    name, kind = vectorizer
    tf = tf_alias(context)
    tensor = "tensor" in text or (
        isinstance(x_node, ast.Call)
        and isinstance(x_node.func, ast.Attribute)
        and x_node.func.attr in _TENSOR_MAKERS
    )
    given = x_source if tensor else f"{tf}.constant({x_source})"
    fixed = rewrite(line.frame, call, x_node, f"{name}({given})")
    rule += (
        f": {code(name)}, the {kind} layer in this notebook; or put {code(name)} first in "
        "the model, which then takes raw strings"
    )
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section="preprocessing-adapt")


def _numbers_to_text(
    model_name: str,
    x_source: str,
    x: Any,
    first: Any,
    kind: str,
    call: ast.Call,
    line: FailingLine,
    context: ErrorContext,
) -> Finding:
    layer_name = _name_of(first, context)
    layer = code(layer_name) if layer_name else f"a {kind}"
    dtype = _dtype_name(x)
    rule = (
        f"{code(model_name)} starts with {layer} ({kind}), which takes raw strings and turns "
        f"them into ids itself, but {code(x_source)} holds {dtype} numbers, ids already: "
        "give the model the text those ids were made from (or the ids to a model without "
        "the text layer)"
    )
    origin = _made_from(x_source, layer_name, context)
    if origin is None:
        return Finding(rule + ".", None, section="preprocessing-adapt")
    statement, text_source = origin
    x_node = call_argument(call, 0, "x")
    fixed = rewrite(line.frame, call, x_node, text_source) if x_node is not None else None
    rule += f" ({code(statement)} made them)"
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section="preprocessing-adapt")


def _made_from(name: str, layer_name: str | None, context: ErrorContext) -> tuple[str, str] | None:
    """``ids = vectorize_layer(tf.constant(texts))`` in the cells: the statement and
    ``tf.constant(texts)``, when ``name`` was made by the model's text layer."""
    if layer_name is None or not name.isidentifier():
        return None
    for cell, node in assignments_in_cells(name, context):
        if (
            isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == layer_name
            and len(node.value.args) == 1
        ):
            statement, inner = cell.segment(node), cell.segment(node.value.args[0])
            if statement and inner and "\n" not in statement:
                return statement, inner
    return None


def _string_labels(
    call: ast.Call, y_node: ast.expr, y: Any, line: FailingLine, context: ErrorContext
) -> Finding:
    source = line.frame.segment(y_node) or "the labels"
    numpy = context.module_alias("numpy", "np")
    rule = (
        f"The labels {code(source)} are {_text_kind(y)}, but a loss compares numbers: class "
        "names must become class numbers (0, 1, ...) before fit, the same mapping for every "
        f"split. {code(f'{numpy}.unique(labels, return_inverse=True)')} gives the sorted "
        "class names and each label's number (a StringLookup layer adapted on the labels "
        "does the same in a dataset's map)"
    )
    fixed = rewrite(line.frame, call, y_node, f"{numpy}.unique({source}, return_inverse=True)[1]")
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section="labels-and-loss")


def _python_list(
    call: ast.Call,
    x_node: ast.expr,
    x: list[Any],
    x_source: str,
    model_name: str,
    line: FailingLine,
    context: ErrorContext,
    model: Any = None,
) -> Finding | None:
    items = x[:_MAX_ITEMS]
    numbers = (int, float, bool)
    if not items:
        return None
    numpy = context.module_alias("numpy", "np")
    if all(type(item) in (list, tuple) for item in items):
        lengths = {len(item) for item in items}
        if not all(type(v) in numbers for item in items for v in item[:_MAX_ITEMS]):
            return None
        if len(lengths) == 1 and len(items) == len(x):
            replacement = f"{numpy}.array({x_source})"
            rule = (
                f"Keras 3 takes data as arrays, tensors or datasets, and {code(x_source)} is "
                f"a Python list of {len(x)} lists of {lengths.pop()} numbers (a list is read "
                f"as several separate inputs); make it one array"
            )
        else:
            keras = context.module_alias("keras", "keras")
            replacement = f'{keras}.utils.pad_sequences({x_source}, padding="post")'
            rule = (
                f"Keras 3 takes data as arrays, tensors or datasets, and {code(x_source)} is a "
                "Python list of lists of different lengths: an array needs one length, so "
                "pad the shorter ones (zeros at the end)"
            )
    elif all(type(item) in numbers for item in items):
        one = _one_example(x, x_source, model, context)
        if one is not None:
            replacement, rule = one
        else:
            replacement = f"{numpy}.array({x_source})"
            rule = (
                f"Keras 3 takes data as arrays, tensors or datasets, and {code(x_source)} is "
                "a Python list of numbers; make it an array"
            )
    else:
        return None
    fixed = rewrite(line.frame, call, x_node, replacement)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


def _one_example(
    x: list[Any], x_source: str, model: Any, context: ErrorContext
) -> tuple[str, str] | None:
    """A flat list of numbers for a model whose input is ``(None, T)`` with ``T > 1``: one
    example (a sentence's token ids, a row of features), which needs the batch axis, and
    ``T`` values (padded when it is shorter: ``np.array(tokens)`` alone would fail again)."""
    shapes = model_input_shapes(model) if model is not None else []
    if len(shapes) != 1 or len(shapes[0]) != 2:
        return None
    steps = shapes[0][1]
    if type(steps) is not int or steps < 2 or len(x) > steps:
        return None
    numpy = context.module_alias("numpy", "np")
    keras = context.module_alias("keras", "keras")
    rule = (
        f"Keras 3 takes data as arrays, tensors or datasets, and {code(x_source)} is a "
        f"Python list of {len(x)} numbers: one example, while the model takes a batch of "
        f"them, shaped (batch, {steps})"
    )
    if len(x) == steps:
        return f"{numpy}.array([{x_source}])", rule + "; make it a batch of one"
    rule += (
        f"; make it a batch of one, padded with zeros at the end to {steps} values (as the "
        "training data was padded: check that it padded at the end too)"
    )
    return f'{keras}.utils.pad_sequences([{x_source}], maxlen={steps}, padding="post")', rule


MODEL_DATA = ErrorFamily(
    "text, ids or Python lists given to a model that takes something else",
    messages=(),
    read=_read_model_data,
    section="keras-model-api",
)


# ------------------------------------------------------------------ lookup layers
# A lookup layer -> the kind of data it maps, and the layer that maps the other kind.
_LOOKUPS = {
    "StringLookup": ("string", "strings", "IntegerLookup", "integers"),
    "IntegerLookup": ("int", "integers", "StringLookup", "strings"),
}


def _data_kind(value: Any) -> str | None:
    """ "string" or "int" (or "float") for an array, tensor or flat Python list."""
    if type(value) in (list, tuple) and value:
        items = value[:_MAX_ITEMS]
        if all(type(item) in (str, bytes) for item in items):
            return "string"
        if all(type(item) is int for item in items):
            return "int"
        return None
    if value_kind(value) not in ("array", "tensor", "variable"):
        return None
    dtype = _dtype_name(value) or ""
    if dtype == "string":
        return "string"
    return "int" if dtype.startswith(("int", "uint")) else ("float" if "float" in dtype else None)


def _read_lookup_data(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``lookup(ids)`` or ``lookup.adapt(ids)`` with a StringLookup given integers, or an
    IntegerLookup given strings: the layer that maps that kind of data, adapted on it."""
    call = line.call
    if not isinstance(call, ast.Call) or not call.args:
        return None
    adapting = isinstance(call.func, ast.Attribute) and call.func.attr == "adapt"
    owner = call.func.value if adapting else call.func  # type: ignore[union-attr]
    found, layer = value_of(owner, line.frame, context)
    if not found or value_kind(layer) != "layer":
        return None
    names = _class_names(layer)
    kind = next((name for name in _LOOKUPS if name in names), None)
    if kind is None:
        return None
    takes, takes_words, other, other_words = _LOOKUPS[kind]
    data_node = call.args[0]
    found, data = _data(data_node, line, context)
    given = _data_kind(data) if found else None
    if given is None or given == takes or (kind == "IntegerLookup" and given == "float"):
        return None
    layer_name = line.frame.segment(owner)
    data_source = line.frame.segment(data_node)
    if not layer_name or not data_source or "\n" in data_source:
        return None
    dtype = _dtype_name(data) or ("int" if given == "int" else "string")
    given_words = {"int": "integers", "string": "strings", "float": "floats"}[given]
    article = "an" if other.startswith("I") else "a"
    rule = (
        f"{code(layer_name)} is {'an' if kind.startswith('I') else 'a'} {kind} layer: it "
        f"maps {takes_words} to ids, but "
        f"{code(data_source)} holds {given_words} ({dtype}). {article.capitalize()} {other} "
        f"maps {other_words}"
    )
    if kind == "StringLookup" and given == "int":
        rule += (
            f" (or, if the numbers stand for words of its vocabulary, cast them to text "
            f"first: `{tf_alias(context)}.strings.as_string({data_source})`)"
        )
    if not isinstance(owner, ast.Name) or given == "float":
        return Finding(rule + ".", None, section=ADAPT_SECTION)
    learned = None if adapting else _learned_words(layer)
    if learned is not None:
        # A layer that already learned its vocabulary (from the data the model is built
        # on) is right: replacing it with a layer adapted on this call's data would break
        # every later use of it. The data is what must change.
        size, sample = learned
        shown = ", ".join(sample)
        return Finding(
            f"{rule}. But {code(layer_name)} already learned a vocabulary of {size} "
            f"{takes_words} (such as {shown}), which the rest of the notebook relies on: keep "
            f"the layer and give it {takes_words} of that vocabulary.",
            None,
            section=ADAPT_SECTION,
        )
    keras = context.module_alias("keras", "keras")
    made = f"{layer_name} = {keras}.layers.{other}()"
    adapted = f"{layer_name}.adapt({data_source})"
    then = "" if adapting else " then run this line again"
    fix = f"{code(made)} then {code(adapted)}{then}"
    return Finding(rule + ", learning its vocabulary from the data with adapt.", fix, ADAPT_SECTION)


_MAX_VOCABULARY_READ = 5000


def _learned_words(layer: Any) -> tuple[int, list[str]] | None:
    """(how many words, up to 3 of them as code) of a library lookup layer that has a vocabulary
    beyond its mask and out-of-vocabulary entries; None when it has learned none (or it
    cannot be read)."""
    if not is_library_class(type(layer)):
        return None
    try:
        size = layer.vocabulary_size()
        if type(size) is not int or size > _MAX_VOCABULARY_READ:
            return None
        special = {library_attribute(layer, "oov_token"), library_attribute(layer, "mask_token")}
        words = [word for word in layer.get_vocabulary() if word not in special]
        # NumPy's str and int scalars: shown as the Python literals the learner writes.
        shown = [repr(str(w)) if isinstance(w, str) else str(int(w)) for w in words[:3]]
    except Exception:
        return None
    return (len(words), shown) if words else None


LOOKUP_DATA = ErrorFamily(
    "a StringLookup given integers, an IntegerLookup given strings",
    messages=(),
    read=_read_lookup_data,
    section=ADAPT_SECTION,
)


# ------------------------------------------------------------------ unknown ranks
_UNKNOWN_RANK = re.compile(r"Cannot take the length of shape with unknown rank")
_PARTS = ("features", "labels")


def _known_dims(spec: Any) -> tuple[int | None, ...] | None:
    """A TensorSpec's dims, or None when its rank is unknown (``shape=<unknown>``)."""
    shape = library_attribute(spec, "shape")
    dims = library_attribute(shape, "_dims") if shape is not None else None
    return dims if type(dims) is tuple else None


def model_output_shape(model: Any) -> tuple[int | None, ...] | None:
    """The shape of a model's one output, from what Keras stores (``_outputs``)."""
    functional = stored(model, "_functional")
    outputs = stored(functional if functional is not None else model, "_outputs")
    if type(outputs) is not list or len(outputs) != 1:
        return None
    shape = stored(outputs[0], "_shape")
    if type(shape) is tuple and all(d is None or type(d) is int for d in shape):
        return shape
    return None


def _unknown_parts(
    x_node: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[tuple[Any, ...], list[int]] | None:
    """A dataset's element parts and the indexes of those of unknown rank (none: None)."""
    found, dataset = value_of(x_node, line.frame, context)
    if not found or value_kind(dataset) != "dataset":
        return None
    spec = library_attribute(dataset, "element_spec")
    parts = spec if type(spec) is tuple else (spec,)
    unknown = [index for index, part in enumerate(parts[:2]) if _known_dims(part) is None]
    return (parts, unknown) if unknown else None


def unknown_rank_data(parsed: ParsedError, context: ErrorContext) -> bool:
    """Whether the error is a model's dataset of unknown rank (``UNKNOWN_RANK``'s): the
    missing-axis explainer leaves it to the family (the dataset may well be batched)."""
    if _UNKNOWN_RANK.search(parsed.message or "") is None:
        return False
    line = read_failing_line(context)
    located = _model_call_data(line, context) if line is not None else None
    return located is not None and _unknown_parts(located[3], line, context) is not None  # type: ignore[arg-type]


def _read_unknown_rank(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``model.fit(ds)`` where ``ds``'s features or labels have an unknown rank (made by a
    ``tf.py_function``/``tf.numpy_function`` in a ``map``): which part, the model's input
    or output shape it must match, and the dataset mapped through ``tf.reshape``."""
    located = _model_call_data(line, context)
    if located is None:
        return None
    call, method, model, x_node = located
    read = _unknown_parts(x_node, line, context)
    if read is None:
        return None
    parts, unknown = read
    data_source = line.frame.segment(x_node)
    if not unknown or not data_source or "\n" in data_source:
        return None
    inputs = model_input_shapes(model)
    output = model_output_shape(model)
    targets: dict[int, tuple[int | None, ...]] = {}
    if 0 in unknown and len(inputs) == 1:
        targets[0] = inputs[0]
    if 1 in unknown and output is not None:
        labels_dtype = _dtype_name(parts[1]) or ""
        sparse = labels_dtype.startswith(("int", "uint")) and output[-1] not in (None, 1)
        targets[1] = output[:-1] if sparse else output
    named = " and ".join(_PARTS[index] for index in unknown)
    wanted = "; ".join(
        f"the {_PARTS[index]} should be {show_shape(shape)} like the model's "
        f"{'input' if index == 0 else 'output'}"
        + (" (one class id per example)" if index == 1 and shape == (output or ())[:-1] else "")
        for index, shape in targets.items()
    )
    rule = (
        f"The {named} of {code(data_source)} have an unknown rank (`TensorSpec(shape=<unknown>)`"
        f", what a `tf.py_function` or `tf.numpy_function` in a `map` returns: tf.data "
        f"cannot see inside the Python function), and Keras needs each tensor's rank to "
        f"match it against the model's inputs and outputs"
        + (f": {wanted}" if wanted else "")
        + ". Give the shape back: `tf.ensure_shape` right after the Python function in the "
        "`map`, or a reshape of each batch"
    )
    if set(targets) != set(unknown) or not is_postfix_safe(x_node):
        return Finding(rule + ".", None, section=DATA_SECTION)
    tf = tf_alias(context)
    shown = []
    for index, name in enumerate(_PARTS):
        if index in targets:
            sizes = ", ".join(str(d) for d in (-1, *targets[index][1:]))
            shown.append(f"{tf}.reshape({name}, [{sizes}])")
        else:
            shown.append(name)
    mapped = f"{data_source}.map(lambda features, labels: ({shown[0]}, {shown[1]}))"
    statement = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, statement, x_node, mapped)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    finding = Finding(rule + " (the batch axis left to -1).", fix, section=DATA_SECTION)
    model_name = line.frame.segment(call.func.value if method != "__call__" else call.func)
    return _compiled_again(finding, model, method, context, model_name or "")


UNKNOWN_RANK = ErrorFamily(
    "a dataset whose features or labels have an unknown rank",
    messages=(Message(_UNKNOWN_RANK),),
    read=_read_unknown_rank,
    section=DATA_SECTION,
)


# ------------------------------------------------------------------ labels' structure
_STRUCTURES = re.compile(r"y_true and y_pred have different structures")
_TUPLE_INDEX = re.compile(r"^tuple index out of range")
_UNRECOGNIZED = re.compile(r"Unrecognized data type")
_LABELS_SECTION = "labels-and-loss"
_LABEL_METHODS = ("fit", "evaluate", "train_on_batch", "test_on_batch")


def _read_label_structure(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``model.evaluate(x, [y, y])`` for a model of one output, ``model.fit(x, list(y))``:
    Keras reads a Python list or tuple of labels as one label array per output."""
    located = _model_call_data(line, context)
    if located is None or located[1] not in _LABEL_METHODS:
        return None
    call, method, model, _ = located
    y_node = call_argument(call, 1, "y")
    y_source = line.frame.segment(y_node) if y_node is not None else None
    if y_node is None or not y_source or "\n" in y_source:
        return None
    functional = stored(model, "_functional")
    outputs = stored(functional if functional is not None else model, "_outputs")
    if type(outputs) is not list or len(outputs) != 1:
        return None
    output = model_output_shape(model)
    model_name = line.frame.segment(call.func.value) or "the model"  # type: ignore[attr-defined]
    one_output = (
        f"{code(model_name)} has one output"
        + (f", {show_shape(output)}" if output is not None else "")
        + f", so `{method}` takes one array of labels (one row per example)"
    )
    items = _written_items(y_node, line, context)
    replacement: str | None = None
    if items is not None:
        held = f"a {type(items).__name__} of {len(items)} label arrays"
        rule = (
            f"{one_output}; {code(y_source)} is {held}: Keras reads a list or tuple of "
            "labels as one array per output of a model with several outputs"
        )
        sources = {line.frame.segment(item) for item in y_node.elts}  # type: ignore[attr-defined]
        if len(sources) == 1:
            replacement = next(iter(sources))
    else:
        found, y = value_of(y_node, line.frame, context)
        numbers = _python_numbers(y_node, y if found else None, line, context)
        if numbers is None:
            return None
        rule = (
            f"{one_output}; {code(y_source)} is a Python list of numbers, not an array: "
            "Keras reads a list as a structure of labels (one item per output) or refuses "
            "it, never as one label per example; give it as an array"
        )
        replacement = numbers
    if replacement is None:
        return Finding(rule + ".", None, section=_LABELS_SECTION)
    statement = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, statement, y_node, replacement)
    finding = Finding(
        rule + ".", code(fixed) if fixed and "\n" not in fixed else None, _LABELS_SECTION
    )
    return _compiled_again(finding, model, method, context, model_name)


def _written_items(y_node: ast.expr, line: FailingLine, context: ErrorContext) -> Any:
    """``[y, y]`` written on the line whose items hold arrays or tensors (else None)."""
    if not isinstance(y_node, (ast.List, ast.Tuple)) or not y_node.elts:
        return None
    values = []
    for item in y_node.elts:
        found, value = value_of(item, line.frame, context)
        if found and value_kind(value) not in ("array", "tensor", "variable"):
            return None
        values.append(value)
    if all(value is None for value in values):
        return None  # nothing known of the items: they may be numbers
    return values if isinstance(y_node, ast.List) else tuple(values)


def _python_numbers(
    y_node: ast.expr, y: Any, line: FailingLine, context: ErrorContext
) -> str | None:
    """The array a Python list of numbers should be: ``list(y)`` -> ``y`` (an array),
    a name holding a list of numbers -> ``np.array(name)``."""
    if (
        isinstance(y_node, ast.Call)
        and isinstance(y_node.func, ast.Name)
        and y_node.func.id == "list"
        and len(y_node.args) == 1
    ):
        found, inner = value_of(y_node.args[0], line.frame, context)
        if found and value_kind(inner) == "array":
            return line.frame.segment(y_node.args[0])
        return None
    if type(y) is list and y and all(type(item) in (int, float) for item in y[:_MAX_ITEMS]):
        return f"{context.module_alias('numpy', 'np')}.array({line.frame.segment(y_node)})"
    return None


LABEL_STRUCTURE = ErrorFamily(
    "labels given as a list or tuple to a model of one output",
    messages=(Message(_STRUCTURES), Message(_TUPLE_INDEX), Message(_UNRECOGNIZED)),
    read=_read_label_structure,
    section=_LABELS_SECTION,
)


def wrong_kind_of_data(parsed: ParsedError, context: ErrorContext) -> bool:
    """Whether the failing line gives strings to a model of numbers (or the reverse), or
    a list of single examples to a model of one input: the specific explainers of axes
    and dtypes leave the error to ``MODEL_DATA``."""
    try:
        line = read_failing_line(context)
        if line is None:
            return False
        located = _model_call_data(line, context)
        if located is None:
            return False
        _, _, model, x_node = located
        if _listed_examples(x_node, model, line, context) is not None:
            return True
        found, x = _data(x_node, line, context)
        if not found:
            return False
        first = _first_layer(model)
        text_first = _text_layer_kind(first) if first is not None else None
        if text_first is None and value_kind(x) == "dataset":
            spec = library_attribute(x, "element_spec")
            return (
                type(spec) is tuple
                and len(spec) == 2
                and (type(spec[0]) is dict or _dtype_name(spec[0]) == "string")
            )
        if text_first is None:
            return _text_kind(x) is not None
        return _is_numeric(x)
    except Exception:
        return False


# ------------------------------------------------------------------ validation data
def _read_validation_data(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    located = _model_call(line, context)
    if located is None or located[1] != "fit":
        return None
    call = located[0]
    node = next((k.value for k in call.keywords if k.arg == "validation_data"), None)
    if node is None:
        return None
    frame = line.frame
    keyword = next(k for k in call.keywords if k.arg == "validation_data")
    written = (frame.segment(keyword) or "").partition("=")[2].strip()
    if isinstance(node, ast.Tuple) and len(node.elts) == 1:
        inner: ast.expr | None = node.elts[0]
        what = f"{code(written)} is a tuple of one item (the comma makes it a 1-tuple)"
    elif isinstance(node, (ast.Tuple, ast.List)):
        return None
    else:
        inner = node
        found, value = value_of(node, frame, context)
        if not found:
            return None
        if value_kind(value) == "dataset":
            return _features_only_dataset(written, value)
        if value_kind(value) not in ("array", "tensor") and type(value) is not tuple:
            return None
        if type(value) is tuple:
            if len(value) != 1:
                return None
            inner = None  # a name holding a 1-tuple: the fix would need its item's name
        if written.startswith("("):
            what = (
                f"{code(written)} is {code(frame.segment(node) or written)} itself: "
                "parentheses without a comma make no tuple"
            )
        else:
            what = (
                f"{code(written)} is a tuple of one item"
                if type(value) is tuple
                else f"{code(written)} is one array"
            )
    features = frame.segment(inner) if inner is not None else None
    rule = (
        f"`validation_data` takes a pair `(features, labels)`, and {what}, so Keras reads "
        "it as validation inputs without labels: fit trains the first epoch, then the "
        "validation loss has no labels to compare with (None)"
    )
    labels = _labels_for(features, call, line, context) if features else None
    if labels is None:
        return Finding(
            rule + "; give it the validation labels too.", None, section="keras-validation-data"
        )
    fixed = rewrite(frame, call, keyword, f"validation_data=({features}, {labels})")
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section="keras-validation-data")


def _features_only_dataset(written: str, dataset: Any) -> Finding:
    spec = library_attribute(dataset, "element_spec")
    parts = "one tensor" if type(spec) not in (tuple, dict) else "a dict of features"
    rule = (
        f"`validation_data` takes (features, labels) pairs, and each element of "
        f"{code(written)} is {parts}: features alone, so the validation loss has no labels "
        "(None); build that dataset from a tuple, `from_tensor_slices((features, labels))`"
    )
    return Finding(rule + ".", None, section="keras-validation-data")


def _labels_for(
    features: str, call: ast.Call, line: FailingLine, context: ErrorContext
) -> str | None:
    """The labels that go with ``features`` in the learner's names: ``y_val`` for
    ``x_val`` (x -> y in the name), else the one array in the namespace with as many rows
    as ``features`` and the training labels' shape per example."""
    if not features.isidentifier():
        return None
    found, x_val = context.lookup(features, line.frame)
    rows = _rows(x_val) if found else None
    if rows is None:
        return None
    y_node = call_argument(call, 1, "y")
    y_shape = None
    if y_node is not None:
        found_y, y = value_of(y_node, line.frame, context)
        y_shape = _shape(y) if found_y else None

    def fits(name: str) -> bool:
        ok, value = context.lookup(name, line.frame)
        if not ok or value is x_val or _rows(value) != rows:
            return False
        shape = _shape(value)
        return y_shape is None or (shape is not None and shape[1:] == y_shape[1:])

    for old, new in (("x", "y"), ("X", "y"), ("X", "Y"), ("features", "labels")):
        if old in features:
            for candidate in (
                features.replace(old, new, 1),
                features[::-1].replace(old[::-1], new[::-1], 1)[::-1],
            ):
                if candidate != features and fits(candidate):
                    return candidate
    names = [
        name
        for name in list(context.namespace)[:_MAX_NAMES]
        if type(name) is str and not name.startswith("_") and fits(name)
    ]
    return names[0] if len(names) == 1 else None


def _shape(value: Any) -> tuple[int | None, ...] | None:
    if value_kind(value) not in ("array", "tensor", "variable"):
        return None
    shape = getattr(value, "shape", None) if value_kind(value) == "array" else None
    if shape is None:
        stored_shape = library_attribute(value, "shape")
        dims = library_attribute(stored_shape, "_dims") if stored_shape is not None else None
        shape = dims
    if type(shape) is not tuple:
        return None
    return tuple(int(d) if d is not None else None for d in shape)


def _rows(value: Any) -> int | None:
    shape = _shape(value)
    return shape[0] if shape else None


# What Keras 3.15 raises when validation inputs come without labels (the loss is given
# None); another error of the same fit (in its first epoch) is not this family's.
_NONE_VALUES = re.compile(r"None values not supported")

VALIDATION_DATA = ErrorFamily(
    "validation_data that is not an (x, y) pair",
    messages=(Message(_NONE_VALUES),),
    read=_read_validation_data,
    section="keras-validation-data",
    exception_type="ValueError",
)


# ------------------------------------------------------------------ adapt on pairs
def _read_adapt_pairs(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "adapt"
        and call.args
    ):
        return None
    frame = line.frame
    found, layer = value_of(call.func.value, frame, context)
    if not found or value_kind(layer) != "layer":
        return None
    data_node = call.args[0]
    found, dataset = value_of(data_node, frame, context)
    if not found:
        found, dataset = _evaluated_dataset(data_node, frame, context)
    if not found or value_kind(dataset) != "dataset":
        return None
    spec = library_attribute(dataset, "element_spec")
    if type(spec) is not tuple or len(spec) < 2:
        return None
    parts = []
    for part in spec[:4]:
        stored_shape = library_attribute(part, "shape")
        dims = library_attribute(stored_shape, "_dims") if stored_shape is not None else None
        dtype = _dtype_name(part)
        parts.append(
            " ".join(p for p in (show_shape(dims) if type(dims) is tuple else "", dtype) if p)
        )
    data_source = frame.segment(data_node)
    layer_source = frame.segment(call.func.value)
    if not data_source or not layer_source:
        return None
    first_dtype = _dtype_name(spec[0])
    names = ["text" if first_dtype == "string" else "x", "label", "weight", "extra"][: len(spec)]
    rule = (
        f"{code(layer_source)}.adapt reads each element of the data as the values to learn "
        f"from, and each element of {code(data_source)} is a tuple of {len(spec)} "
        f"({', '.join(parts)}, its element_spec): the labels would go in with the "
        f"{'text' if names[0] == 'text' else 'features'}. Adapt on the first part only"
    )
    if is_postfix_safe(data_node):
        mapped = f"{data_source}.map(lambda {', '.join(names)}: {names[0]})"
    else:
        mapped = f"({data_source}).map(lambda {', '.join(names)}: {names[0]})"
    fixed = rewrite(frame, call, data_node, mapped)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, section=ADAPT_SECTION if names[0] == "text" else DATA_SECTION)


def _evaluated_dataset(node: ast.expr, frame: CellFrame, context: ErrorContext) -> tuple[bool, Any]:
    """``tf.data.Dataset.from_tensor_slices((texts, labels))`` written in the call: the
    dataset the layer's ``adapt`` got, from its frame (Keras's ``adapt(self, data)``)."""
    traceback = context.exception.__traceback__
    for _ in range(200):
        if traceback is None:
            break
        local = (
            traceback.tb_frame.f_locals if traceback.tb_frame.f_code.co_name == "adapt" else None
        )
        if type(local) is dict and "data" in local and value_kind(local["data"]) == "dataset":
            return True, local["data"]
        traceback = traceback.tb_next
    return False, None


ADAPT_PAIRS = ErrorFamily(
    "adapt given (features, label) pairs",
    messages=(),
    read=_read_adapt_pairs,
    section="preprocessing-adapt",
)


def adapts_on_pairs(parsed: ParsedError, context: ErrorContext) -> bool:
    """Whether the failing line adapts a layer on a dataset of pairs: the dtype explainer
    leaves the Pack op's string/int clash to ``ADAPT_PAIRS``."""
    try:
        line = read_failing_line(context)
        return (
            line is not None
            and _read_adapt_pairs(Recognised(parsed, None), line, context) is not None
        )
    except Exception:
        return False


# ------------------------------------------------------------------ feature count
_SHAPE_WORDS = ("incompatible", "Matrix size", "expected axis", "expected shape")


def _read_feature_count(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    message = error.parsed.message or ""
    if not any(word in message for word in _SHAPE_WORDS) or LAYER_AXIS.search(message):
        return None  # Keras's own axis message: ``families_keras.LAYER_INPUT`` reads it
    located = _model_call_data(line, context)
    if located is None:
        return None
    call, method, model, x_node = located
    found, x = value_of(x_node, line.frame, context)
    given = _shape(x) if found else _shape_in_message(message)
    shapes = model_input_shapes(model)
    if given is None or len(shapes) != 1:
        return None
    declared = shapes[0]
    if len(declared) != len(given) or len(given) < 2:
        return None
    wanted, features = declared[-1], given[-1]
    if wanted is None or features is None or wanted == features or declared[1:-1] != given[1:-1]:
        return None
    frame = line.frame
    model_name = frame.segment(call.func.value if method != "__call__" else call.func) or "model"
    x_source = frame.segment(x_node) or "the data"
    rule = (
        f"{code(model_name)} declares inputs {show_shape(declared)}, {wanted} features per "
        f"example (its first weights are sized for them), but {code(x_source)} is "
        f"{show_shape(given)}, {features} features"
    )
    here = _running_input(model_name, context)
    if here is not None:
        cell_frame_, input_call, last = here
        fixed = rewrite(cell_frame_, input_call, last, str(features))
        whole = cell_frame_.segment(input_call)
        if fixed and whole and "\n" not in fixed:
            rule += (
                f": the model is built in this cell from {code(whole)} and has not learnt "
                "anything yet, so declare the data's features"
            )
            return Finding(rule + ".", code(fixed), section="batch-dimension")
    rule += (
        f": {code(model_name)} was built (and trained) for {wanted} features, so either give "
        f"it the same {wanted} columns it was trained on, or, to use the new "
        f"{'column' if features - wanted == 1 else 'columns'}, build the model again for "
        f"{features} features and train it again"
    )
    earlier = rebuilt_input(model_name, model, context, features)
    if earlier is None:
        return Finding(rule + ".", None, section="batch-dimension")
    label, whole, fixed = earlier
    return Finding(
        rule + f" ({code(whole)} in {label}).",
        f"in that cell, in place of {code(whole)}, {code(fixed)}, then run it, compile and "
        "fit again",
        section="batch-dimension",
    )


_FOUND_SHAPE = re.compile(r"found shape=\((?P<shape>[^)]*)\)")
_MATMUL_LEFT = re.compile(r"Matrix size-incompatible: In\[0\]: \[(?P<shape>[^\]]*)\]")


def _shape_in_message(message: str) -> tuple[int | None, ...] | None:
    """The data's shape as Keras's or the graph's message writes it."""
    for pattern in (_FOUND_SHAPE, _MATMUL_LEFT):
        found = pattern.search(message)
        if found is not None:
            return shape_list(found.group("shape"))
    return None


def _input_shape_node(node: ast.Call) -> ast.expr | None:
    shape = next((k.value for k in node.keywords if k.arg == "shape"), None)
    shape = shape if shape is not None else (node.args[0] if node.args else None)
    if isinstance(shape, ast.Tuple) and shape.elts:
        return shape.elts[-1]
    return None


def _is_input(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "Input")
        or (isinstance(node.func, ast.Name) and node.func.id == "Input")
    )


def _running_input(
    model: str, context: ErrorContext
) -> tuple[CellFrame, ast.Call, ast.expr] | None:
    """The one ``keras.Input((4,))`` of the running cell, when no earlier line of it
    trained ``model`` (the failing call is the first)."""
    frames = context.frames()
    if not frames:
        return None
    frame = frames[-1]
    tree = frame.tree()
    if tree is None:
        return None
    failing_line = frame.position.line
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    if any(
        isinstance(node.func, ast.Attribute)
        and node.func.attr in ("fit", "train_on_batch")
        and frame.segment(node.func.value) == model
        and node.lineno < failing_line
        for node in calls
    ):
        return None
    inputs = [node for node in calls if _is_input(node)]
    if len(inputs) != 1:
        return None
    last = _input_shape_node(inputs[0])
    return (frame, inputs[0], last) if last is not None else None


def rebuilt_input(
    model_name: str, model: Any, context: ErrorContext, features: int
) -> tuple[str, str, str] | None:
    """The ``keras.Input(shape=(4,))`` of the newest cell that binds ``model_name`` (or the
    name of the Input a ``keras.Model(inputs, ...)`` there uses): where, it, rewritten."""
    if not model_name.isidentifier():
        return None
    wanted = model_input_shapes(model)
    for cell in error_cells(context):
        tree = cell.tree()
        if tree is None:
            continue
        binds = any(
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == model_name for t in node.targets)
            for node in tree.body
        )
        if not binds:
            continue
        inputs = [node for node in ast.walk(tree) if _is_input(node)]
        if len(inputs) != 1:
            return None
        last = _input_shape_node(inputs[0])
        if last is None or not isinstance(last, ast.Constant) or not wanted:
            return None
        frame = cell_frame(cell)
        whole = cell.segment(inputs[0])
        fixed = rewrite(frame, inputs[0], last, str(features))
        if not whole or not fixed or "\n" in fixed or "\n" in whole:
            return None
        return cell.label, whole, fixed
    return None


FEATURE_COUNT = ErrorFamily(
    "data with another number of features than the model's input",
    messages=(),
    read=_read_feature_count,
    section="batch-dimension",
)


# ------------------------------------------------------------------ inputs by name and count
_MISSING_KEY = re.compile(
    r"Missing data for input \"(?P<missing>[^\"]+)\"\. You passed a data dictionary with keys "
    r"\[(?P<given>[^\]]*)\]\. Expected the following keys: \[(?P<expected>[^\]]*)\]"
)
_INPUT_COUNT = re.compile(
    r"expects (?P<expected>\d+) (?:named )?input\(s\)(?: with keys \[(?P<keys>[^\]]*)\])?, "
    r"but it received (?P<given>\d+) input tensors"
)


def _quoted(text: str) -> list[str]:
    return re.findall(r"'([^']*)'", text)


def _read_model_inputs(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    located = _model_call_data(line, context)
    if located is None:
        return None
    call, method, model, x_node = located
    model_name = line.frame.segment(call.func.value if method != "__call__" else call.func)
    if not model_name:
        return None
    if error.matched(_MISSING_KEY):
        finding = _input_keys(error, call, x_node, model_name, line)
    else:
        finding = _input_count(error, call, x_node, model, model_name, line, context)
    return _compiled_again(finding, model, method, context, model_name)


def _input_keys(
    error: Recognised, call: ast.Call, x_node: ast.expr, model_name: str, line: FailingLine
) -> Finding | None:
    import difflib

    given, expected = _quoted(error.group("given")), _quoted(error.group("expected"))
    rule = (
        f"A dict given to a model is matched to its inputs by name: the keys must be the "
        f"names of its `keras.Input(..., name=...)`, {', '.join(map(repr, expected))}, and "
        f"the data's keys are {', '.join(map(repr, given))}"
    )
    if not isinstance(x_node, ast.Dict) or len(given) != len(expected):
        return Finding(rule + ".", None)
    renames: dict[str, str] = {}
    unmatched = [key for key in expected if key not in given]
    for key in given:
        if key in expected:
            continue
        close = difflib.get_close_matches(key, unmatched, n=1, cutoff=0.0)
        if not close:
            return Finding(rule + ".", None)
        renames[key] = close[0]
        unmatched.remove(close[0])
    fixed_dict = line.frame.segment(x_node) or ""
    for key_node in x_node.keys:
        if isinstance(key_node, ast.Constant) and key_node.value in renames:
            written = line.frame.segment(key_node) or ""
            quote = written[:1] if written[:1] in "'\"" else '"'
            fixed_dict = fixed_dict.replace(written, f"{quote}{renames[key_node.value]}{quote}", 1)
    fixed = rewrite(line.frame, call, x_node, fixed_dict)
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


def _input_count(
    error: Recognised,
    call: ast.Call,
    x_node: ast.expr,
    model: Any,
    model_name: str,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    shapes = model_input_shapes(model)
    expected = int(error.group("expected"))
    if len(shapes) != expected:
        return None
    declared = ", ".join(show_shape(shape) for shape in shapes)
    x_source = line.frame.segment(x_node) or "the data"
    found, x = value_of(x_node, line.frame, context)
    flat = (
        _flat_tuple(x, expected, x_source, call, x_node, model_name, line, context)
        if found
        else None
    )
    if flat is not None:
        return flat
    x_shape = _shape(x) if found else None
    given = f" ({show_shape(x_shape)})" if x_shape else ""
    rule = (
        f"{code(model_name)} has {expected} inputs, {declared}, so it takes a list of "
        f"{expected} arrays in the order of its inputs (or a dict by their names), and got "
        f"{code(x_source)}{given} alone"
    )
    # ``Xn_tr[:3]``: the rows of ``Xn_tr`` taken; its partner arrays are sliced alike.
    base, taken = x_source, ""
    if (
        isinstance(x_node, ast.Subscript)
        and isinstance(x_node.value, ast.Name)
        and isinstance(x_node.slice, ast.Slice)
    ):
        base = x_node.value.id
        taken = x_source[len(base) :]
    base_shape = _shape_of_name(base, context) if taken else x_shape
    if x_shape is None and base_shape is not None:
        x_shape = (None, *base_shape[1:])  # a slice of rows keeps the other axes
    if x_shape is None or base_shape is None or not base.isidentifier():
        return Finding(rule + ".", None)
    rows = base_shape[0]
    chosen: list[str] = []
    for shape in shapes:
        if shape[1:] == x_shape[1:] and x_source not in chosen:
            chosen.append(x_source)
            continue
        names = [
            name
            for name in list(context.namespace)[:_MAX_NAMES]
            if type(name) is str
            and not name.startswith("_")
            and name not in chosen
            and _shape_of_name(name, context) is not None
            and _shape_of_name(name, context)[1:] == shape[1:]  # type: ignore[index]
            and _shape_of_name(name, context)[0] == rows  # type: ignore[index]
        ]
        names = [name for name in names if name != base]
        if len(names) != 1:
            return Finding(rule + ".", None)
        chosen.append(names[0] + taken)
    if x_source not in chosen:
        return Finding(rule + ".", None)
    fixed = rewrite(line.frame, call, x_node, f"[{', '.join(chosen)}]")
    written = [line.frame.segment(argument) for argument in call.args]
    callee = line.frame.segment(call.func)
    if len(written) > 1 and not call.keywords and callee and set(written) <= set(chosen):
        # ``model(a, b)``: the other inputs were given as more positional arguments (the
        # second lands in ``call``'s ``training``); the list replaces them all.
        rule += (
            "; the other inputs were given as further positional arguments, which a model "
            "reads as `call`'s next parameters (`training`, ...), not as inputs"
        )
        fixed = f"{callee}([{', '.join(chosen)}])"
    rule += f"; the arrays of this notebook that fit them, in order: {', '.join(map(code, chosen))}"
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


def _flat_tuple(
    dataset: Any,
    expected: int,
    source: str,
    call: ast.Call,
    x_node: ast.expr,
    model_name: str,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    """A dataset of flat tuples ``(users, items, ratings)`` for a model of two inputs:
    Keras reads an element's tuple as ``(x, y, sample_weight)``, so the model got the
    first part alone as its inputs. The fix nests the inputs, ``((users, items), ratings)``,
    with a ``map`` named after the arrays the dataset was made from."""
    if value_kind(dataset) != "dataset":
        return None
    spec = library_attribute(dataset, "element_spec")
    if type(spec) is not tuple or len(spec) != expected + 1:
        return None
    if any(type(part) in (tuple, list, dict) for part in spec):
        return None
    names = _sliced_names(source, len(spec), context) or [
        *(f"x{index + 1}" for index in range(expected)),
        "y",
    ]
    inputs, label = names[:-1], names[-1]
    mapped = f"{source}.map(lambda {', '.join(names)}: (({', '.join(inputs)}), {label}))"
    fixed = rewrite(line.frame, call, x_node, mapped)
    parts = ", ".join(names)
    rule = (
        f"{code(source)} yields flat tuples of {len(spec)} parts ({parts}), and Keras reads "
        f"a dataset's tuple as (inputs, labels, sample weights): {code(model_name)} got only "
        f"{code(names[0])} as its inputs, {code(names[1])} as labels and {code(label)} as "
        f"sample weights, but it has {expected} inputs. Nest the inputs in a tuple of their "
        f"own, (({', '.join(inputs)}), {label})"
    )
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


def _sliced_names(dataset: str, count: int, context: ErrorContext) -> list[str] | None:
    """``users, items, ratings`` for ``ds = Dataset.from_tensor_slices((users, items,
    ratings))...`` in the cells: the learner's names for the parts of an element."""
    if not dataset.isidentifier():
        return None
    for _, node in assignments_in_cells(dataset, context):
        for inner in ast.walk(node.value):
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr == "from_tensor_slices"
                and inner.args
                and isinstance(inner.args[0], ast.Tuple)
            ):
                items = inner.args[0].elts
                names = [item.id for item in items if isinstance(item, ast.Name)]
                if len(names) == count == len(items) and len(set(names)) == count:
                    return names
        return None
    return None


def _shape_of_name(name: str, context: ErrorContext) -> tuple[int | None, ...] | None:
    found, value = context.lookup(name, None)
    return _shape(value) if found else None


MODEL_INPUTS = ErrorFamily(
    "data that does not match a model's inputs by name or count",
    messages=(Message(_MISSING_KEY), Message(_INPUT_COUNT)),
    read=_read_model_inputs,
    section="functional-api",
    exception_type="ValueError",
)


# ------------------------------------------------------------------ class names one-hot encoded
def _read_named_classes(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``keras.utils.to_categorical(labels)`` with ``labels`` class names (strings): it
    takes class numbers; ``np.unique(labels, return_inverse=True)[1]`` gives them."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, (ast.Attribute, ast.Name))
        and (call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id)
        == "to_categorical"
        and call.args
    ):
        return None
    node = call.args[0]
    found, labels = _data(node, line, context)
    kind = _text_kind(labels) if found else None
    source = line.frame.segment(node)
    if kind is None or not source or "\n" in source:
        return None
    numpy = context.module_alias("numpy", "np")
    rule = (
        f"`to_categorical` makes one column per class NUMBER (0, 1, ...), and {code(source)} "
        f"is {kind}: class names must become class numbers first, "
        f"{code(f'{numpy}.unique(labels, return_inverse=True)')} gives the sorted names "
        "and each label's number"
    )
    fixed = rewrite(line.frame, call, node, f"{numpy}.unique({source}, return_inverse=True)[1]")
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


NAMED_CLASSES = ErrorFamily(
    "class names given to to_categorical",
    messages=(),
    read=_read_named_classes,
    section="labels-and-loss",
)
