"""A broadcast that turns two vectors into a matrix: ``(N, 1)`` against ``(N,)``.

``pred - y`` with ``pred`` of shape ``(64, 1)`` and ``y`` of shape ``(64,)`` is legal
broadcasting and gives a ``(64, 64)`` matrix: every prediction against every target. A
loss or a metric reduced from it is a wrong number and nothing raises. Found two ways:

- in graphs (``scan_graph``): once per trace, the element-wise binary ops of a graph the
  user's code built (a ``tf.function``, Keras' train step, a ``Dataset.map`` function)
  whose inputs are ``(N, 1)`` and ``(N,)`` (``N`` > 1 or unknown) and whose result has
  rank 2 and flows into a reduction. The op's traceback gives the user's line, whose
  expression names the operands as written. Nothing runs per step.
- in eager code (``cell_notes``): after a cell, its element-wise expressions at the top
  level of the cell (not inside ``def``, ``lambda`` or comprehensions, whose names are
  locals) whose operands are names or attributes, inside a reduction (or assigned to a
  name a reduction reads): the values those names hold after the cell, read as shapes
  only (``errors/failing_line.describe``). The expressions are found once per cell
  source (cached); a cell costs one cached lookup and a few dict reads. A loop-local
  inside a function is gone when the cell ends: that case stays silent unless the
  function is traced (then the graph scan names it).

Comparisons count as element-wise ops: ``np.mean(y <= upper)`` with ``upper`` ``(N, 1)`` is
a coverage over every pair, not over the examples. When the operand inside a function is a
parameter the body never rebinds and the function was called by name from the learner's
own code (a custom loop calling a loss that ``fit`` also uses, with ``(N, 1)`` targets),
the fix is that call with the argument reshaped: rewriting the shared function would break
its other callers.

Look-alikes stay silent: an operand widened on purpose (``a[:, None]``,
``tf.expand_dims``, a reshape of the other operand: pairwise differences), a bias
``(N, 1) + (1,)``, equal shapes, and in graphs a ``(K,)`` vector of the model's own
parameters (``score - thresholds`` in a layer's ``call``, the thresholds built from its
weights: no batch data flows into them), which is every example against every
parameter on purpose.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import linecache
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.axis_origins import AxisOrigin
from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.locations import CellLocator
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.broadcast_origins import (
    OriginQuery,
    follow_operand,
    vector_origin,
)
from jupyterlab_tfcoach.monitor.symptoms.operand_shapes import followable, operand_of
from jupyterlab_tfcoach.monitor.syntax import call_name as _call_name
from jupyterlab_tfcoach.monitor.syntax import (
    child_nodes,
    children,
    function_node,
    held_at,
    parsed_source,
    reference_path,
    source_segment,
)
from jupyterlab_tfcoach.monitor.traces.identity import (
    TENSORFLOW,
    USER,
    library_roots,
    origin_of,
)

SECTION = "broadcasting"
# Graph op type -> the Python operator and the TensorFlow function names that build it.
_GRAPH_OPS: dict[str, tuple[type[ast.AST] | None, frozenset[str]]] = {
    "Sub": (ast.Sub, frozenset({"subtract"})),
    "AddV2": (ast.Add, frozenset({"add"})),
    "Add": (ast.Add, frozenset({"add"})),
    "Mul": (ast.Mult, frozenset({"multiply"})),
    "RealDiv": (ast.Div, frozenset({"divide", "truediv"})),
    "Div": (ast.Div, frozenset({"divide"})),
    "DivNoNan": (None, frozenset({"divide_no_nan"})),
    "SquaredDifference": (None, frozenset({"squared_difference"})),
    "Maximum": (None, frozenset({"maximum"})),
    "Minimum": (None, frozenset({"minimum"})),
    "Equal": (ast.Eq, frozenset({"equal"})),
    "NotEqual": (ast.NotEq, frozenset({"not_equal"})),
    # An ordered comparison reduced by a mean is a rate (a coverage, a hit rate).
    "Less": (ast.Lt, frozenset({"less"})),
    "LessEqual": (ast.LtE, frozenset({"less_equal"})),
    "Greater": (ast.Gt, frozenset({"greater"})),
    "GreaterEqual": (ast.GtE, frozenset({"greater_equal"})),
}
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_OPERATOR_TEXT = {ast.Sub: "-", ast.Add: "+", ast.Mult: "*", ast.Div: "/"}
_CALL_OPS = frozenset(name for _, names in _GRAPH_OPS.values() for name in names)
# Ops a loss or a metric ends in, and the element-wise ops between it and the broadcast.
_REDUCTIONS = frozenset({"Mean", "Sum", "Max", "Min", "Prod", "EuclideanNorm", "All", "Any"})
_PASS_THROUGH = frozenset(
    {"Square", "Abs", "Pow", "Mul", "Sqrt", "Cast", "Neg", "Exp", "Log", "Sigmoid", "Relu"}
)
_PASS_THROUGH |= frozenset(_GRAPH_OPS)
_FOLLOW_DEPTH = 6
MAX_GRAPH_OPS = 20_000
# Python names of reductions (``tf.reduce_mean``, ``np.mean``, ``x.sum()``, Keras losses).
_REDUCE_NAMES = frozenset(
    {
        "reduce_mean",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_all",
        "reduce_any",
        "mean",
        "sum",
        "max",
        "min",
        "norm",
        "count_nonzero",
        "average",
    }
)
_TENSOR_KINDS = frozenset({"tensor", "variable", "keras_variable", "array"})
MAX_CELL_CHARS = 50_000
_CACHE_SIZE = 64
MAX_NOTES = 3


@dataclass(frozen=True)
class Expression:
    """An element-wise expression as the user wrote it, and its operands' sources."""

    text: str  # ``pred - y_flat``
    left: str
    right: str
    # ``text`` with a placeholder for each operand, so either can be rewritten.
    template: str
    line: int
    # The name the expression is assigned to, when a reduction reads it only later.
    target: str | None = None


