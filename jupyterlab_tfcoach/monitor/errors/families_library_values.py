"""A TensorFlow or Keras value used in the learner's own line as a kind it is not: one
family per Python error, each naming what the value is, read from it.

Python raises these in the learner's line (the traceback may never enter TensorFlow), so
the message names only a Python type. The reading finds the value the line indexed,
called or read an attribute of, and says what it holds and the usual way to get what was
meant:

- ``INDEX_PAST_END`` (``IndexError``): ``t.shape[2]`` of a rank-2 tensor, ``arr[0, 3]``
  on an array whose axis 1 has one entry, ``model.layers[7]`` of a 4-layer model: the
  value's shape or length and the indices it has;
- ``VALUE_CALLED`` (``TypeError: ... is not callable``): a tensor, variable or array
  called as a function, ``layer.kernel(x)`` (the fix calls the layer that owns it) or
  ``model.predict(x)(y)``;
- ``TENSOR_ATTRIBUTE`` (``AttributeError``): a NumPy or list method on a tensor
  (``t.append``, ``t.astype``, ``t.mean()``: the TensorFlow function that does it, in the
  learner's names) or an array attribute on a ``tf.data.Dataset`` (``ds.shape``: its
  elements' shapes are in ``element_spec``);
- ``INFINITE_LENGTH`` (``TypeError: The dataset is infinite/length is unknown``): ``len``
  of a dataset that ``repeat()`` made endless or a ``filter`` made of unknown length.

Values the learner made with plain Python (a list of ints, a dict of strings) are not
claimed: only tensors, arrays, variables, Keras objects and datasets.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors import families_pair_results
from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    describe,
    show_shape,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

_ABSENT: Any = object()
_TENSORS = ("tensor", "variable", "keras_variable", "array", "symbolic", "keras_tensor")
_LIBRARY = (*_TENSORS, "layer", "model", "dataset")
_DATA_SECTION = "tf-data"
_KERAS_SECTION = "keras-model-api"
_JOINING_SECTION = "joining-indexing"


def _receivers(line: FailingLine, kind: type[ast.AST]) -> list[ast.AST]:
    statement = line.statement
    if statement is None:
        return []
    return [node for node in ast.walk(statement) if isinstance(node, kind)]


def library_value(node: ast.AST, line: FailingLine, context: ErrorContext) -> tuple[bool, Any]:
    """``value_of``, plus a layer's or a model's attribute whose reading runs only Keras's
    code (``dense.kernel``, ``model.layers``) and a constant index into such a list
    (``model.layers[0]``)."""
    found, value = value_of(node, line.frame, context)
    if found:
        return found, value
    if isinstance(node, ast.Attribute):
        owned, owner = library_value(node.value, line, context)
        if owned and value_kind(owner) in ("layer", "model"):
            value = library_attribute(owner, node.attr, _ABSENT)
            return value is not _ABSENT, (None if value is _ABSENT else value)
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
    ):
        owned, owner = library_value(node.value, line, context)
        if owned and type(owner).__name__ in ("TrackedList", "list", "tuple"):
            try:
                return True, list(owner)[node.slice.value]
            except Exception:
                return False, None
    return False, None


def _held(node: ast.AST, line: FailingLine, context: ErrorContext) -> tuple[str, Any] | None:
    """The source of ``node`` and its value (``library_value``)."""
    found, value = library_value(node, line, context)
    source = line.frame.segment(node)
    if not found or not source or "\n" in source:
        return None
    return source, value


# ------------------------------------------------------------------ IndexError
_NUMPY_AXIS = re.compile(
    r"index (?P<index>-?\d+) is out of bounds for axis (?P<axis>\d+) with size"
)
_OUT_OF_RANGE = re.compile(r"^(?:list|tuple) index out of range")


def _constant_indexes(node: ast.Subscript) -> list[int] | None:
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    found = []
    for part in parts:
        if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
            part = part.operand
            sign = -1
        else:
            sign = 1
        if not isinstance(part, ast.Constant) or type(part.value) is not int:
            return None
        found.append(sign * part.value)
    return found


def _library_sequence(source: str, value: Any) -> bool:
    """A shape (a ``TensorShape``, or ``.shape`` of an array), or a list or tuple holding
    library values (``model.layers``, what ``get_weights`` returned)."""
    name = type(value).__name__
    if name == "TensorShape" or (source.endswith(".shape") and type(value) is tuple):
        return True
    if type(value) not in (list, tuple) and name != "TrackedList":
        return False
    try:
        items = list(value)[:8]
    except Exception:
        return False
    return any(value_kind(item) in _LIBRARY for item in items)


def _read_index(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    message = error.parsed.message
    numpy_axis = _NUMPY_AXIS.search(message)
    if numpy_axis is None and not _OUT_OF_RANGE.match(message):
        return None
    for node in _receivers(line, ast.Subscript):
        indexes = _constant_indexes(node)  # type: ignore[arg-type]
        read = _held(node.value, line, context) if indexes else None  # type: ignore[attr-defined]
        if read is None or indexes is None:
            continue
        source, value = read
        kind = value_kind(value)
        if numpy_axis is not None and kind in _TENSORS:
            axis, index = int(numpy_axis.group("axis")), int(numpy_axis.group("index"))
            described = describe(source, value)
            shape = described.shape if described else None
            if not shape or axis >= len(shape) or axis >= len(indexes):
                continue
            if indexes[axis] != index:
                continue
            size = shape[axis]
            rule = (
                f"{described.sentence()}: its axis {axis} has {size} "  # type: ignore[union-attr]
                f"entr{'y' if size == 1 else 'ies'}, so an index there runs from 0 to "
                f"{(size or 1) - 1} (or -1 to -{size}), and the line asks for {index}."
            )
            if size == 1:
                rule += (
                    f" An axis of size 1 is often a single unit kept as its own axis (a Dense "
                    f"layer with one unit gives shape {show_shape(shape)}): index it with 0."
                )
            return Finding(rule, None, section=_JOINING_SECTION)
        if numpy_axis is not None or len(indexes) != 1:
            continue
        if not _library_sequence(source, value):
            continue
        try:
            items = list(value)
        except Exception:
            continue
        index = indexes[0]
        if -len(items) <= index < len(items):
            continue
        what = (
            f"{code(source)} is the shape {show_shape(tuple(items))}: a rank-{len(items)} "
            "value has one entry per axis"
            if type(value).__name__ == "TensorShape"
            or all(item is None or type(item) is int for item in items)
            else f"{code(source)} holds {len(items)} item{'s' if len(items) != 1 else ''}"
        )
        rule = (
            f"{what}, so its indices run from 0 to {len(items) - 1} (or -1 to -{len(items)}), "
            f"and the line asks for {index}."
        )
        if source.endswith(".layers"):
            names = [getattr(item, "name", None) for item in items[:12]]
            if all(type(name) is str for name in names):
                listed = ", ".join(f'"{name}"' for name in names)
                rule += f" Its layers, in order: {listed}."
        return Finding(rule, None, section=_JOINING_SECTION)
    return None


INDEX_PAST_END = ErrorFamily(
    "an index past the end of a tensor's axis, a shape or a Keras list",
    messages=(Message(_NUMPY_AXIS), Message(_OUT_OF_RANGE)),
    exception_type="IndexError",
    read=_read_index,
    section=_JOINING_SECTION,
    without_library=True,
)


# ------------------------------------------------------------------ a tensor's slice index
_TENSOR_SLICE = re.compile(r"slice index (?P<index>-?\d+) of dimension (?P<axis>\d+) out of bounds")


def _indexed_shape(
    node: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[str, tuple[int | None, ...]] | None:
    """The source and shape of a tensor, or of a tensor indexed by constant numbers
    (``outs[0]`` of a (20, 3) tensor is (3,))."""
    if isinstance(node, ast.Subscript):
        inner = _indexed_shape(node.value, line, context)
        indexes = _constant_indexes(node)
        source = line.frame.segment(node)
        if inner is None or indexes is None or not source or len(indexes) > len(inner[1]):
            return None
        return source, inner[1][len(indexes) :]
    read = _held(node, line, context)
    if read is None or value_kind(read[1]) not in _TENSORS:
        return None
    described = describe(read[0], read[1])
    return (read[0], described.shape) if described and described.shape else None


def _read_tensor_slice(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    axis, index = int(error.group("axis")), int(error.group("index"))
    for node in _receivers(line, ast.Subscript):
        subscript: ast.Subscript = node  # type: ignore[assignment]
        indexes = _constant_indexes(subscript)
        if indexes is None or axis >= len(indexes) or indexes[axis] != index:
            continue
        read = _indexed_shape(subscript.value, line, context)
        if read is None or axis >= len(read[1]):
            continue
        source, shape = read
        size = shape[axis]
        if size is None:
            continue
        rule = (
            f"{code(source)} has shape {show_shape(shape)}: its axis {axis} has {size} "
            f"entr{'y' if size == 1 else 'ies'}, so an index there runs from 0 to {size - 1} "
            f"(or -1 to -{size}), and the line asks for {index}."
        )
        return Finding(rule, None, section=_JOINING_SECTION)
    return None


TENSOR_SLICE_PAST_END = ErrorFamily(
    "an index past the end of a tensor's axis, met by TensorFlow's slicing",
    messages=(Message(_TENSOR_SLICE),),
    exception_type="InvalidArgumentError",
    read=_read_tensor_slice,
    section=_JOINING_SECTION,
)


# ------------------------------------------------------------------ an axis past the rank
_NUMPY_RANK = re.compile(
    r"axis (?P<axis>-?\d+) is out of bounds for array of dimension (?P<ndim>\d+)"
)
_RESULT_CALLS = ("predict", "predict_on_batch", "numpy", "get_weights")
_CLASS_CALLS = ("argmax", "argmin")


def _library_array(node: ast.expr, line: FailingLine, context: ErrorContext) -> bool:
    """Whether a name holds what TensorFlow or Keras returned: assigned in the cells from
    ``predict``, ``.numpy()`` or ``get_weights`` (an array the learner made stays theirs)."""
    if not isinstance(node, ast.Name):
        return False
    for _cell, statement in assignments_in_cells(node.id, context):
        value = statement.value
        for inner in ast.walk(value):
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr in _RESULT_CALLS
            ):
                return True
        return False
    return False


def _read_rank(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    axis, ndim = int(error.group("axis")), int(error.group("ndim"))
    for node in _receivers(line, ast.Call):
        call: ast.Call = node  # type: ignore[assignment]
        given = next((k for k in call.keywords if k.arg == "axis"), None)
        if given is None:
            continue
        operands = list(call.args[:1])
        if isinstance(call.func, ast.Attribute):
            operands.append(call.func.value)
        for operand in operands:
            read = _held(operand, line, context)
            if read is None:
                continue
            source, value = read
            kind = value_kind(value)
            if kind not in _TENSORS or (
                kind == "array" and not _library_array(operand, line, context)
            ):
                continue
            described = describe(source, value)
            if described is None or described.shape is None or len(described.shape) != ndim:
                continue
            rule = (
                f"{described.sentence()}: it has {ndim} ax{'is' if ndim == 1 else 'es'}, "
                f"numbered 0 to {ndim - 1} (or -1 for the last, down to -{ndim}), and the "
                f"call asks for axis {axis}."
            )
            name = (
                call.func.attr
                if isinstance(call.func, ast.Attribute)
                else getattr(call.func, "id", "")
            )
            fix = None
            if name in _CLASS_CALLS and ndim >= 1:
                rule += (
                    " A model's scores hold one row per example and one column per class: "
                    "the classes' axis is the last, -1."
                )
                statement = line.statement
                fixed = rewrite(line.frame, statement, given.value, "-1") if statement else None
                fix = code(fixed) if fixed and "\n" not in fixed else None
            return Finding(rule, fix, section=_JOINING_SECTION)
    return None


AXIS_PAST_RANK = ErrorFamily(
    "an axis past the rank of an array a model returned",
    messages=(Message(_NUMPY_RANK),),
    exception_type="AxisError",
    read=_read_rank,
    section=_JOINING_SECTION,
    without_library=True,
)


# ------------------------------------------------------------------ not callable
_NOT_CALLABLE = re.compile(r"^'(?P<type>[\w.]+)' object is not callable")
_NOT_ITERABLE = re.compile(r"^'(?P<type>[\w.]+)' object is not iterable")


def _read_called(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    for node in _receivers(line, ast.Call):
        call: ast.Call = node  # type: ignore[assignment]
        read = _held(call.func, line, context)
        if read is None:
            continue
        source, value = read
        kind = value_kind(value)
        stored_value = _stored_value_called(call, source, value, line, context)
        if stored_value is not None:
            return stored_value
        if kind not in _TENSORS:
            continue
        described = describe(source, value)
        if described is None:
            continue
        arguments = ", ".join(line.frame.segment(argument) or "..." for argument in call.args)
        rule = (
            f"{described.sentence()}, a value, not a function: `(...)` after it asks Python "
            "to call it."
        )
        owner = call.func.value if isinstance(call.func, ast.Attribute) else None
        owner_read = _held(owner, line, context) if owner is not None else None
        statement = line.statement
        if owner_read is not None and value_kind(owner_read[1]) in ("layer", "model"):
            owner_source = owner_read[0]
            rule += (
                f" It is one of {code(owner_source)}'s weights; to apply the layer to "
                f"{code(arguments)}, call the layer itself."
            )
            fixed = (
                rewrite(line.frame, statement, call, f"{owner_source}({arguments})")
                if statement is not None and len(call.args) == 1 and not call.keywords
                else None
            )
            if fixed and "\n" not in fixed:
                return Finding(rule, code(fixed), section=_KERAS_SECTION)
            return Finding(rule, None, section=_KERAS_SECTION)
        if len(call.args) == 1 and not call.keywords:
            product = f"{source} * {arguments}"
            if isinstance(call.args[0], ast.Constant):
                rule += f" To multiply, write the operator: {code(product)}."
            else:
                rule += (
                    f" To multiply, write the operator: {code(f'{source} @ {arguments}')} "
                    f"(matrix product) or {code(product)} (element by element)."
                )
        return Finding(rule, None, section=GENERAL_SECTION)
    return None


_OWNERS = ("layer", "model", "dataset", "tensor", "variable", "keras_variable", "symbolic")
_PLAIN_KINDS = (int, float, str, bool, tuple, list, dict)


def _stored_value_called(
    call: ast.Call, source: str, value: Any, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``layer.units()``, ``x.shape()``, ``ds.element_spec()``: an attribute a library
    object holds as a value (a number, a shape, a spec), called as if it were a method."""
    if call.args or call.keywords or not isinstance(call.func, ast.Attribute):
        return None
    owner = _held(call.func.value, line, context)
    if owner is None or value_kind(owner[1]) not in _OWNERS:
        return None
    if type(value) not in _PLAIN_KINDS and type(value).__name__ not in (
        "TensorShape",
        "TensorSpec",
        "DType",
    ):
        return None
    described = describe(source, value)
    what = described.description if described is not None else f"a {type(value).__name__}"
    rule = (
        f"{code(source)} is {what}, a value {code(owner[0])} holds, not a method: read it "
        "without `()`."
    )
    statement = line.statement
    fixed = rewrite(line.frame, statement, call, source) if statement is not None else None
    return Finding(rule, code(fixed) if fixed and "\n" not in fixed else None)


