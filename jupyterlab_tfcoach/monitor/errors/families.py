"""Every TensorFlow/Keras error raised through the user's code gets an entry (issue #25).

``explain_failing_line`` is the last of ``_EXPLAINERS``: when no specific explainer took
the error and it is TensorFlow's or Keras's (its traceback passes through them, or it
was raised inside a ``tf.function``, or a family below recognises it from its message),
the entry reads the failing line (``failing_line.py``) and says

    Line N of this cell: `<call>` raised <Type>. `a` is a (8, 3) float32 tensor; `b` is
    a (8, 1) float32 tensor. <the rule that was broken>. <the fix, in the user's names>.

The rule and the fix come from the first *family* that recognises the error: a small
function that matches the exception type and message TensorFlow or Keras raise (and the
op named in it), reads the operands it needs from the failing line, and returns a
``Finding`` (rule, fix, course section). The catalogue (``FAMILIES``) is documented in
``docs/report.md``. With no family, the entry still names the line, the call and the
operands, and links the section that teaches reading shapes and dtypes.

An error in the user's own code that never reached TensorFlow or Keras (``1 / 0``, a
``None`` in plain arithmetic) is not claimed, unless a family recognises TensorFlow's
part in it (item assignment on an ``EagerTensor``, unpacking an empty gradient list).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from jupyterlab_tfcoach.monitor.errors.calls import explain_call_arguments
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    ParsedError,
    code,
    index_origin,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    TRACKED_ATTRIBUTES,
    FailingLine,
    Operand,
    describe,
    model_input_shapes,
    read_failing_line,
    show_shape,
    tracked_variables,
    value_of,
)

# Reading shapes and dtypes first: the section every unrecognised error links to.
GENERAL_SECTION = "shape-dtype-device"
_LIBRARY_MODULES = ("tensorflow", "keras", "tf_keras")
_MAX_TRACEBACK = 500


@dataclass(frozen=True)
class Finding:
    """What a family knows: the rule that was broken, the fix (or None) and where the
    course teaches it."""

    rule: str
    fix: str | None
    section: str


Family = Callable[[ParsedError, FailingLine, ErrorContext], Finding | None]


def raised_through_library(context: ErrorContext, parsed: ParsedError) -> bool:
    """Whether TensorFlow or Keras raised the error or passed it on."""
    if parsed.inside_tf_function:
        return True
    exception = context.exception
    module = getattr(type(exception), "__module__", "")
    if type(module) is str and module.startswith(_LIBRARY_MODULES):
        return True
    traceback = exception.__traceback__
    for _ in range(_MAX_TRACEBACK):
        if traceback is None:
            return False
        namespace = traceback.tb_frame.f_globals
        name = namespace.get("__name__") if type(namespace) is dict else None
        if type(name) is str and name.partition(".")[0] in _LIBRARY_MODULES:
            return True
        traceback = traceback.tb_next
    return False


# ------------------------------------------------------------------ helpers
def _shape_list(text: str) -> tuple[int | None, ...] | None:
    dims: list[int | None] = []
    for part in text.replace("?", "None").split(","):
        part = part.strip()
        if not part:
            continue
        if part == "None":
            dims.append(None)
        elif part.lstrip("-").isdigit():
            dims.append(int(part))
        else:
            return None
    return tuple(dims)


def _binary_operations(
    line: FailingLine, operator: type[ast.operator], functions: tuple[str, ...]
) -> list[tuple[ast.expr, ast.expr, ast.expr]]:
    """(node, left, right) for each ``a <op> b`` or ``tf.<function>(a, b)`` on the line."""
    found = []
    for part in line.frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.BinOp) and type(node.op) is operator:
                found.append((node, node.left, node.right))
            elif isinstance(node, ast.Call) and len(node.args) >= 2:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in functions and not any(isinstance(a, ast.Starred) for a in node.args):
                    found.append((node, node.args[0], node.args[1]))
    exact = [found_one for found_one in found if line.frame.at_position(found_one[0])]
    return exact or found


def _operand(
    node: ast.expr, line: FailingLine, context: ErrorContext, frame: CellFrame | None = None
) -> Operand | None:
    frame = frame or line.frame
    source = frame.segment(node)
    if not source:
        return None
    known = line.operand(source)
    if known is not None:
        return known
    try:
        found, value = value_of(node, frame, context)
        return describe(source, value) if found else None
    except Exception:
        return None


def _pick(
    line: FailingLine,
    context: ErrorContext,
    candidates: list[tuple[ast.expr, ast.expr, ast.expr]],
    shapes: tuple[tuple[int | None, ...] | None, tuple[int | None, ...] | None],
) -> tuple[ast.expr, Operand | None, Operand | None] | None:
    """The operation whose operands have the shapes TensorFlow reported (any, if unknown)."""
    for node, left, right in candidates:
        operands = (_operand(left, line, context), _operand(right, line, context))
        if all(
            shape is None or operand is None or operand.shape is None or operand.shape == shape
            for operand, shape in zip(operands, shapes, strict=True)
        ):
            return node, operands[0], operands[1]
    return None


def _tf(context: ErrorContext) -> str:
    return context.module_alias("tensorflow", "tf")


def _segment(line: FailingLine, node: ast.AST | None) -> str:
    return (line.frame.segment(node) if node is not None else None) or ""


# ------------------------------------------------------------------ matmul
_MATMUL_EAGER = re.compile(
    r"Matrix size-incompatible: In\[0\]: \[(?P<a>[\d,]*)\], In\[1\]: \[(?P<b>[\d,]*)\]"
)
_MATMUL_RANKS = re.compile(
    r"In\[0\] and In\[1\] has different ndims: \[(?P<a>[\d,]*)\] vs\. \[(?P<b>[\d,]*)\]"
)
_MATMUL_RANK_ONE = re.compile(r"In\[(?P<which>[01])\] ndims must be >= 2")
_GRAPH_DIMENSIONS = re.compile(
    r"Dimensions must be equal, but are (?P<d1>\d+) and (?P<d2>\d+) for "
    r"'\{\{node [^}]*\}\} = (?P<op>\w+)\[.*?with input shapes: "
    r"\[(?P<a>[^\]]*)\], \[(?P<b>[^\]]*)\]",
    re.S,
)
_MATMUL_OPS = ("MatMul", "BatchMatMulV2", "BatchMatMulV3", "_MklMatMul", "_MklBatchMatMulV2")


def _matmul(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    message = parsed.message
    shapes: tuple[tuple[int | None, ...] | None, tuple[int | None, ...] | None] = (None, None)
    match = _MATMUL_EAGER.search(message) or _MATMUL_RANKS.search(message)
    if match:
        shapes = (_shape_list(match.group("a")), _shape_list(match.group("b")))
    else:
        graph = _GRAPH_DIMENSIONS.search(message)
        rank_one = _MATMUL_RANK_ONE.search(message)
        if graph and graph.group("op") in _MATMUL_OPS:
            shapes = (_shape_list(graph.group("a")), _shape_list(graph.group("b")))
        elif rank_one is None:
            return None
        # A rank-1 operand: its shape is read from the frame.
    candidates = _binary_operations(line, ast.MatMult, ("matmul",))
    picked = _pick(line, context, candidates, shapes)
    if picked is None:
        return _matmul_rule(shapes, None, None, line, context, None)
    node, left, right = picked
    return _matmul_rule(shapes, left, right, line, context, node)


def _matmul_rule(
    shapes: tuple[tuple[int | None, ...] | None, tuple[int | None, ...] | None],
    left: Operand | None,
    right: Operand | None,
    line: FailingLine,
    context: ErrorContext,
    node: ast.expr | None,
) -> Finding:
    a = (left.shape if left is not None else None) or shapes[0]
    b = (right.shape if right is not None else None) or shapes[1]
    a_name = code(left.source) if left is not None else "the left operand"
    b_name = code(right.source) if right is not None else "the right operand"
    tf = _tf(context)
    if (a is not None and len(a) < 2) or (b is not None and len(b) < 2):
        one = a_name if a is not None and len(a) < 2 else b_name
        rule = (
            f"matmul multiplies matrices: both operands need at least 2 axes, but {one} has "
            "one (a single example without its batch axis, or a vector)"
        )
        fix = _batch_axis_fix(line, context, left if one == a_name else right)
        return Finding(rule + ".", fix, section="batch-dimension")
    if a is None or b is None:
        return Finding(
            "matmul needs the last axis of the left operand to equal the second-to-last "
            "axis of the right one.",
            None,
            section=GENERAL_SECTION,
        )
    rule = (
        f"matmul needs the last axis of {a_name} to equal the second-to-last axis of "
        f"{b_name}: {a[-1]} vs {b[-2]}"
    )
    fix = None
    if b[-1] == a[-1] and right is not None:
        fix = _transposed_weight_fix(right, line, context)
        if fix is None and node is not None and isinstance(node, ast.Call):
            fixed = _with_keyword(line, node, "transpose_b=True")
            fix = f"{b_name} looks transposed: {code(fixed)}" if fixed else None
        elif fix is None and node is not None:
            fixed = rewrite(line.frame, node, _node_of(node, 1), f"{tf}.transpose({right.source})")
            fix = f"{b_name} looks transposed: {code(fixed)}" if fixed else None
    return Finding(rule + ".", fix, section=GENERAL_SECTION)


def _node_of(node: ast.expr, index: int) -> ast.expr:
    if isinstance(node, ast.BinOp):
        return (node.left, node.right)[index]
    return node.args[index]  # type: ignore[attr-defined,no-any-return]


def _with_keyword(line: FailingLine, call: ast.Call, keyword: str) -> str | None:
    source = line.frame.segment(call)
    if not source or not source.endswith(")") or "\n" in source:
        return None
    return f"{source[:-1]}, {keyword})"


def _transposed_weight_fix(right: Operand, line: FailingLine, context: ErrorContext) -> str | None:
    """``self.kernel = self.add_weight(shape=(A, B), ...)`` in the cells -> ``shape=(B, A)``."""
    if not right.source.startswith("self."):
        return None
    attribute = right.source[len("self.") :]
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr == attribute
                and isinstance(node.value, ast.Call)
            ):
                continue
            for keyword in node.value.keywords:
                value = keyword.value
                if keyword.arg == "shape" and isinstance(value, ast.Tuple) and len(value.elts) == 2:
                    first, second = (frame.segment(element) for element in value.elts)
                    old = frame.segment(value)
                    if first and second and old:
                        return (
                            f"{code(right.source)} was created the other way round: in "
                            f"{code('build')}, write {code(f'shape=({second}, {first})')} "
                            f"instead of {code(f'shape={old}')}"
                        )
    return None


def _batch_axis_fix(
    line: FailingLine, context: ErrorContext, operand: Operand | None
) -> str | None:
    """The argument of the running cell's call that is the operand without a batch axis:
    ``reg(one_sample)`` -> ``reg(tf.expand_dims(one_sample, 0))``."""
    if operand is None or operand.value is None:
        return None
    tf = _tf(context)
    for frame in reversed(context.frames()):
        for part in frame.header():
            for node in ast.walk(part):
                if not isinstance(node, ast.Call):
                    continue
                for argument in node.args:
                    found, value = value_of(argument, frame, context)
                    if found and value is operand.value:
                        source = frame.segment(argument) or ""
                        fixed = rewrite(frame, node, argument, f"{tf}.expand_dims({source}, 0)")
                        if fixed and "\n" not in fixed:
                            return f"{_origin(source, context)}give it a batch axis: {code(fixed)}"
    return None


def _origin(name: str, context: ErrorContext) -> str:
    """``one = xs[0]`` named, with the slice that keeps the batch axis, or ""."""
    origin = index_origin(name, context)
    if origin is None:
        return ""
    return (
        f"{code(origin.statement)} dropped the batch axis (an integer index takes one item "
        f"without it; {code(origin.kept)} keeps it, as {code(origin.fixed)}), or "
    )


# ------------------------------------------------------------------ broadcasting
_INCOMPATIBLE = re.compile(
    r"Incompatible shapes: \[(?P<a>[\d,]*)\] vs\. \[(?P<b>[\d,]*)\](?: \[Op:(?P<op>\w+)\])?"
)
_ELEMENTWISE: dict[str, tuple[type[ast.operator], tuple[str, ...]]] = {
    "AddV2": (ast.Add, ("add",)),
    "Add": (ast.Add, ("add",)),
    "Sub": (ast.Sub, ("subtract",)),
    "Mul": (ast.Mult, ("multiply",)),
    "RealDiv": (ast.Div, ("divide", "truediv")),
    "Maximum": (ast.BitOr, ("maximum",)),
    "Minimum": (ast.BitOr, ("minimum",)),
    "SquaredDifference": (ast.BitOr, ("squared_difference",)),
    "Pow": (ast.Pow, ("pow",)),
}


def _broadcast(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _INCOMPATIBLE.search(parsed.message)
    op = match.group("op") if match else None
    if match is None:
        graph = _GRAPH_DIMENSIONS.search(parsed.message)
        if graph is None or graph.group("op") in _MATMUL_OPS:
            return None
        op = graph.group("op")
        shapes = (_shape_list(graph.group("a")), _shape_list(graph.group("b")))
    else:
        shapes = (_shape_list(match.group("a")), _shape_list(match.group("b")))
    a, b = shapes
    left = right = None
    node = None
    if op in _ELEMENTWISE:
        operator, functions = _ELEMENTWISE[op]
        picked = _pick(line, context, _binary_operations(line, operator, functions), shapes)
        if picked is not None:
            node, left, right = picked
    names = (
        code(left.source) if left is not None else "the left operand",
        code(right.source) if right is not None else "the right operand",
    )
    if a is None or b is None:
        return None
    axis = _failing_axis(a, b)
    rule = (
        "Element-wise ops line shapes up from the right, and along each axis the sizes must "
        f"be equal or one of them 1: {names[0]} {show_shape(a)} and {names[1]} "
        f"{show_shape(b)} differ at axis {axis} ({a[axis]} vs {b[axis]})"
    )
    fix = None
    tf = _tf(context)
    if node is not None and right is not None and left is not None:
        if len(a) == len(b) == 2 and a == b[::-1]:
            fixed = rewrite(line.frame, node, _node_of(node, 1), f"{tf}.transpose({right.source})")
            fix = f"one of them is transposed: {code(fixed)}" if fixed else None
        elif len(b) == len(a) - 1 and b == a[: len(b)]:
            fixed = rewrite(
                line.frame, node, _node_of(node, 1), f"{tf}.expand_dims({right.source}, -1)"
            )
            fix = f"add the missing last axis to {names[1]}: {code(fixed)}" if fixed else None
        elif len(a) == len(b) - 1 and a == b[: len(a)]:
            fixed = rewrite(
                line.frame, node, _node_of(node, 0), f"{tf}.expand_dims({left.source}, -1)"
            )
            fix = f"add the missing last axis to {names[0]}: {code(fixed)}" if fixed else None
    return Finding(rule + ".", fix, section="broadcasting")


def _failing_axis(a: tuple[int | None, ...], b: tuple[int | None, ...]) -> int:
    for axis in range(-1, -min(len(a), len(b)) - 1, -1):
        x, y = a[axis], b[axis]
        if x is not None and y is not None and x != y and 1 not in (x, y):
            return axis
    return -1


# ------------------------------------------------------------------ layer input
_LAYER_AXIS = re.compile(
    r"Input (?P<index>\d+) of layer ['\"](?P<layer>[^'\"]+)['\"] is incompatible with the "
    r"layer: expected axis (?P<axis>-?\d+) of input shape to have value (?P<value>\d+), but "
    r"received input with shape \((?P<given>[^)]*)\)"
)
_LAYER_NDIM = re.compile(
    r"Input (?P<index>\d+) of layer ['\"](?P<layer>[^'\"]+)['\"] is incompatible with the "
    r"layer: expected (?P<what>(?:min_|max_)?ndim)=(?P<expected>\d+), found ndim=(?P<found>\d+)\."
    r" Full shape received: \((?P<given>[^)]*)\)"
)


def _layer_input(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    message = parsed.message
    axis = _LAYER_AXIS.search(message)
    if axis is not None:
        layer, value = axis.group("layer"), axis.group("value")
        given = axis.group("given")
        rule = (
            f"Layer '{layer}' was built for inputs whose axis {axis.group('axis')} has size "
            f"{value} (its weights were sized on its first call) and now gets shape ({given})"
        )
        fix = (
            f"feed it data with {value} features on that axis, or build a new layer (or "
            "model) for the new input size"
        )
        return Finding(rule + ".", fix, section="batch-dimension")
    ndim = _LAYER_NDIM.search(message)
    if ndim is None:
        return None
    expected, found = int(ndim.group("expected")), int(ndim.group("found"))
    rule = (
        f"Layer '{ndim.group('layer')}' needs inputs with {expected} axes"
        f"{' or more' if ndim.group('what') == 'min_ndim' else ''} (the batch axis first), "
        f"but got shape ({ndim.group('given')}) with {found}"
    )
    if expected == 4 and found == 3:
        rule += ": images need a channel axis, (batch, height, width, channels)"
    return Finding(rule + ".", None, section="batch-dimension")


# ------------------------------------------------------------------ losses and labels
_TARGET_RANK = re.compile(
    r"Arguments `target` and `output` must have the same rank \(ndim\)\. Received: "
    r"target\.shape=\((?P<target>[^)]*)\), output\.shape=\((?P<output>[^)]*)\)"
)
_SPARSE_RANK = re.compile(
    r"Argument `output` must have rank \(ndim\) `target\.ndim - 1`\. Received: "
    r"target\.shape=\((?P<target>[^)]*)\), output\.shape=\((?P<output>[^)]*)\)"
)
_LABEL_RANGE = re.compile(
    r"Received a label value of (?P<value>-?\d+) which is outside the valid range of "
    r"\[0, (?P<classes>\d+)\)"
)
_FIT_METHODS = ("fit", "evaluate", "train_on_batch", "test_on_batch")
# The course section on label formats, losses and one prediction per example.
_LABELS_SECTION = "labels-and-loss"


def _fit_labels(line: FailingLine, context: ErrorContext) -> tuple[ast.Call, ast.expr] | None:
    """The ``model.fit(x, y)`` call on the failing line (or the running cell) and its y."""
    for frame in reversed(context.frames()):
        for part in frame.header():
            for node in ast.walk(part):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _FIT_METHODS
                ):
                    if len(node.args) >= 2:
                        return node, node.args[1]
                    for keyword in node.keywords:
                        if keyword.arg == "y":
                            return node, keyword.value
    return None


def _compile_loss(frame: CellFrame, model: str) -> ast.Constant | None:
    """The ``loss="..."`` of ``<model>.compile(...)`` in the failing cell."""
    tree = frame.tree()
    if tree is None:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "compile"
            and frame.segment(node.func.value) == model
        ):
            for keyword in node.keywords:
                if (
                    keyword.arg == "loss"
                    and isinstance(keyword.value, ast.Constant)
                    and type(keyword.value.value) is str
                ):
                    return keyword.value
    return None


def _labels(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    rank = _TARGET_RANK.search(parsed.message)
    sparse = _SPARSE_RANK.search(parsed.message)
    out_of_range = _LABEL_RANGE.search(parsed.message)
    if rank is None and sparse is None and out_of_range is None:
        return None
    fit = _fit_labels(line, context)
    frames = context.frames()
    frame = frames[-1] if frames else line.frame
    labels = _operand(fit[1], line, context, frame) if fit else None
    labels_name = code(labels.source) if labels is not None else "the labels"
    model = ""
    if fit is not None:
        model = frame.segment(fit[0].func.value) or ""  # type: ignore[attr-defined]
    loss = _compile_loss(frame, model) if model else None
    if rank is not None:
        target, output = _shape_list(rank.group("target")), _shape_list(rank.group("output"))
        if target is not None and output is not None and len(output) > 2 >= len(target):
            return _per_position(output, target, labels_name, fit, line, context)
        if target is None or output is None or len(target) + 1 != len(output):
            return None
        rule = (
            f"The loss compares {labels_name} (shape {show_shape(target)} per batch: one class "
            f"number per example) with the model's output {show_shape(output)} (one "
            "probability per class): categorical_crossentropy wants one-hot labels shaped "
            "like the output"
        )
        fix = None
        if loss is not None and loss.value == "categorical_crossentropy":
            fix = (
                f"for integer class labels use the sparse loss: in {code(model + '.compile(...)')}"
                f", write {code('loss=' + repr('sparse_categorical_crossentropy'))}"
            )
        return Finding(rule + ".", fix, section=_LABELS_SECTION)
    if sparse is not None:
        target, output = _shape_list(sparse.group("target")), _shape_list(sparse.group("output"))
        if target is None or output is None:
            return None
        rule = (
            f"sparse_categorical_crossentropy wants one class number per example and one "
            f"row of class scores per example, but the model outputs {show_shape(output)} for "
            f"labels {show_shape(target)}"
        )
        if len(output) > 2 and len(target) <= 1:
            return _per_position(output, target, labels_name, fit, line, context)
        fix = None
        one_hot = len(target) == len(output) and target[-1] == output[-1] != 1
        if one_hot and loss is not None and loss.value == "sparse_categorical_crossentropy":
            rule += f": {labels_name} look one-hot (a row per example, one column per class)"
            fix = (
                f"for one-hot labels use the categorical loss: in {code(model + '.compile(...)')}"
                f", write {code('loss=' + repr('categorical_crossentropy'))}"
            )
        return Finding(rule + ".", fix, section=_LABELS_SECTION)
    assert out_of_range is not None
    value, classes = int(out_of_range.group("value")), int(out_of_range.group("classes"))
    rule = (
        f"With {classes} output units the labels must be 0 to {classes - 1}, but "
        f"{labels_name} holds {value}"
    )
    fix = None
    low = _minimum(labels.value) if labels is not None else None
    if labels is not None and fit is not None and low == 1 and value == classes:
        fixed = rewrite(frame, fit[0], fit[1], f"{labels.source} - 1")
        if fixed and "\n" not in fixed:
            fix = f"the labels start at 1: shift them to start at 0, {code(fixed)}"
    elif value >= classes:
        fix = f"give the last layer {value + 1} units (one per class)"
    return Finding(rule + ".", fix, section=_LABELS_SECTION)


def _per_position(
    output: tuple[int | None, ...],
    target: tuple[int | None, ...],
    labels_name: str,
    fit: tuple[ast.Call, ast.expr] | None,
    line: FailingLine,
    context: ErrorContext,
) -> Finding:
    """The model outputs a grid of predictions (``(None, 6, 6, 3)``) for one label per
    example: a Dense layer met a rank>2 input, and acts on its last axis only. The fix
    inserts a Flatten before that Dense, in the user's spelling of the layers module."""
    rule = (
        f"The model outputs {show_shape(output)}, a prediction per position, for "
        f"{labels_name} shaped {show_shape(target)} (one label per example): Dense acts on "
        "the last axis only, so a Dense layer given an image-like (rank>2) input keeps the "
        "other axes. Flatten (or global pooling) must come first"
    )
    fix = _flatten_fix(fit, line, context)
    return Finding(rule + ".", fix, section=_LABELS_SECTION)


