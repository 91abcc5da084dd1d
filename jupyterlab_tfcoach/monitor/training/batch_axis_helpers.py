"""A normalisation over axis 0 of a batch, in a loss or a layer's helper method.

A loss function (``def nll(y_true, y_pred)``) and the methods a Keras layer's ``call``
hands its input to (``self.gates(x)``) receive a batch: axis 0 counts the examples. A
``softmax``, ``log_softmax``, ``reduce_logsumexp`` or ``l2_normalize`` over axis 0 of a
value computed from that batch normalises across the examples instead of within each one:
a mixture's log-sum-exp combines examples instead of components, a gate's weights sum to
one over the batch instead of over the experts, and every example's result depends on
the others in its batch. It runs; nothing raises.

After a completed cell, read with ``ast`` (never run): functions the cell defines with two
positional parameters read as a Keras loss's (``y_true``/``y_pred``, or a second one named
``*pred*``/``*logits*``/``*output*``) and used elsewhere in the cell (called, or named),
not given to ``compile`` (``symptoms/compiled_axis.py`` tells those); and the methods other
than ``call`` that a Keras layer class of the cell calls from ``call`` on its input
(``symptoms/layer_axis.py`` reads ``call`` itself). In each, the batch is followed from the
parameters through assignments whose value keeps axis 0 (element-wise arithmetic, the
calls of other functions and layers, ``tf.split``/slices that keep the first axis);
a reduction, a ``transpose``/``reshape``/``einsum``, a matrix product of two batch values
or an integer index ends it. A normalisation whose first argument is such a value and whose
``axis`` is the constant 0 is told, with the call over ``axis=-1``. A softmax over axis 0
of a parameter vector (``tf.nn.softmax(self.mix_logits, axis=0)``) reads no batch value
and stays silent.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "class-axis"
MAX_CELL_CHARS = 50_000
_NORMALISATIONS = frozenset(
    {"softmax", "log_softmax", "reduce_logsumexp", "logsumexp", "l2_normalize"}
)
# Calls whose result no longer has the batch on axis 0 (or may not).
_ENDS_BATCH = frozenset(
    {
        "reduce_mean",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_logsumexp",
        "logsumexp",
        "mean",
        "sum",
        "max",
        "min",
        "transpose",
        "reshape",
        "einsum",
        "matmul",
        "tensordot",
        "shape",
        "argmax",
        "argmin",
        "gather",
        "boolean_mask",
        "len",
        "float",
        "int",
    }
)
_EFFECTS = {
    "softmax": "the weights of each example no longer sum to 1; one unit of probability "
    "is spread over the batch's examples instead",
    "log_softmax": "each example's log-probabilities no longer normalise over its own "
    "entries; the batch's examples share one unit of probability instead",
    "reduce_logsumexp": "it combines the examples of the batch instead of the entries of "
    "each example, so the result is no longer one value per example",
    "logsumexp": "it combines the examples of the batch instead of the entries of each "
    "example, so the result is no longer one value per example",
    "l2_normalize": "each feature is scaled to length 1 over the batch, so no example's "
    "vector has length 1",
}
_LOSS_SECOND = ("pred", "logit", "output", "out")


def _axis_zero(call: ast.Call) -> bool:
    axis: ast.AST | None = next((k.value for k in call.keywords if k.arg == "axis"), None)
    if axis is None and len(call.args) > 1:
        axis = call.args[1]
    return isinstance(axis, ast.Constant) and type(axis.value) is int and axis.value == 0


def _reads(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _keeps_batch(node: ast.AST, batch: set[str]) -> bool:
    """Whether ``node`` is computed from a batch value and keeps its axis 0."""
    if not _reads(node, batch):
        return False
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and call_name(inner) in _ENDS_BATCH:
            return False
        if (
            isinstance(inner, ast.BinOp)
            and isinstance(inner.op, ast.MatMult)
            and _reads(inner.left, batch)
            and _reads(inner.right, batch)
        ):
            return False
        if isinstance(inner, ast.Subscript):
            index = inner.slice
            first = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
            if not isinstance(first, ast.Slice):
                return False
    return True


def _statements(function: ast.FunctionDef) -> list[ast.stmt]:
    """The function's statements in order, not those of functions defined inside it."""
    found: list[ast.stmt] = []
    stack: list[ast.stmt] = list(reversed(function.body))
    while stack:
        statement = stack.pop()
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        found.append(statement)
        for block in ("body", "orelse", "finalbody"):
            stack.extend(reversed(getattr(statement, block, []) or []))
    return found