@dataclass(frozen=True)
class Broadcast:
    """One ``(N, 1)`` against ``(N,)`` found, in the user's names when known."""

    where: str  # "line 7 of this cell", "Cell In[3], line 7 (in `train_step`)"
    expression: Expression | None
    column_index: int  # 0: the left operand is the (N, 1) one
    column_text: str  # "a (64, 1) float32 tensor"
    flat_text: str
    column_shape: tuple[int | None, ...]
    flat_shape: tuple[int | None, ...]
    result_shape: tuple[int | None, ...]
    # What the ``(N, 1)`` operand is ("array" for NumPy, "tensor", ...): its fix keeps it
    # that kind, so the rewritten expression computes what the user's line computed.
    column_kind: str = "tensor"
    # ``(where, call line as written, the line with one argument reshaped, argument,
    # parameter)`` when the operand is a parameter the function was given unchanged by a
    # call the learner wrote: the fix goes there, the shared function stays as it is.
    call_fix: tuple[str, str, str, str, str] | None = None
    # Another operand of the same line with the ``(N, 1)`` shape (``log_var`` beside
    # ``y - mu``) makes the squeezed fix broadcast again; one with ``(N,)``, the widened
    # one (``other_operands``). A fix that would still broadcast is not offered.
    column_elsewhere: str | None = None
    flat_elsewhere: str | None = None
    # Where those operands are: on the broadcasting line, or later in the cell, combined
    # with the name the expression is assigned to (``f[:, 0] >= lo``).
    elsewhere_where: str = "on the same line"
    # Where the ``(N,)`` operand's name was made a vector (``axis_origins.py``): asked for
    # while the graph is scanned (``origin_query``), read after the cell with the namespace.
    origin_query: OriginQuery | None = None
    origin: AxisOrigin | None = None

    def note(self) -> Note:
        return reports.note(broadcast_text(self), SECTION)


def matrix_from_vectors(
    first: tuple[int | None, ...] | None, second: tuple[int | None, ...] | None
) -> int | None:
    """Which operand (0 or 1) is ``(N, 1)`` when the other is ``(N,)``; N > 1 or unknown
    on either side (a batch of None), never 1 (a bias of shape ``(1,)``)."""
    if first is None or second is None:
        return None
    for index, (column, flat) in enumerate(((first, second), (second, first))):
        if len(column) != 2 or column[1] != 1 or len(flat) != 1:
            continue
        rows, length = column[0], flat[0]
        if rows == 1 or length == 1:
            continue
        if rows is None or length is None or rows == length:
            return index
    return None


def _square(column: tuple[int | None, ...], flat: tuple[int | None, ...]) -> tuple[int | None, ...]:
    return (column[0], flat[0])


# ------------------------------------------------------------------ the fix
def _needs_parentheses(source: str) -> bool:
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return True
    return not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))


def _indexed(source: str, index: str) -> str:
    return f"({source}){index}" if _needs_parentheses(source) else f"{source}{index}"


def squeezed_operand(column: str, kind: str) -> str:
    """The ``(N, 1)`` operand as ``(N,)``, the same kind of value: a NumPy array stays one
    (``preds[:, 0]``; ``tf.squeeze`` would turn a NumPy computation into a tensor one),
    a tensor or a variable goes through ``tf.squeeze``."""
    if kind == "array":
        return _indexed(column, "[:, 0]")
    return f"tf.squeeze({column}, axis=-1)"


def fixes(found: Broadcast) -> tuple[str, str] | None:
    """The expression rewritten two ways: the ``(N, 1)`` operand squeezed to ``(N,)``, or
    the ``(N,)`` operand widened to ``(N, 1)``. Both only index or squeeze an operand in
    its own library (``[:, None]`` works on arrays and tensors alike), so each operand
    keeps its kind and the result its type."""
    expression = found.expression
    if expression is None:
        return None
    operands = [expression.left, expression.right]
    column, flat = operands[found.column_index], operands[1 - found.column_index]
    widened = _indexed(flat, "[:, None]")
    squeezed_parts = list(operands)
    squeezed_parts[found.column_index] = squeezed_operand(column, found.column_kind)
    widened_parts = list(operands)
    widened_parts[1 - found.column_index] = widened
    template = expression.template
    return template.format(*squeezed_parts), template.format(*widened_parts)