_MAX_MODEL_LAYERS = 200


def _flatten_fix(
    fit: tuple[ast.Call, ast.expr] | None, line: FailingLine, context: ErrorContext
) -> str | None:
    """``layers.Flatten(), layers.Dense(3)`` (in a Sequential list) or
    ``layers.Dense(3)(layers.Flatten()(h))`` (functional): the first Dense layer of the
    model built for a rank>2 input, found as the same-numbered Dense call in the cell
    that defines the model."""
    from jupyterlab_tfcoach.monitor.errors.failing_line import layer_input_shape
    from jupyterlab_tfcoach.monitor.stored_state import is_library_class, keras_sublayers

    if fit is None:
        return None
    frames = context.frames()
    frame = frames[-1] if frames else line.frame
    model_node = fit[0].func.value  # type: ignore[attr-defined]
    model_name = frame.segment(model_node)
    found, model = value_of(model_node, frame, context)
    if not found or not model_name:
        return None
    dense_index = 0
    target_index = None
    for layer in list(keras_sublayers(model))[:_MAX_MODEL_LAYERS]:
        cls = type(layer)
        if not is_library_class(cls) or type.__dict__["__name__"].__get__(cls) != "Dense":
            continue
        shape = layer_input_shape(layer) or _built_shape(layer)
        if shape is not None and len(shape) > 2:
            target_index = dense_index
            break
        dense_index += 1
    if target_index is None:
        return None
    for source in _cell_sources(frame, context):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        if not any(
            isinstance(node, ast.Assign)
            and any(ast.get_source_segment(source, t) == model_name for t in node.targets)
            for node in ast.walk(tree)
        ):
            continue
        calls = sorted(
            (
                node
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and (
                    (isinstance(node.func, ast.Attribute) and node.func.attr == "Dense")
                    or (isinstance(node.func, ast.Name) and node.func.id == "Dense")
                )
            ),
            key=lambda node: (node.lineno, node.col_offset),
        )
        if len(calls) <= target_index:
            return None
        dense = calls[target_index]
        return _flatten_before(dense, tree, source)
    return None