def _batch_normalisation(function: ast.FunctionDef, roots: set[str]) -> ast.Call | None:
    """The first normalisation over axis 0 of a value computed from ``roots``."""
    batch = set(roots)
    for statement in _statements(function):
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Call)
                and call_name(node) in _NORMALISATIONS
                and node.args
                and _axis_zero(node)
                and _keeps_batch(node.args[0], batch)
            ):
                return node
        if isinstance(statement, ast.Assign) and _keeps_batch(statement.value, batch):
            for target in statement.targets:
                batch.update(
                    n.id
                    for n in ast.walk(target)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                )
    return None


def _loss_like(function: ast.FunctionDef) -> bool:
    parameters = [a.arg for a in function.args.posonlyargs + function.args.args]
    if len(parameters) != 2:
        return False
    second = parameters[1].lower()
    return parameters == ["y_true", "y_pred"] or any(word in second for word in _LOSS_SECOND)


def _used_in_cell(tree: ast.Module, name: str, definition: ast.FunctionDef) -> bool:
    """The name read outside its own definition, and never given to ``compile``."""
    used = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) == "compile":
            if any(_reads(k.value, {name}) for k in node.keywords) or any(
                _reads(a, {name}) for a in node.args
            ):
                return False
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            if not (definition.lineno <= node.lineno <= (definition.end_lineno or 0)):
                used = True
    return used


def _keras_layer_class(node: ast.ClassDef, namespace: Mapping[str, Any]) -> bool:
    for base in node.bases:
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if isinstance(name, str) and name.endswith(("Layer", "Model")):
            return True
    value = namespace.get(node.name)
    try:
        return isinstance(value, type) and any(
            k.__name__ == "Layer" and k.__module__.startswith(("keras", "tf_keras"))
            for k in value.__mro__
        )
    except Exception:
        return False


def _helper_calls(call_method: ast.FunctionDef) -> list[tuple[str, int]]:
    """(method name, index of the argument that is the input) for ``self.m(x)`` in call."""
    parameters = [a.arg for a in call_method.args.args]
    if len(parameters) < 2:
        return []
    batch = _batch_names(call_method, {parameters[1]})
    found: list[tuple[str, int]] = []
    for node in ast.walk(call_method):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == parameters[0]
        ):
            for index, argument in enumerate(node.args):
                if _keeps_batch(argument, batch):
                    found.append((node.func.attr, index))
                    break
    return found


def _batch_names(function: ast.FunctionDef, roots: set[str]) -> set[str]:
    batch = set(roots)
    for statement in _statements(function):
        if isinstance(statement, ast.Assign) and _keeps_batch(statement.value, batch):
            for target in statement.targets:
                batch.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return batch


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """A note for the first normalisation over a batch's axis 0 in a loss or helper."""
    if len(source) > MAX_CELL_CHARS or "def " not in source:
        return []
    if not any(name in source for name in _NORMALISATIONS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and _loss_like(node):
            if not _used_in_cell(tree, node.name, node):
                continue
            parameters = {a.arg for a in node.args.posonlyargs + node.args.args}
            found = _batch_normalisation(node, parameters)
            if found is not None:
                return _note(source, found, f"`{node.name}`", "a loss receives a batch")
        if isinstance(node, ast.ClassDef) and _keras_layer_class(node, namespace):
            methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
            call_method = methods.get("call")
            if call_method is None:
                continue
            for name, index in _helper_calls(call_method):
                helper = methods.get(name)
                if helper is None or name == "call":
                    continue
                parameters = [a.arg for a in helper.args.args]
                if len(parameters) <= index + 1:
                    continue
                found = _batch_normalisation(helper, {parameters[index + 1]})
                if found is not None:
                    where = f"`{node.name}.{name}`, which `{node.name}.call` gives its input"
                    return _note(source, found, where, "Keras calls `call` with a batch")
    return []


def _note(source: str, call: ast.Call, where: str, why: str) -> list[Note]:
    text = ast.get_source_segment(source, call)
    if not text or "\n" in text:
        return []
    name = call_name(call) or "softmax"
    fixed = ast.Call(
        func=call.func,
        args=call.args[:1],
        keywords=[
            *(k for k in call.keywords if k.arg != "axis"),
            ast.keyword(arg="axis", value=ast.Constant(-1)),
        ],
    )
    message = (
        f"`{text}` (line {call.lineno} of this cell, in {where}) works over axis 0, and "
        f"{why}, whose axis 0 counts the examples: {_EFFECTS[name]}, and each example's "
        "result depends on the others in its batch and on the batch size. It runs; "
        f"nothing raises. Within each example is the last axis: `{ast.unparse(fixed)}`."
    )
    return [reports.note(message, SECTION)]