def broadcast_text(found: Broadcast) -> str:
    """What broadcast, why the number is wrong, the fix; then where the vector was made."""
    said = _broadcast_text(found)
    if found.origin is None:
        return said
    return said + found.origin.sentence(
        show_shape(found.flat_shape),
        show_shape(found.column_shape),
        with_fix=found.flat_elsewhere is None,
    )


def _broadcast_text(found: Broadcast) -> str:
    expression = found.expression
    column_shape, flat_shape = show_shape(found.column_shape), show_shape(found.flat_shape)
    result = show_shape(found.result_shape)
    if expression is None:
        squeeze = "`[:, 0]`" if found.column_kind == "array" else "`tf.squeeze(..., axis=-1)`"
        return (
            f"An element-wise op at {found.where} combines {found.column_text} with "
            f"{found.flat_text}: broadcasting makes the result {result}, every row against "
            "every element, and the loss or metric reduced from it is a wrong number, "
            "without any error. Make both operands the same shape: squeeze the "
            f"{column_shape} one with {squeeze}, or add an axis to the "
            f"{flat_shape} one with `[:, None]`."
        )
    names = [expression.left, expression.right]
    column, flat = names[found.column_index], names[1 - found.column_index]
    if found.call_fix is not None:
        where, line, fixed, argument, parameter = found.call_fix
        return (
            f"`{expression.text}` ({found.where}) broadcasts `{column}`, {found.column_text}, "
            f"against `{flat}`, {found.flat_text}: the result is {result}, every element of "
            f"`{column}` against every element of `{flat}`, so the loss or metric computed "
            f"from it is a wrong number, without any error. The call `{line}` ({where}) "
            f"gives `{argument}` as `{parameter}`: make the shapes agree there, "
            f"`{fixed}`. The function itself stays as it is, so callers that already give "
            "matching shapes (Keras' `fit` gives a loss its targets as (N, 1)) keep working."
        )
    rewritten = fixes(found)
    assert rewritten is not None
    squeezed, widened = rewritten
    kept = f" (kept in `{expression.target}`)" if expression.target else ""
    said = (
        f"`{expression.text}` ({found.where}) broadcasts `{column}`, {found.column_text}, "
        f"against `{flat}`, {found.flat_text}: the result is {result}{kept}, every element of "
        f"`{column}` against every element of `{flat}`, so the loss or metric computed from "
        "it is a wrong number, without any error."
    )
    column_other, flat_other = found.column_elsewhere, found.flat_elsewhere
    if column_other is None and flat_other is None:
        return (
            f"{said} Make the shapes agree: "
            f"`{squeezed}` (both {flat_shape}), or `{widened}` (both {column_shape})."
        )
    if column_other is not None and flat_other is not None:
        return (
            f"{said} {_sentence_start(found.elsewhere_where)} also combines `{column_other}` "
            f"({column_shape}) and `{flat_other}` ({flat_shape}): reshaping one operand here "
            "would leave another "
            f"pair broadcasting. Make every operand of the line one shape, all {flat_shape} "
            f"(squeeze each {column_shape} one) or all {column_shape}."
        )
    if column_other is not None:
        return (
            f"{said} Make the shapes agree: `{widened}` (both {column_shape}); squeezing "
            f"`{column}` alone would not do, as `{column_other}` {found.elsewhere_where} is "
            f"{column_shape} too and would broadcast against the {flat_shape} result."
        )
    return (
        f"{said} Make the shapes agree: `{squeezed}` (both {flat_shape}); widening "
        f"`{flat}` alone would not do, as `{flat_other}` {found.elsewhere_where} is {flat_shape} "
        f"too and would broadcast against the {column_shape} result."
    )


def _sentence_start(where: str) -> str:
    """``The same line`` for ``on the same line``, ``Line 3 of this cell`` for ``on line 3
    of this cell, beside `lo`,``."""
    place = where.removeprefix("on ").split(",")[0]
    return place[:1].upper() + place[1:]