def _built_shape(layer: Any) -> tuple[int | None, ...] | None:
    """The input shape in a layer's ``_build_shapes_dict`` when Keras stores it in its
    tracked dict (a ``dict`` subclass): read with ``dict``'s own code."""
    from jupyterlab_tfcoach.monitor.stored_state import stored

    shapes = stored(layer, "_build_shapes_dict")
    if not isinstance(shapes, dict) or dict.__len__(shapes) != 1:
        return None
    shape = next(iter(dict.values(shapes)))
    if type(shape) is tuple and all(d is None or type(d) is int for d in shape):
        return shape
    return None


def _cell_sources(frame: CellFrame, context: ErrorContext) -> list[str]:
    """The failing cell's source, then the cell history ``In`` (read only), newest first."""
    sources = [frame.source()]
    history = context.namespace.get("In")
    if type(history) is list:
        budget = 200_000  # characters parsed at most: explaining stays within its budget
        for text in reversed(history[-200:]):
            if type(text) is str:
                budget -= len(text)
                if budget < 0:
                    break
                sources.append(text)
    return sources


def _flatten_before(dense: ast.Call, tree: ast.Module, source: str) -> str | None:
    dense_source = ast.get_source_segment(source, dense)
    prefix = ast.get_source_segment(source, dense.func)
    if not dense_source or not prefix or "\n" in dense_source:
        return None
    flatten = prefix[: -len("Dense")] + "Flatten()"
    for node in ast.walk(tree):
        if isinstance(node, ast.List) and any(element is dense for element in node.elts):
            return (
                f"insert a Flatten layer before {code(dense_source)} in the list of layers: "
                f"{code(f'{flatten}, {dense_source}')}"
            )
        if isinstance(node, ast.Call) and node.func is dense and len(node.args) == 1:
            applied = ast.get_source_segment(source, node)
            given = ast.get_source_segment(source, node.args[0])
            if applied and given and "\n" not in applied:
                return (
                    f"flatten what {code(dense_source)} is applied to: "
                    f"{code(f'{dense_source}({flatten}({given}))')}"
                )
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add"
            and len(node.args) == 1
            and node.args[0] is dense
        ):
            owner = ast.get_source_segment(source, node.func.value)
            if owner:
                return (
                    f"add a Flatten layer before {code(f'{owner}.add({dense_source})')}: "
                    f"{code(f'{owner}.add({flatten})')}"
                )
    return None


