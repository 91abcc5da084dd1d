"""NumPy functions called on tensors that are being traced (issue #25).

``np.square(y_true - y_pred)`` in a custom loss, a layer's ``call`` or a tf.function:
Keras and ``tf.function`` run these with symbolic tensors while they trace the graph,
and NumPy needs values, so TensorFlow raises "Cannot convert a symbolic tf.Tensor ... to
a numpy array". The cause is the NumPy call on the failing line, not a tensor that
escaped a trace: ``numpy_on_traced_tensors`` finds each ``np.<name>(...)`` call of that
line (its root name holds the ``numpy`` module) and writes the line again with
``keras.ops.<name>`` (Keras's ops carry NumPy's names and arguments and build graph ops),
or, without Keras, the TensorFlow function of ``_TENSORFLOW_NAMES``. No fix when one of
the functions has no such counterpart.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    rewrite_all,
    value_kind,
)

# NumPy -> TensorFlow, for a kernel without Keras (keras.ops keeps NumPy's names).
_TENSORFLOW_NAMES = {
    "abs": "abs",
    "exp": "exp",
    "log": "math.log",
    "sqrt": "sqrt",
    "square": "square",
    "mean": "reduce_mean",
    "sum": "reduce_sum",
    "max": "reduce_max",
    "min": "reduce_min",
    "maximum": "maximum",
    "minimum": "minimum",
    "tanh": "tanh",
    "argmax": "argmax",
    "where": "where",
    "matmul": "matmul",
    "clip": "clip_by_value",
}
_MAX_LINE_CHARS = 200


@dataclass(frozen=True)
class NumpyLine:
    """The failing line with its NumPy functions replaced."""

    functions: tuple[str, ...]  # ``np.square``, as written
    line: str  # the line as written, without its indentation
    fixed: str  # the same line with graph ops


def numpy_on_traced_tensors(context: ErrorContext, inside_tf_function: bool) -> NumpyLine | None:
    """The failing line's ``np.<name>`` calls, and the line written with graph ops."""
    frames = context.frames()
    numpy = sys.modules.get("numpy")
    if not frames or numpy is None:
        return None
    frame = frames[0]
    statement = frame.statement()
    if statement is None or statement.lineno != statement.end_lineno:
        return None
    functions = [
        node.func
        for part in frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and _holds(node.func.value, numpy, frame, context)
    ]
    if not functions or not _traced_here(frame, inside_tf_function, functions):
        return None
    replacements: dict[str, str] = {}
    for function in functions:  # type: ignore[assignment]
        replacement = _graph_op(function.attr, context)  # type: ignore[attr-defined]
        if replacement is None:
            return None
        replacements[function.attr] = replacement  # type: ignore[attr-defined]
    lines = frame.source().splitlines()
    if statement.lineno > len(lines):
        return None
    text = lines[statement.lineno - 1].encode("utf-8")
    if len(text) > _MAX_LINE_CHARS:
        return None
    fixed = text
    for function in sorted(functions, key=lambda node: node.col_offset, reverse=True):
        new = replacements[function.attr].encode("utf-8")  # type: ignore[attr-defined]
        fixed = fixed[: function.col_offset] + new + fixed[function.end_col_offset :]
    written = tuple(dict.fromkeys(frame.segment(function) or "" for function in functions))
    return NumpyLine(
        written, text.decode("utf-8").strip(), fixed.decode("utf-8", "replace").strip()
    )


def _traced_here(frame: CellFrame, inside_tf_function: bool, functions: list[ast.expr]) -> bool:
    """Whether the line runs while a trace is made: inside a tf.function's body (known
    from TensorFlow's message), or in a function whose local names given to the NumPy
    calls hold symbolic tensors. A line outside every function (``np.mean(losses)`` over
    graph tensors kept from a trace) is an escaped tensor's error, not this one."""
    if frame.local_names is None:
        return inside_tf_function
    calls = [
        node
        for part in frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Call) and any(node.func is function for function in functions)
    ]
    for call in calls:
        for node in ast.walk(call):
            if isinstance(node, ast.Name) and node.id in frame.local_names:
                if value_kind(frame.local_names[node.id]) == "symbolic":
                    return True
    return False


def _holds(node: ast.expr, module: object, frame: CellFrame, context: ErrorContext) -> bool:
    """Whether ``node`` is a name bound to ``module`` where the line runs."""
    if not isinstance(node, ast.Name):
        return False
    found, value = context.lookup(node.id, frame)
    return found and value is module