def other_operands(
    line: str, expression: Expression, values: dict[str, Any], rows: int | None
) -> tuple[str | None, str | None]:
    """The names on ``line``, outside ``expression``, holding an ``(N, 1)`` and an ``(N,)``
    value (the first of each, read as shapes only): what a fix of the one pair must also
    change. N is the rows of the pair (None: any)."""
    text = line.strip()
    at = text.find(expression.text)
    if at < 0:
        return None, None
    rest = f"{text[:at]}_{text[at + len(expression.text) :]}"
    try:
        tree = ast.parse(rest.removeprefix("return ").strip() or "_", mode="exec")
    except SyntaxError:
        return None, None
    called = {
        id(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    column: str | None = None
    flat: str | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name) or id(node) in called or node.id == "_":
            continue
        if not isinstance(node.ctx, ast.Load):
            continue
        held = _operand(node.id, values)
        shape = held.shape if held is not None else None
        if not shape or (rows is not None and shape[0] not in (rows, None)):
            continue
        if len(shape) == 2 and shape[1] == 1 and column is None:
            column = node.id
        elif len(shape) == 1 and flat is None:
            flat = node.id
    return column, flat


# ------------------------------------------------------ expressions on a line
def _segment(source: str, node: ast.AST) -> str | None:
    text = source_segment(source, node)
    return text if text and "\n" not in text else None


def _template(source: str, whole: ast.AST, left: ast.AST, right: ast.AST) -> str | None:
    """The expression's text with ``{0}``/``{1}`` in place of its two operands."""
    text = _segment(source, whole)
    first, second = _segment(source, left), _segment(source, right)
    if text is None or first is None or second is None:
        return None
    start = text.find(first)
    if start < 0:
        return None
    end_first = start + len(first)
    second_start = text.find(second, end_first)
    if second_start < 0:
        return None
    escaped = [
        part.replace("{", "{{").replace("}", "}}")
        for part in (
            text[:start],
            text[end_first:second_start],
            text[second_start + len(second) :],
        )
    ]
    return f"{escaped[0]}{{0}}{escaped[1]}{{1}}{escaped[2]}"


def expression_of(source: str, node: ast.AST) -> Expression | None:
    """An element-wise expression (``a - b``, ``tf.subtract(a, b)``, ``a == b``, ``a <= b``)."""
    operands: tuple[ast.AST, ast.AST] | None = None
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATOR_TEXT:
        operands = (node.left, node.right)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        if isinstance(node.ops[0], _COMPARISONS):
            operands = (node.left, node.comparators[0])
    elif isinstance(node, ast.Call) and _call_name(node) in _CALL_OPS and len(node.args) == 2:
        operands = (node.args[0], node.args[1])
    if operands is None:
        return None
    text = _segment(source, node)
    left, right = _segment(source, operands[0]), _segment(source, operands[1])
    template = _template(source, node, *operands)
    if text is None or left is None or right is None or template is None:
        return None
    return Expression(text, left, right, template, getattr(node, "lineno", 0))


def _matches(node: ast.AST, op_type: str) -> bool:
    operator, names = _GRAPH_OPS.get(op_type, (None, frozenset()))
    if isinstance(node, ast.BinOp):
        return operator is not None and isinstance(node.op, operator)
    if isinstance(node, ast.Compare):
        return operator is not None and len(node.ops) == 1 and isinstance(node.ops[0], operator)
    if isinstance(node, ast.Call):
        return _call_name(node) in names
    return False


def _parse_line(line: str) -> tuple[ast.AST, str] | None:
    """A source line parsed on its own: a ``for``/``with``/``if`` header gets a body, a
    ``return`` outside its function is read as its expression."""
    stripped = line.strip()
    for candidate in (stripped, stripped + " pass", stripped.removeprefix("return ")):
        try:
            return ast.parse(candidate), candidate
        except SyntaxError:
            continue
    return None


def expression_on_line(line: str, op_type: str) -> Expression | None:
    """The one expression on ``line`` that builds ``op_type``; None when there is none or
    several (then the operands cannot be named for sure)."""
    parsed = _parse_line(line)
    if parsed is None:
        return None
    tree, source = parsed
    found = [node for node in ast.walk(tree) if _matches(node, op_type)]
    if len(found) != 1:
        return None
    return expression_of(source, found[0])


# -------------------------------------------------------------------- graphs
def _dims(tensor: Any) -> tuple[int | None, ...] | None:
    try:
        dims = tensor.shape.as_list()
    except Exception:
        return None
    return tuple(dims) if type(dims) is list else None


def _dtype(tensor: Any) -> str:
    try:
        name = tensor.dtype.name
    except Exception:
        return ""
    return name if type(name) is str else ""


def _widened_on_purpose(column: Any, flat: Any) -> bool:
    """``a[:, None]``, ``tf.expand_dims(a, -1)``, or a reshape of the other operand
    (``tf.reshape(x, [-1, 1]) - x``): an outer difference meant as one."""
    producer = column.op
    kind = producer.type
    if kind == "ExpandDims":
        return True
    if kind == "StridedSlice":
        try:
            return bool(producer.get_attr("new_axis_mask"))
        except Exception:
            return False
    if kind == "Reshape" and len(producer.inputs) > 0:
        return producer.inputs[0].name == flat.name
    return False


_LINEAGE_OPS = 64


def _parameter_vector(flat: Any, column: Any) -> bool:
    """Whether the ``(K,)`` operand is a vector of the model's own (a layer's weights, or
    values computed from them and constants: thresholds, per-class offsets), not one value
    per example: nothing of the batch flows into it. ``(N, 1)`` against such a vector is
    every example against every parameter, meant (cut points of an ordinal head, a
    per-class bias), unlike two per-example vectors. Read backwards through the ops that
    built it (at most ``_LINEAGE_OPS``), stopping at weight reads: a placeholder (an
    argument, a captured tensor) or a dataset iterator reached is data, and the vector is
    then per example as far as this reading can tell. A constant-only vector counts when
    the batch size is unknown (``(None, 1)``): its fixed length cannot be the batch's."""
    seen: set[str] = set()
    frontier = [flat.op]
    variable = False
    while frontier:
        op = frontier.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if len(seen) > _LINEAGE_OPS:
            return False
        kind = op.type
        if kind in ("ReadVariableOp", "ResourceGather"):
            variable = True  # a weight's value: its handle is not followed
            continue
        if kind == "Placeholder" or "Iterator" in kind or "Optional" in kind:
            # An argument, a captured tensor, or a batch out of fit's dataset iterator.
            return False
        frontier.extend(tensor.op for tensor in op.inputs)
    column_shape = _dims(column)
    return variable or (column_shape is not None and column_shape[0] is None)


def _reduced(op: Any) -> bool:
    """Whether the op's result flows into a reduction (a loss, a metric) through
    element-wise ops."""
    frontier = [op]
    seen: set[str] = set()
    for _ in range(_FOLLOW_DEPTH):
        following = []
        for current in frontier:
            for output in current.outputs:
                for consumer in output.consumers():
                    kind = consumer.type
                    if kind in _REDUCTIONS:
                        return True
                    if kind in _PASS_THROUGH and consumer.name not in seen:
                        seen.add(consumer.name)
                        following.append(consumer)
        if not following:
            return False
        frontier = following[:32]
    return False


def _is_gradient(name: Any) -> bool:
    """Ops of a gradient computation repeat the forward op's shapes: the forward op is
    the one the user wrote."""
    return type(name) is str and (name.startswith("gradients") or "gradient_tape/" in name)


# This package's own files (its hooks appear in tracebacks) are not the user's code.
_OWN_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _user_frame(op: Any, roots: dict[str, str]) -> tuple[str, int, str] | None:
    frames = _user_frames(op, roots)
    return frames[0] if frames else None


def _user_frames(op: Any, roots: dict[str, str]) -> list[tuple[str, int, str]]:
    """The user's frame that built ``op`` (``_first_user_frame``) and, when the frame just
    outside it is the user's too, that caller's frame."""
    try:
        frames = list(op.traceback)
    except Exception:
        return []
    first = _first_user_frame(frames, roots)
    if first is None:
        return []
    index, found = first
    if index > 0:
        outer = frames[index - 1]
        filename = outer.filename
        if (
            type(filename) is str
            and origin_of(filename, roots) == USER
            and "site-packages" not in filename
            and not filename.startswith(("<frozen", _OWN_ROOT))
        ):
            return [found, (filename, int(outer.lineno), str(outer.name))]
    return [found]


def _first_user_frame(
    frames: list[Any], roots: dict[str, str]
) -> tuple[int, tuple[str, int, str]] | None:
    """The user's frame that called TensorFlow to build ``op``: going outwards from the
    op, past TensorFlow's own frames (and this package's hooks), the first frame must be
    the user's. An op another library built (Keras computing a loss, whose traceback also
    passes through the user's ``fit`` line) has that library's frame there: None."""
    for index in range(len(frames) - 1, -1, -1):
        frame = frames[index]
        filename = frame.filename
        if type(filename) is not str:
            return None
        if filename.startswith(_OWN_ROOT) or origin_of(filename, roots) == TENSORFLOW:
            continue
        if origin_of(filename, roots) != USER or "site-packages" in filename:
            return None
        if filename.startswith("<frozen"):
            return None
        return index, (filename, int(frame.lineno), str(frame.name))
    return None


class BroadcastFinder:
    """Collects the broadcasts found during a cell, from graphs and the cell's source."""

    def __init__(self, locator: CellLocator) -> None:
        self._locator = locator
        self._found: dict[tuple[Any, ...], Broadcast] = {}
        self._expressions: dict[str, list[Expression]] = {}
        self.ops_scanned = 0  # for the benchmark
        # (file, line) already told at a call (``call_broadcast.py``): not told again.
        self.already_told: set[tuple[str, int]] = set()

    def begin_cell(self) -> None:
        self._found = {}

    # ---------------------------------------------------------------- graphs
    def scan_concrete(self, concrete_functions: list[Any]) -> None:
        """The new traces of a tf.function (called from the trace registry)."""
        for concrete in concrete_functions:
            try:
                self.scan_graph(concrete.graph)
            except Exception:
                continue

    def scan_graph(self, graph: Any) -> None:
        roots = None
        operations = graph.get_operations()
        self.ops_scanned += min(len(operations), MAX_GRAPH_OPS)
        for op in operations[:MAX_GRAPH_OPS]:
            op_type = op.type
            if op_type not in _GRAPH_OPS or _is_gradient(op.name):
                continue
            inputs = op.inputs
            if len(inputs) != 2:
                continue
            first, second = inputs[0], inputs[1]
            column_index = matrix_from_vectors(_dims(first), _dims(second))
            if column_index is None:
                continue
            column, flat = (first, second) if column_index == 0 else (second, first)
            if _widened_on_purpose(column, flat) or not _reduced(op):
                continue
            if _parameter_vector(flat, column):
                continue
            if roots is None:
                roots = library_roots()
            self._graph_finding(op, op_type, column_index, column, flat, roots)

    def _graph_finding(
        self,
        op: Any,
        op_type: str,
        column_index: int,
        column: Any,
        flat: Any,
        roots: dict[str, str],
    ) -> None:
        frames = _user_frames(op, roots)
        if not frames:
            return  # built by the library itself, not by a line the user wrote
        filename, lineno, function = frames[0]
        key = (filename, lineno, op_type)
        if key in self._found or (filename, lineno) in self.already_told:
            return
        line = linecache.getline(filename, lineno)
        expression = expression_on_line(line, op_type) if line else None
        where = where_in_cells(self._locator, filename, lineno)
        if function not in ("<module>", "<lambda>"):
            where = f"{where}, in `{function}`"
        column_shape, flat_shape = _dims(column), _dims(flat)
        assert column_shape is not None and flat_shape is not None
        self._found[key] = Broadcast(
            where=where,
            expression=expression,
            column_index=column_index,
            column_text=_graph_text(column_shape, _dtype(column)),
            flat_text=_graph_text(flat_shape, _dtype(flat)),
            column_shape=column_shape,
            flat_shape=flat_shape,
            result_shape=_square(column_shape, flat_shape),
            call_fix=(
                self._call_fix(frames[0], frames[1], expression, column_index)
                if expression is not None and len(frames) > 1
                else None
            ),
            origin_query=self._origin_query(op, roots, expression, column_index),
        )

    def _origin_query(
        self, op: Any, roots: dict[str, str], expression: Expression | None, column_index: int
    ) -> OriginQuery | None:
        """Where the ``(N,)`` operand's name came from, through the learner's frames that
        built the op (innermost first); read from syntax only."""
        if expression is None:
            return None
        flat = (expression.left, expression.right)[1 - column_index]
        if not flat.isidentifier():
            return None
        try:
            frames = list(op.traceback)
            first = _first_user_frame(frames, roots)
            if first is None:
                return None
            chain = [
                (str(frame.filename), int(frame.lineno), str(frame.name))
                for frame in reversed(frames[: first[0] + 1])
            ]
            return follow_operand(flat, chain, self._locator.cell_files())
        except Exception:
            return None

    def _call_fix(
        self,
        inner: tuple[str, int, str],
        outer: tuple[str, int, str],
        expression: Expression,
        column_index: int,
    ) -> tuple[str, str, str, str, str] | None:
        try:
            return call_site_fix(self._locator, inner, outer, expression, column_index)
        except Exception:
            return None

    # ----------------------------------------------------------------- eager
    def _cell_expressions(self, source: str) -> list[Expression]:
        found = self._expressions.get(source)
        if found is None:
            found = cell_expressions(source)
            if len(self._expressions) >= _CACHE_SIZE:
                self._expressions.pop(next(iter(self._expressions)))
            self._expressions[source] = found
        return found

    def scan_cell(self, source: str, namespace: dict[str, Any]) -> None:
        """The cell's own element-wise expressions, with the values their names hold now."""
        if not source or len(source) > MAX_CELL_CHARS:
            return
        for expression in self._cell_expressions(source):
            left = _operand(expression.left, namespace)
            right = _operand(expression.right, namespace)
            if left is None or right is None:
                continue
            column_index = matrix_from_vectors(left.shape, right.shape)
            if column_index is None:
                continue
            column, flat = (left, right) if column_index == 0 else (right, left)
            assert column.shape is not None and flat.shape is not None
            key = ("cell", expression.text)
            if key in self._found:
                continue
            self._found[key] = Broadcast(
                where=f"line {expression.line} of this cell",
                expression=expression,
                column_index=column_index,
                column_text=column.description,
                flat_text=flat.description,
                column_shape=column.shape,
                flat_shape=flat.shape,
                result_shape=_square(column.shape, flat.shape),
                column_kind=column.kind,
                origin_query=self._cell_origin(expression, column_index),
            )
            elsewhere: tuple[str | None, str | None] = (None, None)
            lines = source.splitlines()
            if 0 < expression.line <= len(lines):
                elsewhere = other_operands(
                    lines[expression.line - 1], expression, namespace, column.shape[0]
                )
                self._found[key] = dataclasses.replace(
                    self._found[key], column_elsewhere=elsewhere[0], flat_elsewhere=elsewhere[1]
                )
            if expression.target is not None and elsewhere == (None, None):
                later = target_partners(source, expression, namespace, column.shape, flat.shape)
                if later is not None:
                    self._found[key] = dataclasses.replace(
                        self._found[key],
                        column_elsewhere=later[0],
                        flat_elsewhere=later[1],
                        elsewhere_where=later[2],
                    )

    def _cell_origin(self, expression: Expression, column_index: int) -> OriginQuery | None:
        """The ``(N,)`` operand of a top-level expression, as read on its line of the
        running cell (the cell compiled last)."""
        flat = (expression.left, expression.right)[1 - column_index]
        files = self._locator.cell_files()
        if not flat.isidentifier() or not files:
            return None
        running = max(files, key=files.__getitem__)
        return OriginQuery(flat, running, expression.line)

    def take_notes(self, namespace: dict[str, Any] | None = None) -> list[Note]:
        found, self._found = self._found, {}
        told = list(found.values())[:MAX_NOTES]
        if namespace is not None:
            told = [self._with_origin(broadcast, namespace) for broadcast in told]
        return [broadcast.note() for broadcast in told]

    def _with_origin(self, found: Broadcast, namespace: dict[str, Any]) -> Broadcast:
        """The finding with the statement that made its vector, when it can be read."""
        if found.origin_query is None or found.origin is not None:
            return found
        try:
            origin = vector_origin(
                found.origin_query,
                found.flat_shape,
                self._locator.cell_files(),
                lambda filename, line: where_in_cells(self._locator, filename, line),
                namespace,
            )
        except Exception:
            return found
        return dataclasses.replace(found, origin=origin) if origin is not None else found


def _unchanged_parameters(node: ast.FunctionDef) -> list[str]:
    """The function's positional parameters its body never rebinds (``y = ...``): what
    the body reads under such a name is what the call gave."""
    rebound = {
        name.id
        for name in ast.walk(node)
        if isinstance(name, ast.Name) and not isinstance(name.ctx, ast.Load)
    }
    return [arg.arg for arg in node.args.args if arg.arg not in rebound]


def call_site_fix(
    locator: CellLocator,
    inner: tuple[str, int, str],
    outer: tuple[str, int, str],
    expression: Expression,
    column_index: int,
) -> tuple[str, str, str, str, str] | None:
    """The call that gave an operand of a broadcast found inside a function, rewritten with
    that argument reshaped: the ``(N,)`` one widened with ``[:, None]`` (else the
    ``(N, 1)`` one squeezed). None unless an operand is a parameter the body never
    rebinds and the caller's line holds one call of the function by name."""
    filename, lineno, function = inner
    node = function_node(filename, lineno, function)
    if node is None:
        return None
    parameters = [name for name in (arg.arg for arg in node.args.args)]
    unchanged = _unchanged_parameters(node)
    operands = [expression.left, expression.right]
    line = linecache.getline(outer[0], outer[1]).strip()
    parsed = _call_of(line, function)
    if parsed is None:
        return None
    call, offset = parsed
    if parameters and parameters[0] == "self" and isinstance(call.func, ast.Attribute):
        parameters = parameters[1:]
    arguments: dict[str, ast.AST] = dict(zip(parameters, call.args, strict=False))
    arguments.update({kw.arg: kw.value for kw in call.keywords if kw.arg})
    for index, reshape in ((1 - column_index, "[:, None]"), (column_index, "squeeze")):
        parameter = operands[index]
        argument = arguments.get(parameter)
        if parameter not in unchanged or argument is None:
            continue
        start = argument.col_offset - offset
        end = (argument.end_col_offset or 0) - offset
        if start < 0 or end <= start or getattr(argument, "end_lineno", 1) != 1:
            continue
        text = line[start:end]
        new = _indexed(text, "[:, None]") if reshape != "squeeze" else squeezed_operand(text, "")
        fixed = line[:start] + new + line[end:]
        where = where_in_cells(locator, outer[0], outer[1])
        if outer[2] not in ("<module>", "<lambda>"):
            where = f"{where}, in `{outer[2]}`"
        return where, line, fixed, text, parameter
    return None


def _call_of(line: str, name: str) -> tuple[ast.Call, int] | None:
    """The one call of ``name`` on ``line`` and how far its parsed text is shifted from
    the line (a ``return`` read without its keyword)."""
    for candidate, offset in ((line, 0), (line + " pass", 0)):
        try:
            tree = ast.parse(candidate)
        except SyntaxError:
            continue
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _call_name(n) == name]
        return (calls[0], offset) if len(calls) == 1 else None
    return None