def _minimum(value: Any) -> int | None:
    """The smallest label of an integer NumPy array (NumPy's code only, bounded size)."""
    numpy = sys.modules.get("numpy")
    if numpy is None or type(value) is not getattr(numpy, "ndarray", None):
        return None
    if value.size == 0 or value.size > 10_000_000 or value.dtype.kind not in "iu":
        return None
    return int(value.min())


# ------------------------------------------------------------------ immutable tensors
_ITEM_ASSIGNMENT = re.compile(
    r"'(?:[\w.]*\.)?(?P<cls>EagerTensor|SymbolicTensor|Tensor|ResourceVariable|UninitializedVariable|"
    r"Variable)' object does not support item assignment"
)


def _item_assignment(
    parsed: ParsedError, line: FailingLine, context: ErrorContext
) -> Finding | None:
    match = _ITEM_ASSIGNMENT.search(parsed.message)
    if match is None or parsed.type != "TypeError":
        return None
    tf = _tf(context)
    statement = line.statement
    target = value = index = None
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Subscript)
    ):
        target = _segment(line, statement.targets[0].value)
        index = statement.targets[0].slice
        value = _segment(line, statement.value)
    is_variable = "Variable" in match.group("cls")
    if is_variable:
        rule = "A tf.Variable is changed with assign(), not with item assignment"
        fix = (
            f"{code(f'{target}[{_segment(line, index)}].assign({value})')}"
            if target and index is not None and value
            else None
        )
        return Finding(rule + ".", fix, section="tensors-immutable")
    rule = (
        f"Tensors are immutable: {code(target) if target else 'a tensor'} cannot be changed "
        "in place; build a new tensor with the new values"
    )
    fix = None
    if target and value and index is not None:
        positions = _index_positions(index)
        if positions is not None:
            fixed = f"{target} = {tf}.tensor_scatter_nd_update({target}, [{positions}], [{value}])"
            fix = code(fixed)
    return Finding(rule + ".", fix, section="tensors-immutable")