VALUE_CALLED = ErrorFamily(
    "a tensor, variable or array called as a function",
    messages=(Message(_NOT_CALLABLE),),
    exception_type="TypeError",
    read=_read_called,
    section=GENERAL_SECTION,
    without_library=True,
)


def _read_not_iterable(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``for h in history:`` over what fit returned, ``for layer in model:``."""
    statement = line.statement
    candidates: list[ast.AST] = []
    if isinstance(statement, ast.For):
        candidates.append(statement.iter)
    candidates += _receivers(line, ast.Name)
    for node in candidates:
        read = _held(node, line, context)
        if read is None:
            continue
        source, value = read
        kind = value_kind(value)
        if type(value).__name__ == "History" and error.group("type") == "History":
            one_metric = source + '.history["loss"]'
            rule = (
                f"{code(source)} is the History that fit returned, not a list: the values "
                f"it logged are in {code(source + '.history')}, a dict with one list per "
                f"metric (one value per epoch): walk {code(source + '.history.items()')}, "
                f"or one metric's list, {code(one_metric)}."
            )
            return Finding(rule, None, section=_KERAS_SECTION)
        if kind in ("model", "layer") and error.group("type") == type(value).__name__:
            rule = (
                f"{code(source)} is a Keras {type(value).__name__}, not a list: the layers a "
                f"model holds are {code(source + '.layers')}, its weights "
                f"{code(source + '.weights')}."
            )
            fixed = (
                rewrite(line.frame, statement, node, f"{source}.layers")
                if isinstance(statement, ast.For) and node is statement.iter
                else None
            )
            header = fixed.splitlines()[0] if fixed else None
            return Finding(rule, code(header) if header else None, section=_KERAS_SECTION)
    return None


NOT_ITERABLE = ErrorFamily(
    "a Keras History, model or layer walked as a list",
    messages=(Message(_NOT_ITERABLE),),
    exception_type="TypeError",
    read=_read_not_iterable,
    section=_KERAS_SECTION,
    without_library=True,
)


# ------------------------------------------------------------------ tensor attributes
# Python quotes the type ('list' object ...); TensorFlow's tensors do not (EagerTensor ...).
_NO_ATTRIBUTE = re.compile(
    r"'?(?:[\w.]+\.)?(?P<type>\w+)'? object has no attribute '(?P<attr>\w+)'"
)

# A NumPy or list method asked of a tensor -> the TensorFlow function that does it.
_REDUCTIONS = {
    "mean": "reduce_mean",
    "sum": "reduce_sum",
    "max": "reduce_max",
    "min": "reduce_min",
    "prod": "reduce_prod",
    "std": "math.reduce_std",
    "any": "reduce_any",
    "all": "reduce_all",
    "argmax": "argmax",
    "argmin": "argmin",
    "squeeze": "squeeze",
}
_PLAIN = {
    "flatten": "{tf}.reshape({x}, [-1])",
    "ravel": "{tf}.reshape({x}, [-1])",
    "T": "{tf}.transpose({x})",
    "size": "{tf}.size({x})",
    "copy": "{tf}.identity({x})",
    "tolist": "{x}.numpy().tolist()",
    "item": "{x}.numpy().item()",
}
# NumPy attributes read without a call (``x.T``, ``x.size``); the others are methods.
_PROPERTIES = ("T", "size")
_NAMES = {"append": "concat", "astype": "cast", "clip": "clip_by_value", **_REDUCTIONS}
_SORTS = ("sort", "argsort")
_TENSOR_METHODS = (
    *_REDUCTIONS,
    *_PLAIN,
    *_SORTS,
    "append",
    "astype",
    "reshape",
    "transpose",
    "clip",
)


def _tensor_function(
    attribute: str, tf: str, x: str, parent: ast.Call | None, line: FailingLine
) -> str | None:
    """The TensorFlow call that does what ``x.<attribute>(...)`` would on an array, with
    the call's arguments carried over; None when they cannot be (an unknown keyword)."""
    if (parent is None) != (attribute in _PROPERTIES):
        return None
    args = [line.frame.segment(arg) or "" for arg in parent.args] if parent else []
    keywords = {k.arg: line.frame.segment(k.value) or "" for k in parent.keywords} if parent else {}
    if None in keywords or any(not text for text in [*args, *keywords.values()]):
        return None
    if attribute in _PLAIN:
        return _PLAIN[attribute].format(tf=tf, x=x) if not (args or keywords) else None
    if attribute in _REDUCTIONS:
        if set(keywords) - {"axis", "keepdims"} or len(args) > 1:
            return None
        axis = args[0] if args else keywords.get("axis")
        if axis is None and attribute in ("argmax", "argmin"):
            axis = "-1"  # the classes' axis, what a learner's argmax is nearly always for
        parts = [x] + ([f"axis={axis}"] if axis is not None else [])
        if "keepdims" in keywords:
            parts.append(f"keepdims={keywords['keepdims']}")
        return f"{tf}.{_REDUCTIONS[attribute]}({', '.join(parts)})"
    if attribute in _SORTS:
        # NumPy's ``kind``/``order`` have no TensorFlow counterpart; both sort the last
        # axis by default, as ``tf.sort``/``tf.argsort`` do.
        if set(keywords) - {"axis"} or len(args) > 1:
            return None
        axis = args[0] if args else keywords.get("axis")
        return f"{tf}.{attribute}({x}" + (f", axis={axis})" if axis is not None else ")")
    if keywords:
        return None
    if attribute == "append" and len(args) == 1:
        return f"{tf}.concat([{x}, [{args[0]}]], axis=0)"
    if attribute == "astype" and len(args) == 1:
        return f"{tf}.cast({x}, {args[0]})"
    if attribute == "reshape" and args:
        shape = args[0] if len(args) == 1 else f"[{', '.join(args)}]"
        return f"{tf}.reshape({x}, {shape})"
    if attribute == "transpose":
        if not args:
            return f"{tf}.transpose({x})"
        perm = args[0] if len(args) == 1 else f"[{', '.join(args)}]"
        return f"{tf}.transpose({x}, perm={perm})"
    if attribute == "clip" and len(args) == 2:
        return f"{tf}.clip_by_value({x}, {args[0]}, {args[1]})"
    return None


_IMMUTABLE_SECTION = "tensors-immutable"
_IMMUTABLE = ("append", "extend", "insert", "fill", "sort", "resize")
_DATASET_ATTRIBUTES = ("shape", "dtype", "ndim", "size", "numpy", "length", "len")


# The tensor classes Python's message names: the receiver is a tensor whatever it is
# written as (``tf.stack(runs).mean()``: a call, whose value is not read again).
_TENSOR_CLASSES = frozenset({"EagerTensor", "SymbolicTensor", "Tensor"})


def _unread_tensor(
    error: Recognised, line: FailingLine, nodes: list[ast.Attribute]
) -> tuple[ast.Attribute, str] | None:
    """The one receiver of ``.<attr>`` on the line when it is an expression whose value
    is not held anywhere (a call): the message's class says it is a tensor."""
    if error.group("type") not in _TENSOR_CLASSES or len(nodes) != 1:
        return None
    node = nodes[0]
    source = line.frame.segment(node.value)
    if not source or "\n" in source or not isinstance(node.value, ast.Call):
        return None
    return node, source


def _read_attribute(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    attribute = error.group("attr")
    nodes = [n for n in _receivers(line, ast.Attribute) if n.attr == attribute]  # type: ignore[attr-defined]
    unread = _unread_tensor(error, line, nodes)  # type: ignore[arg-type]
    for node in nodes:
        read_node: ast.Attribute = node  # type: ignore[assignment]
        read = _held(read_node.value, line, context)
        if read is None and unread is not None and unread[0] is read_node:
            read = (unread[1], _UNREAD)
        if read is None:
            continue
        source, value = read
        kind = "tensor" if value is _UNREAD else value_kind(value)
        if kind == "dataset" and attribute in _DATASET_ATTRIBUTES:
            rule = (
                f"{code(source)} is a tf.data.Dataset, a pipeline that makes elements when "
                f"iterated, not an array: it has no `.{attribute}`. What one element holds "
                f"(shapes and dtypes) is {code(source + '.element_spec')}; the number of "
                f"elements, when known, is {code(source + '.cardinality()')}; to see values, "
                f"take some: {code(f'next(iter({source}))')}."
            )
            return Finding(rule, None, section=_DATA_SECTION)
        if type(value) is tuple:
            # A call known to return two results (attention scores, clip_by_global_norm)
            # is read better by the pair family, which names the call and the keyword;
            # it is tried later in the catalogue, so it is asked first here.
            pair = families_pair_results.PAIR_KEPT_WHOLE.read(error, line, context)
            if pair is not None:
                return pair
        element = _element_part(attribute, source, value, read_node, line, context)
        if element is not None:
            return element
        if kind not in ("tensor", "variable", "symbolic") or attribute not in _TENSOR_METHODS:
            continue
        described = describe(source, value) if value is not _UNREAD else None
        if described is None and value is not _UNREAD:
            continue
        sentence = (
            described.sentence()
            if described is not None
            else f"{code(source)} is a TensorFlow tensor (an {error.group('type')})"
        )
        tf_name = context.module_alias("tensorflow", "tf")
        parent = _parent_call(line, read_node)
        written = _tensor_function(attribute, tf_name, source, parent, line)
        shown = written or f"{tf_name}.{_NAMES.get(attribute, attribute)}(...)"
        if attribute == "sort":
            rule = (
                f"{sentence}; a tensor cannot be changed in place and has no "
                "`.sort`: NumPy's `.sort()` sorts an array where it is, while "
                f"{code(tf_name + '.sort')} returns a new, sorted tensor, which the name "
                f"must be given again ({code(shown)})."
            )
        elif attribute in _IMMUTABLE:
            rule = (
                f"{sentence}; a tensor cannot be changed in place and has no "
                f"`.{attribute}`: make a new one ({code(shown)}), or collect the values in "
                f"a Python list and join them once with {code(tf_name + '.stack(...)')}."
            )
        else:
            rule = (
                f"{sentence}; `.{attribute}` is a NumPy array's method, which a "
                f"TensorFlow tensor does not have: the TensorFlow function is {code(shown)}."
            )
        rule += _called_model(source, line, context)
        rule += _later_statements(source, line, tf_name)
        replaced: ast.AST = parent if parent is not None else read_node
        statement = line.statement
        fixed = (
            rewrite(line.frame, statement, replaced, written)
            if statement is not None and written is not None
            else None
        )
        if attribute in _IMMUTABLE and isinstance(statement, ast.Expr) and fixed is not None:
            fixed = f"{source} = {fixed}"
        # An in-place sort is what "tensors are immutable values" teaches.
        section = _IMMUTABLE_SECTION if attribute == "sort" else GENERAL_SECTION
        if fixed and "\n" not in fixed:
            return Finding(rule, code(fixed), section=section)
        return Finding(rule, None, section=section)
    return None


_TENSOR_ATTRIBUTES = ("shape", "dtype", "numpy", "ndim", "get_shape")
_UNREAD = object()  # a tensor known from the message alone (its value not read)
_MAX_LATER = 3


def _later_statements(source: str, line: FailingLine, tf_name: str) -> str:
    """The cell's later one-line statements that ask a NumPy reduction of the same
    expression (``tf.stack(runs).std(axis=0)`` after ``.mean(axis=0)``), each rewritten
    the same way: they would raise next."""
    tree = line.frame.tree()
    at = line.frame.position.line
    fixes: list[str] = []
    for statement in tree.body if isinstance(tree, ast.Module) else []:
        if statement.lineno <= at or statement.lineno != statement.end_lineno:
            continue
        for node in ast.walk(statement):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in _REDUCTIONS or line.frame.segment(node.func.value) != source:
                continue
            written = _tensor_function(node.func.attr, tf_name, source, node, line)
            fixed = rewrite(line.frame, statement, node, written) if written else None
            if fixed and "\n" not in fixed:
                fixes.append(f"{code(fixed)} (line {statement.lineno})")
            break
        if len(fixes) >= _MAX_LATER:
            break
    if not fixes:
        return ""
    return f" The same holds further down: {', '.join(fixes)}."


def _element_part(
    attribute: str,
    source: str,
    value: Any,
    read_node: ast.Attribute,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    """``batch.shape`` where ``batch`` is a dataset's (features, labels) pair: a tuple of
    tensors read as if it were one tensor."""
    if attribute not in _TENSOR_ATTRIBUTES or type(value) is not tuple or not value:
        return None
    if not all(value_kind(part) in _TENSORS for part in value[:8]):
        return None
    described = describe(source, value)
    if described is None:
        return None
    rule = f"{described.sentence()}, not one tensor: it has no `.{attribute}`, its parts do."
    loop = _loop_over_dataset(source, line, context)
    if loop is not None:
        rule += (
            f" Each element of {code(loop)} is a tuple of {len(value)} (the dataset was built "
            f"from a tuple, features then labels): unpack it in the loop, "
            f"{code(f'for {source}, labels in {loop}:')} for a pair, or read a part by position."
        )
    statement = line.statement
    fixed = (
        rewrite(line.frame, statement, read_node.value, f"{source}[0]")
        if statement is not None
        else None
    )
    section = _DATA_SECTION if loop is not None else GENERAL_SECTION
    return Finding(rule, code(fixed) if fixed and "\n" not in fixed else None, section=section)


def _loop_over_dataset(name: str, line: FailingLine, context: ErrorContext) -> str | None:
    """The dataset a ``for <name> in <ds>:`` around the failing line walks."""
    tree = line.frame.tree()
    at = line.frame.position.line
    for node in ast.walk(tree) if tree is not None else ():
        if (
            isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
            and node.lineno <= at <= (node.end_lineno or node.lineno)
        ):
            found, dataset = value_of(node.iter, line.frame, context)
            written = line.frame.segment(node.iter)
            if found and value_kind(dataset) == "dataset" and written and "\n" not in written:
                return written
    return None


def _called_model(source: str, line: FailingLine, context: ErrorContext) -> str:
    """`` `preds` is what calling `net` returned: ...``, when the tensor's name was last
    assigned, in the failing cell above the line, by calling a Keras model or layer
    directly: its ``predict`` gives the NumPy array whose method the line asked for."""
    # Imported here: ``syntax`` imports this package (``errors.cell_sources``), whose
    # ``__init__`` imports this module.
    from jupyterlab_tfcoach.monitor.syntax import last_assignment_before

    tree = line.frame.tree()
    if tree is None or not source.isidentifier():
        return ""
    made = last_assignment_before(tree, source, line.frame.position.line)
    value = made.value if made is not None else None
    if not isinstance(value, ast.Call):
        return ""
    found, callee = value_of(value.func, line.frame, context)
    callee_source = line.frame.segment(value.func)
    if not found or not callee_source or value_kind(callee) not in ("model", "layer"):
        return ""
    predict = " (its `predict` returns a NumPy array)" if value_kind(callee) == "model" else ""
    return (
        f" {code(source)} is what calling {code(callee_source)} returned: a Keras model or "
        f"layer called directly gives a tensor{predict}."
    )


def _parent_call(line: FailingLine, attribute: ast.Attribute) -> ast.Call | None:
    for node in _receivers(line, ast.Call):
        if node.func is attribute:  # type: ignore[attr-defined]
            return node  # type: ignore[return-value]
    return None


TENSOR_ATTRIBUTE = ErrorFamily(
    "a NumPy or list method asked of a tensor, an array attribute of a dataset",
    messages=(Message(_NO_ATTRIBUTE),),
    exception_type="AttributeError",
    read=_read_attribute,
    section=GENERAL_SECTION,
    without_library=True,
)


# ------------------------------------------------------------------ dataset length
_NO_LENGTH = re.compile(r"The dataset (?P<why>is infinite|length is unknown)")


def _read_length(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    for node in _receivers(line, ast.Call):
        call: ast.Call = node  # type: ignore[assignment]
        if not (isinstance(call.func, ast.Name) and call.func.id == "len" and call.args):
            continue
        source = line.frame.segment(call.args[0]) or ""
        if "\n" in source:
            continue
        if error.group("why") == "is infinite":
            rule = (
                f"{code(source)} never ends: a `repeat()` without a count makes a dataset "
                "repeat forever, so it has no length. Take the length before repeating (or "
                "from the data it was built from), or give `repeat` a count; fit then needs "
                "`steps_per_epoch=` to know where an epoch ends."
            )
        else:
            rule = (
                f"TensorFlow cannot tell how many elements {code(source)} gives without "
                "running it: a `filter`, a `flat_map` or a generator makes the count unknown. "
                f"{code(source + '.cardinality()')} says what is known (-2: unknown); count "
                f"by walking it once: {code(f'sum(1 for _ in {source})')}."
            )
        return Finding(rule, None, section=_DATA_SECTION)
    return None


INFINITE_LENGTH = ErrorFamily(
    "len of a dataset without a known length",
    messages=(Message(_NO_LENGTH),),
    exception_type="TypeError",
    read=_read_length,
    section=_DATA_SECTION,
)