def where_in_cells(locator: CellLocator, filename: str, lineno: int) -> str:
    """``line 5 of this cell`` for the running cell, else ``Cell In[3], line 5``."""
    files = locator.cell_files()
    number = files.get(filename)
    if number is not None and number == max(files.values()):
        return f"line {lineno} of this cell"
    return locator.describe(filename, lineno)


def _graph_text(shape: tuple[int | None, ...], dtype: str) -> str:
    words = " ".join(part for part in (show_shape(shape), dtype) if part)
    return f"a {words} tensor"


@functools.lru_cache(maxsize=256)
def _operand_path(source: str) -> tuple[str, ...] | None:
    """``("model", "out")`` for ``model.out``; None for anything but a name or attributes."""
    try:
        return reference_path(ast.parse(source, mode="eval").body)
    except SyntaxError:
        return None


def _operand(source: str, namespace: dict[str, Any]) -> Any | None:
    """What a name or an attribute chain holds (stored values only), described; an
    operand computed on the spot (``tf.cast(measured, tf.float32)``) is followed to the
    names it holds (``operand_shapes.py``)."""
    path = _operand_path(source)
    if path is None:
        return operand_of(source, namespace)
    found, value = held_at(path, namespace)
    if not found:
        return None
    described = describe(source, value)
    if described is None or described.kind not in _TENSOR_KINDS or described.shape is None:
        return None
    return described