def _index_positions(index: ast.expr) -> str | None:
    """``0, 0`` -> ``[0, 0]``; ``3`` -> ``[3]``: only constant integer indexes."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    values = []
    for part in parts:
        try:
            literal = ast.literal_eval(part)
        except Exception:
            return None
        if type(literal) is not int:
            return None
        values.append(str(literal))
    return f"[{', '.join(values)}]"


# ------------------------------------------------------------------ empty gradient lists
_UNPACK = re.compile(r"not enough values to unpack \(expected (?P<expected>\d+), got 0\)")


def _empty_unpack(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _UNPACK.search(parsed.message)
    statement = line.statement
    if match is None or not isinstance(statement, ast.Assign):
        return None
    gradient = next(
        (
            node
            for node in ast.walk(statement.value)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "gradient"
            and len(node.args) >= 2
        ),
        None,
    )
    sources = gradient.args[1] if gradient is not None else statement.value
    listed = _operand(sources, line, context)
    if listed is None or listed.kind != "list" or not _mentions_variables(sources):
        return None
    owner_node = sources.value if isinstance(sources, ast.Attribute) else None
    owner = _operand(owner_node, line, context) if owner_node is not None else None
    names = _segment(line, statement.targets[0])
    rule = f"{code(listed.source)} is empty, so there is nothing to unpack into {code(names)}"
    fix = None
    if owner is not None and owner.kind in ("module", "layer", "model"):
        plain = _tensor_attributes(owner.value)
        if plain:
            shown = ", ".join(code(f"self.{name}") for name in plain)
            rule += (
                f": {code(owner.source)} tracks only tf.Variable attributes, and {shown} "
                f"{'is a plain tensor' if len(plain) == 1 else 'are plain tensors'}"
            )
            fix = _variable_fix(plain, context)
    return Finding(rule + ".", fix, section="variables")


def _mentions_variables(node: ast.expr) -> bool:
    return any(
        isinstance(inner, ast.Attribute) and inner.attr in TRACKED_ATTRIBUTES
        for inner in ast.walk(node)
    )


def _tensor_attributes(owner: Any) -> list[str]:
    from jupyterlab_tfcoach.monitor.stored_state import instance_dict

    attributes = instance_dict(owner) or {}
    found = []
    for name, value in list(attributes.items())[:200]:
        described = describe(name, value) if type(name) is str else None
        if described is not None and described.kind == "tensor":
            found.append(name)
    return found[:4]


def _variable_fix(names: list[str], context: ErrorContext) -> str | None:
    """``self.coef = tf.random.normal(...)`` in the cells -> wrapped in ``tf.Variable``."""
    tf = _tf(context)
    fixes = []
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr in names
                and frame.segment(node.targets[0].value) == "self"
            ):
                value = frame.segment(node.value)
                if value and "\n" not in value:
                    attribute = node.targets[0].attr
                    fixes.append(code(f"self.{attribute} = {tf}.Variable({value})"))
        if fixes:
            return "create them as variables in `__init__`: " + ", ".join(fixes)
    return None


# ------------------------------------------------------------------ negative conv sizes
_NEGATIVE_SIZE = re.compile(
    r"Computed output size would be negative: (?P<size>-?\d+) \[input_size: (?P<input>\d+), "
    r"effective_filter_size: (?P<filter>\d+), stride: (?P<stride>\d+)\]"
)


def _negative_size(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _NEGATIVE_SIZE.search(parsed.message)
    if match is None:
        return None
    size, window = match.group("input"), match.group("filter")
    rule = (
        f"A convolution or pooling window of {window} does not fit on an axis of size {size}: "
        "the layer read the input's axes one place off, which usually means the batch axis "
        "is missing (or the image is smaller than the stack of windows)"
    )
    fix = None
    tf = _tf(context)
    for operand in line.operands:
        if (
            operand.kind in ("model", "layer")
            and isinstance(line.call, ast.Call)
            and line.call.args
        ):
            argument = line.call.args[0]
            given = _operand(argument, line, context)
            expected = model_input_shapes(operand.value)
            if given is not None and given.shape is not None and expected:
                if tuple(expected[0][1:]) == given.shape:
                    source = given.source
                    fixed = rewrite(
                        line.frame, line.call, argument, f"{tf}.expand_dims({source}, 0)"
                    )
                    if fixed:
                        fix = (
                            f"{code(source)} is one example {show_shape(given.shape)}; the model "
                            f"takes batches {show_shape(expected[0])}: {code(fixed)}"
                        )
            break
    return Finding(rule + ".", fix, section="batch-dimension")


# ------------------------------------------------------------------ tapes
_WATCH = re.compile(r"Passed in object .* of type '(?P<type>\w+)', not tf\.Tensor", re.S)


def _tape_watch(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _WATCH.search(parsed.full_message)
    if match is None:
        return None
    tf = _tf(context)
    argument = line.call.args[0] if isinstance(line.call, ast.Call) and line.call.args else None
    name = _segment(line, argument) if argument is not None else ""
    rule = (
        f"A GradientTape watches and differentiates tensors and variables only; "
        f"{code(name) if name else 'the value'} is a {match.group('type')}"
    )
    fix = (
        f"convert it before the tape and use the tensor: "
        f"{code(f'{name} = {tf}.convert_to_tensor({name})')}"
        if name.isidentifier()
        else None
    )
    return Finding(rule + ".", fix, section="tape-watch")


# ------------------------------------------------------------------ unknown sizes in graphs
_NONE_DIMENSION = re.compile(r"Failed to convert elements of \((?P<shape>[^)]*None[^)]*)\) to")


def _unknown_dimension(
    parsed: ParsedError, line: FailingLine, context: ErrorContext
) -> Finding | None:
    match = _NONE_DIMENSION.search(parsed.message)
    if match is None:
        return None
    tf = _tf(context)
    static = [
        node
        for part in line.frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
    ]
    rule = (
        f"While a function is traced (in fit, a tf.function or a dataset's map) the batch "
        f"size is unknown, so a static shape holds None: ({match.group('shape')}). "
        f"{code(f'{tf}.shape(x)')} gives the sizes when the graph runs"
    )
    fix = None
    if static:
        first = static[0]
        owner = _segment(line, first.value.value)  # type: ignore[attr-defined]
        index = _segment(line, first.slice)
        if owner and index:
            fix = (
                f"use the dynamic shape: {code(f'{tf}.shape({owner})[{index}]')} instead of "
                f"{code(f'{owner}.shape[{index}]')}"
            )
    return Finding(rule + ".", fix, section=GENERAL_SECTION)


# ------------------------------------------------------------------ reshape
_RESHAPE = re.compile(
    r"Input to reshape is a tensor with (?P<have>\d+) values, but the requested shape "
    r"(?:has|requires a multiple of) (?P<want>\d+)"
)


def _reshape(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _RESHAPE.search(parsed.message)
    if match is None:
        return None
    rule = (
        f"reshape keeps every value and only rearranges them: {match.group('have')} values "
        f"cannot fill a shape of {match.group('want')}; the product of the new shape must "
        "equal the old one (one axis may be -1 to be computed)"
    )
    return Finding(rule + ".", None, section=GENERAL_SECTION)


# ------------------------------------------------------------------ signatures, assertions
_SIGNATURE = re.compile(
    r"Can not cast TensorSpec\(shape=\((?P<given>[^)]*)\), dtype=tf\.(?P<given_dtype>\w+)"
    r"[^)]*\) to TensorSpec\(shape=\((?P<wanted>[^)]*)\), dtype=tf\.(?P<wanted_dtype>\w+)"
)


def _signature(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _SIGNATURE.search(parsed.message)
    if match is None:
        return None
    given, wanted = _shape_list(match.group("given")), _shape_list(match.group("wanted"))
    if given is None or wanted is None:
        return None
    rule = (
        f"The tf.function's input_signature declares {show_shape(wanted)} "
        f"{match.group('wanted_dtype')} and accepts nothing else; the argument is "
        f"{show_shape(given)} {match.group('given_dtype')}"
    )
    fix = None
    if len(given) == len(wanted) and given[1:] == wanted[1:] and given[:1] != wanted[:1]:
        tf = _tf(context)
        rest = ", ".join(str(d) for d in wanted[1:])
        spec = f"{tf}.TensorSpec([None, {rest}], {tf}.{match.group('wanted_dtype')})"
        fix = f"leave the batch axis unknown in the signature: {code(spec)}"
    return Finding(rule + ".", fix, section="batch-dimension")


_ASSERTION = re.compile(r"must have rank|Specified by tensor|must have size|must have shape")


def _shape_assertion(
    parsed: ParsedError, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if "assert_shapes" not in (line.call_source or "") or not _ASSERTION.search(parsed.message):
        return None
    return Finding(
        "tf.debugging.assert_shapes found a tensor whose shape is not the one declared for "
        "it (the same letter means the same size in every tensor): make the shapes equal "
        "before the arithmetic, with tf.squeeze or tf.reshape.",
        None,
        section="broadcasting",
    )


_PYTHON_FLOAT = re.compile(
    r"Cannot convert (?P<value>\S+) to EagerTensor of dtype (?P<dtype>u?int\d+|bool)"
)


def _python_number(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _PYTHON_FLOAT.search(parsed.message)
    if match is None:
        return None
    tf = _tf(context)
    integer = next(
        (operand for operand in line.operands if operand.dtype == match.group("dtype")), None
    )
    rule = (
        f"A Python number takes the dtype of the tensor it meets, and {match.group('value')} "
        f"cannot become {match.group('dtype')}"
    )
    fix = (
        f"cast the integer tensor first: {code(f'{tf}.cast({integer.source}, {tf}.float32)')}"
        if integer is not None
        else None
    )
    return Finding(rule + ".", fix, section="dtype-casting")


_ASSIGN_SHAPE = re.compile(
    r"Cannot update variable with shape \[(?P<variable>[\d,]*)\] using a Tensor with shape "
    r"\[(?P<value>[\d,]*)\], shapes must be equal"
)


def _assign_shape(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _ASSIGN_SHAPE.search(parsed.message)
    if match is None:
        return None
    variable, value = _shape_list(match.group("variable")), _shape_list(match.group("value"))
    if variable is None or value is None:
        return None
    rule = (
        f"assign, assign_add and assign_sub on a tf.Variable want a value of the variable's "
        f"own shape {show_shape(variable)} and do not broadcast; the value is {show_shape(value)}"
    )
    fix = None
    call = line.call
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("assign_sub", "assign_add")
        and len(call.args) == 1
    ):
        owner, argument = _segment(line, call.func.value), _segment(line, call.args[0])
        sign = "-" if call.func.attr == "assign_sub" else "+"
        order = _gradient_order(call.args[0], line, context)
        if order is not None:
            sentence, order_fix = order
            return Finding(f"{rule}: {sentence}.", order_fix, section="gradient-tape")
        if owner and argument and "\n" not in argument:
            fixed = f"{owner}.assign({owner} {sign} {argument})"
            fix = f"write the arithmetic inside assign: {code(fixed)}"
    return Finding(rule + ".", fix, section="rebinding-variables")


# ------------------------------------------------------------------ gradients in another order
def _unpacked_gradients(
    name: str, context: ErrorContext
) -> tuple[CellFrame, ast.Assign, ast.Call, ast.Attribute] | None:
    """``d_w, d_b = tape.gradient(loss, model.trainable_variables)`` binding ``name``."""
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], (ast.Tuple, ast.List))
                and any(
                    isinstance(element, ast.Name) and element.id == name
                    for element in node.targets[0].elts
                )
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "gradient"
                and len(node.value.args) >= 2
            ):
                continue
            sources = node.value.args[1]
            if isinstance(sources, ast.Attribute) and sources.attr in TRACKED_ATTRIBUTES:
                return frame, node, node.value, sources
    return None


def _attribute_names(owner: Any, variables: list[Any]) -> list[str] | None:
    """The attribute each tracked variable is stored under (``coef``, ``bias``)."""
    from jupyterlab_tfcoach.monitor.stored_state import instance_dict

    attributes = instance_dict(owner) or {}
    by_id = {id(value): key for key, value in list(attributes.items())[:500] if type(key) is str}
    names = [by_id.get(id(variable)) for variable in variables]
    return names if all(names) else None  # type: ignore[return-value]


def _gradient_order(
    value: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[str, str | None] | None:
    """Why a gradient unpacked by name has another variable's shape: the gradients come in
    the order of ``owner.trainable_variables``, which is not the order the names assume.
    (sentence, fix) in the user's names; the fix asks for the variables explicitly, in the
    order the names are used (``owner.attr.assign_sub(... d_attr)``)."""
    names = [n.id for n in ast.walk(value) if isinstance(n, ast.Name)]
    for name in names:
        found = _unpacked_gradients(name, context)
        if found is None:
            continue
        frame, statement, call, sources = found
        owner_found, owner = value_of(sources.value, frame, context)
        kind = _operand(sources.value, line, context, frame)
        if not owner_found or kind is None or kind.kind not in ("module", "layer", "model"):
            return None
        variables = tracked_variables(owner, kind.kind, TRACKED_ATTRIBUTES[sources.attr])
        if not variables:
            return None
        attributes = _attribute_names(owner, variables)
        if attributes is None:
            return None
        owner_source = frame.segment(sources.value) or ""
        listed = ", ".join(
            f"{code(attribute)} {show_shape(shape) if shape is not None else ''}".rstrip()
            for attribute, variable in zip(attributes, variables, strict=True)
            for shape in [describe("", variable).shape if describe("", variable) else None]
        )
        targets = [e.id for e in statement.targets[0].elts if isinstance(e, ast.Name)]  # type: ignore[attr-defined]
        unpacked = frame.segment(statement.targets[0]) or ", ".join(targets)
        sentence = (
            f"{code(unpacked)} unpack {code(frame.segment(call) or '')}, whose gradients come "
            f"in the order of {code(frame.segment(sources) or '')}: {listed} (a tf.Module and "
            f"a Keras layer list their variables in their own order, here not the order of "
            f"the names), so {code(name)} holds another variable's gradient"
        )
        used = _used_with(targets, frame, owner_source)
        fix = None
        if used is not None and len(used) == len(targets):
            explicit = ", ".join(f"{owner_source}.{attribute}" for attribute in used)
            fixed = rewrite(frame, call, sources, f"[{explicit}]")
            if fixed:
                fix = (
                    f"ask for the gradients of the variables in the order of the names: "
                    f"{code(f'{unpacked} = {fixed}')}"
                )
        if fix is None:
            fix = (
                f"pair each gradient with its variable instead of unpacking by name: "
                f"{code(f'zip(grads, {frame.segment(sources)})')}"
            )
        return sentence, fix
    return None


def _used_with(targets: list[str], frame: CellFrame, owner: str) -> list[str] | None:
    """For each name, the attribute of ``owner`` it updates (``owner.attr.assign_sub(...
    name ...)``) in the cell, in the order of the names."""
    tree = frame.tree()
    if tree is None:
        return None
    updates: dict[str, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("assign_sub", "assign_add", "assign")
            and isinstance(node.func.value, ast.Attribute)
            and frame.segment(node.func.value.value) == owner
        ):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name) and inner.id in targets:
                    updates.setdefault(inner.id, node.func.value.attr)
    found = [updates.get(target) for target in targets]
    if not all(found) or len(set(found)) != len(found):
        return None
    return found  # type: ignore[return-value]


# ------------------------------------------------------------------ functional inputs
_NOT_CONNECTED = re.compile(r"is not connected to `?inputs`?|Graph disconnected")
_MAX_HISTORY = 2000


def _input_tensors(tensor: Any) -> list[Any]:
    """The ``keras.Input`` tensors a Keras symbolic tensor was computed from, read from what
    Keras stores (``_keras_history`` -> the operation's inbound node -> its tensors)."""
    from jupyterlab_tfcoach.monitor.stored_state import stored

    found: list[Any] = []
    stack, seen = [tensor], set()
    for _ in range(_MAX_HISTORY):
        if not stack:
            break
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        history = stored(current, "_keras_history")
        if not isinstance(history, tuple) or tuple.__len__(history) < 2:
            continue
        operation, index = tuple.__getitem__(history, 0), tuple.__getitem__(history, 1)
        nodes = stored(operation, "_inbound_nodes")
        # Keras keeps them in its TrackedList (a list subclass): read with list's own code.
        if not isinstance(nodes, list) or type(index) is not int:
            continue
        if not 0 <= index < list.__len__(nodes):
            continue
        node = list.__getitem__(nodes, index)
        if stored(node, "is_input") is True:
            found.append(current)
            continue
        tensors = stored(stored(node, "arguments"), "keras_tensors")
        if isinstance(tensors, list):
            stack.extend(list.__getitem__(tensors, slice(0, _MAX_HISTORY)))
    return found


def _disconnected(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    if not _NOT_CONNECTED.search(parsed.message) or not isinstance(line.call, ast.Call):
        return None
    call = line.call
    arguments = {k.arg: k.value for k in call.keywords if k.arg in ("inputs", "outputs")}
    for position, key in enumerate(("inputs", "outputs")):
        if key not in arguments and len(call.args) > position:
            arguments[key] = call.args[position]
    given, outputs = arguments.get("inputs"), arguments.get("outputs")
    if given is None or outputs is None:
        return None
    found, output = value_of(outputs, line.frame, context)
    if not found:
        return None
    sources = _input_tensors(output)
    names = []
    for count, (name, value) in enumerate(context.namespace.items()):
        if count > _MAX_HISTORY or len(names) >= 4:
            break
        if type(name) is str and not name.startswith("_"):
            if any(value is source for source in sources):
                names.append(name)
    outputs_source, given_source = _segment(line, outputs), _segment(line, given)
    rule = (
        f"A functional model's inputs must be the very tensors its outputs were computed "
        f"from; {code(given_source)} is not one of them"
    )
    if isinstance(given, ast.Call):
        rule += " (each keras.Input(...) call makes a new, unconnected input)"
    if not names:
        return Finding(rule + ".", None, section="functional-api")
    shown = ", ".join(code(name) for name in names)
    rule += f": {code(outputs_source)} was computed from {shown}"
    replacement = names[0] if len(names) == 1 else f"[{', '.join(names)}]"
    fixed = rewrite(line.frame, call, given, replacement)
    fix = f"pass the input the outputs came from: {code(fixed)}" if fixed else None
    return Finding(rule + ".", fix, section="functional-api")


# ------------------------------------------------------------------ batching sequences
_BATCH_SHAPES = re.compile(
    r"Cannot batch tensors with different shapes in component (?P<component>\d+)\. First "
    r"element had shape \[(?P<first>[\d,]*)\] and element (?P<index>\d+) had shape "
    r"\[(?P<other>[\d,]*)\]"
)


def _uneven_batch(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _BATCH_SHAPES.search(parsed.message)
    if match is None:
        return None
    first, other = _shape_list(match.group("first")), _shape_list(match.group("other"))
    if first is None or other is None:
        return None
    batch = next(
        (
            node
            for part in line.frame.header()
            for node in ast.walk(part)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "batch"
        ),
        None,
    )
    rule = (
        f".batch(n) stacks elements into one tensor, so all must have one shape, but one "
        f"element is {show_shape(first)} and another {show_shape(other)}: sequences of "
        f"different lengths. padded_batch pads each batch to its longest element (with 0), "
        f"ragged_batch makes a tf.RaggedTensor"
    )
    if batch is None:
        return Finding(rule + ".", None, section="tf-data")
    dataset = batch.func.value  # type: ignore[attr-defined]
    origin = _built_from(dataset, line, context)
    if origin:
        rule += f". {origin}"
    whole = _segment(line, batch)
    receiver = _segment(line, dataset)
    fixed = f"{receiver}.padded_batch{whole[len(receiver) + len('.batch') :]}"
    fix = f"pad each batch, in place of {code(whole)}: {code(fixed)}" if receiver else None
    return Finding(rule + ".", fix, section="tf-data")


def _built_from(dataset: ast.expr, line: FailingLine, context: ErrorContext) -> str | None:
    """``seq_ds`` is built from ``token_lists`` (a list of ...): the Python lists its
    defining statement reads, found in the cells the error went through."""
    if not isinstance(dataset, ast.Name):
        return None
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign)
                and any(
                    isinstance(target, ast.Name) and target.id == dataset.id
                    for target in node.targets
                )
            ):
                continue
            lists = []
            for inner in ast.walk(node.value):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
                    found, value = context.lookup(inner.id, frame)
                    described = describe(inner.id, value) if found else None
                    if described is not None and described.kind == "list":
                        lists.append(f"{code(inner.id)} ({described.description})")
            if lists:
                return f"{code(dataset.id)} is built from " + " and ".join(lists[:2])
    return None


# ------------------------------------------------------------------ loop variables
_LOOP_SHAPE = re.compile(
    r"'(?P<name>\w+)' has shape (?P<before>\([^)]*\)) before the loop, but shape "
    r"(?P<after>\([^)]*\)) after one iteration"
)


def _loop_shape(parsed: ParsedError, line: FailingLine, context: ErrorContext) -> Finding | None:
    match = _LOOP_SHAPE.search(parsed.message)
    if match is None:
        return None
    name, before, after = match.group("name"), match.group("before"), match.group("after")
    tf = _tf(context)
    statement = line.statement
    rank = len(_shape_list(before.strip("()")) or ())
    loop = ""
    growth = ""
    if isinstance(statement, (ast.For, ast.While)):
        header = _segment(
            line, statement.iter if isinstance(statement, ast.For) else statement.test
        )
        loop = f"`for ... in {header}:`" if isinstance(statement, ast.For) else f"`while {header}:`"
        for child in ast.walk(statement):
            if (
                isinstance(child, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in child.targets)
                and isinstance(child.value, ast.Call)
            ):
                growth = (
                    f" ({code(_segment(line, child.value.func))} on line {child.lineno} grows it)"
                )
                break
    rule = (
        f"AutoGraph turns {loop or 'a loop over a tensor'} into a tf.while_loop, whose loop "
        f"variables must keep one shape: {code(name)} is {before} before the loop and "
        f"{after} after one iteration{growth}. Collect values in a tf.TensorArray and "
        f".stack() it, or declare that the size varies"
    )
    invariant = f"{tf}.TensorShape([{', '.join(['None'] * rank)}])"
    fixed = (
        f"{tf}.autograph.experimental.set_loop_options(shape_invariants=[({name}, {invariant})])"
    )
    fix = f"as the first line of the loop's body, write {code(fixed)}" if loop else None
    return Finding(rule + ".", fix, section="python-loops")


# ------------------------------------------------------------------ call arguments
def _call_arguments(
    parsed: ParsedError, line: FailingLine, context: ErrorContext
) -> Finding | None:
    found = explain_call_arguments(parsed, line, context)
    return Finding(*found) if found is not None else None


# ------------------------------------------------------------------ the catalogue
FAMILIES: tuple[tuple[str, Family, bool], ...] = (
    # (name, recogniser, claimed even when the traceback never reached TF/Keras)
    ("matmul inner dimensions", _matmul, False),
    ("incompatible shapes in element-wise ops", _broadcast, False),
    ("a layer's expected input", _layer_input, False),
    ("labels against the loss", _labels, False),
    ("item assignment on a tensor", _item_assignment, True),
    ("unpacking an empty list of variables or gradients", _empty_unpack, True),
    ("negative convolution output size", _negative_size, False),
    ("watching a non-tensor on a tape", _tape_watch, False),
    ("None sizes while tracing", _unknown_dimension, False),
    ("reshape to a different number of values", _reshape, False),
    ("an argument a tf.function's input_signature rejects", _signature, False),
    ("a failed shape assertion", _shape_assertion, False),
    ("a Python number that cannot take an integer tensor's dtype", _python_number, False),
    ("assign with a value of another shape", _assign_shape, False),
    ("a functional model's inputs its outputs do not come from", _disconnected, False),
    ("batching elements of different shapes", _uneven_batch, False),
    ("a loop variable whose shape changes in a graph loop", _loop_shape, False),
    # Claimed without TF in the traceback: too many positional arguments fail at the call.
    ("arguments that do not fit a library function or a dataset's elements", _call_arguments, True),
)


def explain_failing_line(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    """The generic entry: line, call, operands; the family's rule and fix when one matches."""
    line = read_failing_line(context)
    if line is None:
        return None
    through_library = raised_through_library(context, parsed)
    # Families search the whole text: TF puts the key phrase after long node listings.
    whole = replace(parsed, message=parsed.full_message or parsed.message)
    finding: Finding | None = None
    for _name, family, without_library in FAMILIES:
        if not (through_library or without_library):
            continue
        try:
            finding = family(whole, line, context)
        except Exception:
            finding = None
        if finding is not None:
            break
    if finding is None and not through_library:
        return None
    if finding is not None:
        said = finding.rule + (f" Fix: {finding.fix}." if finding.fix else "")
        return f"{line_facts(parsed, context, line, said)} {said}", finding.section
    said = (
        "Compare these shapes and dtypes with what the call expects (TensorFlow's message "
        "above names the op and the values it got)."
    )
    return f"{line_facts(parsed, context, line, said)} {said}", GENERAL_SECTION


def line_facts(parsed: ParsedError, context: ErrorContext, line: FailingLine, said: str) -> str:
    """What every error entry starts with: where it failed (the function, a user class's
    method), the call and the names it was computing, the running cell's call that led
    there, and what each value named there holds; whatever ``said`` (the rule and fix that
    follow) already names is left out, so nothing is said twice."""
    where = line.where[0].upper() + line.where[1:]
    call = line.call_source
    if call and code(call) not in said:
        result = line.result_names()
        fresh = result is not None and f"`{result}" not in said
        computing = f" while computing {code(result)}" if fresh else ""
        parts = [f"{where}: {code(call)} raised {parsed.type}{computing}."]
    else:
        parts = [f"{where} raised {parsed.type}."]
    outer = _call_site(line, context, said)
    if outer:
        parts.append(outer)
    operands = [operand for operand in line.operands if not _described(operand, said)]
    if operands:
        parts.append("; ".join(operand.sentence() for operand in operands) + ".")
    return " ".join(parts)


def _described(operand: Operand, said: str) -> bool:
    """Whether the rule already says what the operand holds (```g`` is None`, ```x`` (the
    left side of `-`) is float64`): naming it alone is not describing it."""
    name = code(operand.source)
    return (
        operand.sentence() in said
        or f"{name} (the " in said
        or (operand.kind == "none" and f"{name} is None" in said)
    )


def _call_site(line: FailingLine, context: ErrorContext, said: str = "") -> str | None:
    """``Called from line 3 of this cell: `reg(one_sample)`; `one_sample` is ...``: the
    running cell's line, when the error happened in a function it called."""
    frames = context.frames()
    if len(frames) < 2:
        return None
    outer = frames[-1]
    if outer is line.frame:
        return None
    outer_line = read_failing_line(_Outermost(context, outer))  # type: ignore[arg-type]
    if outer_line is None or not outer_line.call_source:
        return None
    said_here = f"It was called from {outer_line.where}: {code(outer_line.call_source)}"
    known = {operand.source for operand in line.operands}
    extra = [
        operand
        for operand in outer_line.operands
        if operand.source not in known and not _described(operand, said)
    ]
    if extra:
        said_here += "; " + "; ".join(operand.sentence() for operand in extra[:4])
    return said_here + "."


class _Outermost:
    """An ``ErrorContext`` seen from its outermost cell frame (the running cell's line)."""

    def __init__(self, context: ErrorContext, frame: CellFrame) -> None:
        self._context = context
        self._frame = frame

    def frames(self) -> list[CellFrame]:
        return [self._frame]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)
