"""A cross-entropy whose distributions are normalised over one axis and summed over another.

``p = tf.nn.softmax(a, axis=0)`` and ``logq = tf.nn.log_softmax(b, axis=0)``, then
``tf.reduce_sum(p * logq, axis=-1)``: for a ``(lists, items)`` input the softmaxes make one
distribution per item slot across the lists, while the sum adds up the items of one list.
The result is a number of the right shape and nothing raises, but it is no cross-entropy:
an expectation under a distribution sums over the axis that distribution is normalised
on. (For a 1-D input the two axes are the same one: silent.)

After a completed cell whose text holds ``softmax`` and a sum (one substring test
otherwise), each scope (the cell's top level and every ``def``) is read from its source:
names bound to a softmax (``tf.nn.softmax``, ``tf.math.softmax``, ``keras.ops.softmax``,
``keras.activations.softmax``) and names bound to a log-probability (``log_softmax``, or
``tf.math.log``/``keras.ops.log`` of a softmax name or call), each with its written axis
(the default is the last); then a ``tf.reduce_sum``/``keras.ops.sum`` of a product of one
of each whose written axis is another. The rank comes from the values: the names the
softmax's input reads, looked up in the namespace at the top level, and for a function
through its calls in the cell (``listnet(rel_tr, scores, mask_tr)``: the parameter gets the
argument's value); unknown rank, or rank 1: silent. A product of a softmax with anything
else (``p * weights`` summed over the examples, soft class counts) is never read.

The fix moves the axis that is the examples' axis 0 to the other one: the softmaxes when
they normalise over axis 0 (``axis=-1`` like the sum), the sum when it adds over axis 0;
neither on axis 0: the note, no fix.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.unit_axis_ops import held_shape
from jupyterlab_tfcoach.monitor.syntax import (
    dotted_name,
    function_scopes,
    int_literal,
    parsed_source,
    scope_nodes,
    source_segment,
)

SECTION = "class-axis"
MAX_NOTES = 2
_SOFTMAX_MODULES = frozenset(
    {"tf.nn", "tf.math", "tf", "keras.ops", "ops", "keras.activations", "tf.keras.activations"}
)
_LOG_MODULES = frozenset({"tf.math", "tf", "keras.ops", "ops", "np", "numpy"})
_SUM_NAMES = {
    "tf.reduce_sum": 1,
    "tf.math.reduce_sum": 1,
    "keras.ops.sum": 1,
    "ops.sum": 1,
}


@dataclass(frozen=True)
class _Distribution:
    kind: str  # "prob" or "logprob"
    axis: int
    axis_node: ast.AST | None  # the written axis, None for the default
    call: ast.Call  # the softmax call
    statement: ast.stmt | None  # ``name = softmax(...)``, for the fix


def _softmax(node: ast.AST) -> tuple[str, int, ast.AST | None, ast.Call] | None:
    """("prob"/"logprob", axis, the axis node, the call) for a softmax or log-softmax call
    with a literal axis (or none: the last)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    operation = node.func.attr
    if operation not in ("softmax", "log_softmax"):
        return None
    if dotted_name(node.func.value) not in _SOFTMAX_MODULES or not node.args:
        return None
    axis_node: ast.AST | None = node.args[1] if len(node.args) > 1 else None
    for keyword in node.keywords:
        if keyword.arg in ("axis", "dim"):
            axis_node = keyword.value
    axis = -1 if axis_node is None else int_literal(axis_node)  # type: ignore[arg-type]
    if axis is None:
        return None
    return ("prob" if operation == "softmax" else "logprob"), axis, axis_node, node


def _distributions(nodes: list[ast.AST]) -> dict[str, _Distribution]:
    """The scope's names bound to a softmax, a log-softmax or the log of a softmax."""
    found: dict[str, _Distribution] = {}
    for node in nodes:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        name = node.targets[0].id
        read = _read_distribution(node.value, found)
        if read is not None:
            kind, axis, axis_node, call = read
            found[name] = _Distribution(kind, axis, axis_node, call, node)
        else:
            found.pop(name, None)
    return found