# ------------------------------------------------------------ a cell's source
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def cell_expressions(source: str) -> list[Expression]:
    """The cell's top-level element-wise expressions on two names (or attributes, or values
    computed from them without changing the shape) whose result is reduced: inside a
    reduction call, or assigned to a name that one reads."""
    tree = parsed_source(source)
    if tree is None:
        return []
    return expressions_in(source, tree.body, child_nodes(tree))


def _names_under(node: ast.AST, table: Mapping[int, tuple[ast.AST, ...]] | None) -> list[str]:
    """The names read anywhere under ``node`` (``ast.walk``'s, in any order), its nodes'
    children read from ``table`` when the caller holds it: an edited cell's assignments and
    reductions each walked their subtree again."""
    found: list[str] = []
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Name):
            found.append(current.id)
        pending.extend(children(table or {}, current))
    return found


def expressions_in(
    source: str,
    statements: list[ast.stmt],
    table: Mapping[int, tuple[ast.AST, ...]] | None = None,
) -> list[Expression]:
    """``cell_expressions`` for any block of statements of ``source`` (a function's body
    read by ``call_broadcast.py`` as well as a cell's top level). ``table``: the children of
    the nodes of their tree (``syntax.child_nodes``), when the caller holds it."""
    reduced_names: set[str] = set()
    candidates: list[tuple[ast.AST, bool, str | None]] = []
    # target -> the names its assignments read: a name feeding a reduced name is reduced
    # too (``lo = a - b``, ``inside = y >= lo``, ``tf.reduce_mean(inside)``).
    feeds: dict[str, set[str]] = {}

    def visit(node: ast.AST, in_reduction: bool, target: str | None) -> None:
        if isinstance(node, _SCOPES) or isinstance(node, _COMPREHENSIONS):
            return
        if isinstance(node, ast.Assign):
            single = node.targets[0] if len(node.targets) == 1 else None
            target = single.id if isinstance(single, ast.Name) else None
            if target is not None:
                feeds.setdefault(target, set()).update(_names_under(node.value, table))
        if isinstance(node, ast.Call) and _call_name(node) in _REDUCE_NAMES:
            reduced_names.update(_names_under(node, table))
            in_reduction = True
        if isinstance(node, (ast.BinOp, ast.Compare, ast.Call)):
            candidates.append((node, in_reduction, target))
        for child in children(table or {}, node):
            visit(child, in_reduction, target)

    for statement in statements:
        visit(statement, False, None)
    pending = list(reduced_names)
    while pending:
        for name in feeds.get(pending.pop(), ()):
            if name not in reduced_names:
                reduced_names.add(name)
                pending.append(name)
    found: list[Expression] = []
    for node, in_reduction, target in candidates:
        if not (in_reduction or (target is not None and target in reduced_names)):
            continue
        expression = expression_of(source, node)
        if expression is None:
            continue
        operands = _operand_nodes(node)
        if operands is None or not all(followable(operand) for operand in operands):
            continue
        if target is not None and not in_reduction:
            expression = dataclasses.replace(expression, target=target)
        found.append(expression)
    return found