def _graph_op(name: str, context: ErrorContext) -> str | None:
    """``keras.ops.<name>`` when Keras is loaded and has it, else TensorFlow's function."""
    keras = sys.modules.get("keras")
    ops = sys.modules.get("keras.ops") or (
        getattr(keras, "ops", None) if keras is not None else None
    )
    if ops is not None and callable(vars(ops).get(name)):
        return f"{context.module_alias('keras', 'keras')}.ops.{name}"
    if name in _TENSORFLOW_NAMES and "tensorflow" in sys.modules:
        return f"{context.module_alias('tensorflow', 'tf')}.{_TENSORFLOW_NAMES[name]}"
    return None


# Nodes the value of ``x.numpy()`` may pass through on its way into a NumPy call and stay
# a tensor once ``.numpy()`` is gone: operators work on graph tensors as on arrays.
_OPERATORS = (ast.Compare, ast.BinOp, ast.UnaryOp)


def numpy_calls_as_graph_ops(
    frame: CellFrame, part: ast.AST, parents: dict[int, ast.AST], context: ErrorContext
) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """``np.mean(pred.numpy() == y)`` -> ``keras.ops.mean(pred == y)``: the part with each
    ``.numpy()`` dropped and each NumPy function replaced by its graph op. Dropping
    ``.numpy()`` alone leaves a NumPy function on a symbolic tensor, which fails too. None
    when a ``.numpy()`` value reaches anything but operators and NumPy functions, a NumPy
    function has no graph op, a comparison compares tensors of two dtypes (graph ``==``
    does not convert them) or ``np.argmax``/``np.argmin`` has no axis (NumPy flattens)."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    replacements: list[tuple[ast.AST, str]] = []
    for node in ast.walk(part):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and _holds(func.value, numpy, frame, context):
            if func.attr in ("argmax", "argmin") and not _has_axis(node):
                return None
            graph_op = _graph_op(func.attr, context)
            if graph_op is None:
                return None
            replacements.append((func, graph_op))
        elif isinstance(func, ast.Attribute) and func.attr == "numpy" and not node.args:
            if not _flows_into_numpy(node, parents, numpy, frame, context):
                return None
            tensor = frame.segment(func.value)
            if not tensor:
                return None
            replacements.append((node, tensor))
    functions = tuple(
        dict.fromkeys(
            frame.segment(node) or "" for node, _ in replacements if isinstance(node, ast.Attribute)
        )
    )
    tensors = tuple(
        dict.fromkeys(text for node, text in replacements if isinstance(node, ast.Call))
    )
    if not functions or not tensors:
        return None
    for node in ast.walk(part):
        if isinstance(node, ast.Compare) and _mixed_dtypes(node, frame, context):
            return None
    fixed = rewrite_all(frame, part, replacements)
    return (fixed, tensors, functions) if fixed else None


def _has_axis(call: ast.Call) -> bool:
    return len(call.args) > 1 or any(keyword.arg == "axis" for keyword in call.keywords)


def _flows_into_numpy(
    node: ast.AST,
    parents: dict[int, ast.AST],
    numpy: object,
    frame: CellFrame,
    context: ErrorContext,
) -> bool:
    """Whether the value of ``node`` reaches a NumPy function's argument through operators
    only (``np.mean(x.numpy() == y)``), not through a method or another function."""
    child, parent = node, parents.get(id(node))
    while isinstance(parent, _OPERATORS):
        child, parent = parent, parents.get(id(parent))
    return (
        isinstance(parent, ast.Call)
        and child is not parent.func
        and isinstance(parent.func, ast.Attribute)
        and _holds(parent.func.value, numpy, frame, context)
    )


def _mixed_dtypes(compare: ast.Compare, frame: CellFrame, context: ErrorContext) -> bool:
    """Whether two operands of ``compare`` are tensors of different dtypes (or one's dtype
    cannot be read): graph ``==`` raises on them where NumPy converted."""
    dtypes = set()
    for operand in [compare.left, *compare.comparators]:
        while (
            isinstance(operand, ast.Call)
            and isinstance(operand.func, ast.Attribute)
            and operand.func.attr == "numpy"
        ):
            operand = operand.func.value
        if isinstance(operand, ast.Constant):
            continue
        found, value = context.resolve(operand, frame)
        if not found or value_kind(value) not in ("symbolic", "tensor"):
            return True
        try:
            name = value.dtype.name
        except Exception:
            return True
        if type(name) is not str:
            return True
        dtypes.add(name)
    return len(dtypes) > 1