def _read_distribution(
    node: ast.AST, known: Mapping[str, _Distribution]
) -> tuple[str, int, ast.AST | None, ast.Call] | None:
    direct = _softmax(node)
    if direct is not None:
        return direct
    # ``tf.math.log(p)`` of a softmax: a log-probability over the same axis.
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "log"
        and dotted_name(node.func.value) in _LOG_MODULES
        and len(node.args) == 1
    ):
        inner = node.args[0]
        if isinstance(inner, ast.BinOp):  # ``log(p + 1e-9)``
            inner = inner.left
        if isinstance(inner, ast.Name) and inner.id in known and known[inner.id].kind == "prob":
            held = known[inner.id]
            return "logprob", held.axis, held.axis_node, held.call
        softmax = _softmax(inner)
        if softmax is not None and softmax[0] == "prob":
            return "logprob", softmax[1], softmax[2], softmax[3]
    return None


def _factor(node: ast.AST, known: Mapping[str, _Distribution]) -> _Distribution | None:
    if isinstance(node, ast.Name):
        return known.get(node.id)
    read = _read_distribution(node, known)
    if read is None:
        return None
    kind, axis, axis_node, call = read
    return _Distribution(kind, axis, axis_node, call, None)


def _summed_pair(
    call: ast.Call, known: Mapping[str, _Distribution]
) -> tuple[int, ast.AST, _Distribution, _Distribution] | None:
    """(the sum's axis, its node, the probabilities, the log-probabilities) for
    ``reduce_sum(p * logq, axis=k)``."""
    if dotted_name(call.func) not in _SUM_NAMES or not call.args:
        return None
    axis_node: ast.AST | None = call.args[1] if len(call.args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg == "axis":
            axis_node = keyword.value
    axis = int_literal(axis_node) if isinstance(axis_node, ast.expr) else None
    if axis is None or axis_node is None:
        return None
    product = call.args[0]
    if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
        return None
    left, right = _factor(product.left, known), _factor(product.right, known)
    if left is None or right is None or {left.kind, right.kind} != {"prob", "logprob"}:
        return None
    if left.axis != right.axis:
        return None
    prob, logprob = (left, right) if left.kind == "prob" else (right, left)
    return axis, axis_node, prob, logprob


def _read_names(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


def _parameter_values(
    function: ast.AST, tree: ast.Module, namespace: Mapping[str, Any]
) -> dict[str, tuple[str, tuple[int | None, ...]]]:
    """A function's parameters -> (the argument as written, the shape it holds), from its
    first call in the cell's top level whose arguments are names the namespace holds."""
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return {}
    parameters = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    values: dict[str, tuple[str, tuple[int | None, ...]]] = {}
    for statement in tree.body:
        for node in ast.walk(statement):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == function.name
            ):
                continue
            given = list(zip(parameters, node.args, strict=False))
            given += [(k.arg, k.value) for k in node.keywords if k.arg in parameters]
            for parameter, argument in given:
                if isinstance(argument, ast.Name) and argument.id in namespace:
                    shape = held_shape(namespace[argument.id])
                    if shape is not None and parameter not in values:
                        values[parameter] = (argument.id, shape)
            if values:
                return values
    return values


def _input_shape(
    call: ast.Call,
    scope: ast.AST,
    parameters: Mapping[str, tuple[str, tuple[int | None, ...]]],
    namespace: Mapping[str, Any],
) -> tuple[str, tuple[int | None, ...]] | None:
    """The value of highest rank among the names the softmax's input reads: a parameter
    through its call, else a name of the namespace (the cell's top level, or a global)."""
    best: tuple[str, tuple[int | None, ...]] | None = None
    names: list[str] = []
    for name in _read_names(call.args[0]):
        if name in parameters:
            held: tuple[str, tuple[int | None, ...]] | None = parameters[name]
        elif isinstance(scope, ast.Module) and name in namespace:
            shape = held_shape(namespace[name])
            held = (name, shape) if shape is not None else None
        else:
            held = None
        if held is None or (best is not None and len(held[1]) < len(best[1])):
            continue
        if best is None or len(held[1]) > len(best[1]):
            best, names = held, []
        if held[0] not in names:
            names.append(held[0])
    if best is None:
        return None
    # Every value of that rank the input reads, as the learner wrote them.
    return " and ".join(f"`{name}`" for name in names[:3]), best[1]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "softmax" not in source or "sum(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    for scope in function_scopes(tree):
        nodes = scope_nodes(scope)
        known = _distributions(nodes)
        if not known:
            continue
        parameters = _parameter_values(scope, tree, namespace)
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            pair = _summed_pair(node, known)
            if pair is None:
                continue
            note = _note(source, scope, node, pair, parameters, namespace)
            if note is not None:
                found.append(note)
                break
        if len(found) >= MAX_NOTES:
            break
    return found


def _shown(shape: tuple[int | None, ...]) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ")"


def _with_axis(source: str, statement: ast.stmt | None, call: ast.Call, axis: str) -> str | None:
    """``name = softmax(x, axis=0)`` written with ``axis`` (the keyword added when the call
    gave none); None for a statement over several lines."""
    if statement is None or statement.lineno != statement.end_lineno:
        return None
    text = source_segment(source, statement)
    if text is None:
        return None
    axis_node: ast.AST | None = call.args[1] if len(call.args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg in ("axis", "dim"):
            axis_node = keyword.value
    base = statement.col_offset
    encoded = text.encode()
    if axis_node is not None:
        start, end = axis_node.col_offset - base, axis_node.end_col_offset - base  # type: ignore[attr-defined,operator]
        return (encoded[:start] + axis.encode() + encoded[end:]).decode()
    end = call.end_col_offset - base - 1  # type: ignore[operator]
    return (encoded[:end] + f", axis={axis}".encode() + encoded[end:]).decode()


def _note(
    source: str,
    scope: ast.AST,
    summed: ast.Call,
    pair: tuple[int, ast.AST, _Distribution, _Distribution],
    parameters: Mapping[str, tuple[str, tuple[int | None, ...]]],
    namespace: Mapping[str, Any],
) -> Note | None:
    axis, axis_node, prob, logprob = pair
    held = _input_shape(prob.call, scope, parameters, namespace) or _input_shape(
        logprob.call, scope, parameters, namespace
    )
    if held is None:
        return None
    name, shape = held
    rank = len(shape)
    if rank < 2 or not (-rank <= axis < rank and -rank <= prob.axis < rank):
        return None
    normalised, summed_axis = prob.axis % rank, axis % rank
    if normalised == summed_axis:
        return None
    written_sum = source_segment(source, summed)
    written_prob = source_segment(source, prob.statement or prob.call)
    written_log = source_segment(source, logprob.statement or logprob.call)
    if not written_sum or not written_prob or not written_log:
        return None
    where = (
        f" in `{scope.name}`" if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) else ""
    )
    given = f"{name} {_shown(shape)}" + (
        f", given to `{scope.name}`" if isinstance(scope, ast.FunctionDef) else ""
    )
    sizes = f"axis {normalised} has {shape[normalised]}, axis {summed_axis} {shape[summed_axis]}"
    text = (
        f"`{written_sum}` (line {summed.lineno}{where}) adds up over axis "
        f"{source_segment(source, axis_node)}, but `{written_prob}` (line "
        f"{(prob.statement or prob.call).lineno}) and `{written_log}` (line "
        f"{(logprob.statement or logprob.call).lineno}) normalise over axis {prob.axis}: "
        f"the input reads {given} ({sizes}). A cross-entropy sums each distribution over the "
        f"axis it is normalised on; here each distribution runs across axis {normalised} "
        f"while the sum runs across axis {summed_axis}, so the result mixes entries of "
        "different distributions and is no cross-entropy (nothing raises: its shape is "
        "right)."
    )
    fixes: list[str] = []
    if normalised == 0:
        new_axis = source_segment(source, axis_node) or str(axis)
        for distribution in (prob, logprob):
            if distribution.statement is None:
                return reports.note(text, SECTION)
            fixed = _with_axis(source, distribution.statement, distribution.call, new_axis)
            if fixed is None or fixed in fixes:
                return reports.note(text, SECTION)
            fixes.append(fixed)
        text += (
            " Normalise over the axis the sum adds up, so that each of the "
            f"{shape[0]} rows along axis 0 is a distribution of its own: "
            + "; ".join(f"`{fixed}`" for fixed in fixes)
            + "."
        )
    elif summed_axis == 0:
        statement = _statement_of(scope, summed)
        fixed = (
            _with_axis(source, statement, summed, str(prob.axis)) if statement is not None else None
        )
        if fixed is not None:
            text += f" Sum over the axis the distributions are normalised on: `{fixed}`."
    return reports.note(text, SECTION)


def _statement_of(scope: ast.AST, node: ast.AST) -> ast.stmt | None:
    for statement in ast.walk(scope):
        if isinstance(statement, ast.stmt) and not isinstance(
            statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module
        ):
            if any(child is node for child in ast.walk(statement)) and not any(
                isinstance(inner, ast.stmt) and inner is not statement
                for inner in ast.walk(statement)
            ):
                return statement
    return None