def target_partners(
    source: str,
    expression: Expression,
    namespace: dict[str, Any],
    column_shape: tuple[int | None, ...],
    flat_shape: tuple[int | None, ...],
) -> tuple[str | None, str | None, str] | None:
    """What the name a broadcasting expression is assigned to meets on a later line of
    the cell (``inside = f[:, 0] >= lo``): the first operand combined with it that is
    ``(N, 1)`` and the first that is ``(N,)``, and where. A fix that gives the name the
    other shape would broadcast there again."""
    tree = parsed_source(source)
    target = expression.target
    if tree is None or target is None:
        return None
    column: str | None = None
    flat: str | None = None
    line = 0
    for statement in tree.body:
        if statement.lineno <= expression.line:
            continue
        for node in ast.walk(statement):
            operands = _operand_nodes(node) if isinstance(node, (ast.BinOp, ast.Compare)) else None
            if operands is None:
                continue
            for mine, other in (operands, operands[::-1]):
                if not (isinstance(mine, ast.Name) and mine.id == target):
                    continue
                text = _segment(source, other)
                held = _operand(text, namespace) if text and followable(other) else None
                if held is None:
                    continue
                if held.shape == column_shape and column is None:
                    column, line = text, line or statement.lineno
                elif held.shape == flat_shape and flat is None:
                    flat, line = text, line or statement.lineno
    if column is None and flat is None:
        return None
    return column, flat, f"on line {line} of this cell, beside `{target}`,"


def _operand_nodes(node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    if isinstance(node, ast.BinOp):
        return node.left, node.right
    if isinstance(node, ast.Compare):
        return node.left, node.comparators[0]
    if isinstance(node, ast.Call) and len(node.args) == 2:
        return node.args[0], node.args[1]
    return None
