"""A per-example operation over axis 0 inside a loss or metric function given to ``compile``.

Keras calls a loss or metric function with a batch: ``y_true`` and ``y_pred`` are
``(batch, ...)``, so axis 0 counts the batch's examples. ``tf.argmax(y_pred)`` (TensorFlow's
default axis is 0), ``tf.nn.softmax(z, axis=0)`` or ``tf.math.l2_normalize(e, 0)`` there
work across the examples of the batch: the "class" of each example becomes, for each class,
the example with the highest score, and a softmax spreads one unit of probability over
the batch. The metric or loss runs and reports numbers that mean something else; nothing
raises.

After a completed cell holding ``compile`` and ``loss``/``metrics`` (substring tests
otherwise): each top-level ``m.compile(loss=f, metrics=[g, ...])`` whose ``f``/``g`` (a name,
or the values of a list or dict) is a plain function of the learner's, read from its
cell's source (``squashed_logits._helper_tree``). In its body: a call of ``argmax``,
``argmin``, ``softmax``, ``log_softmax`` or ``l2_normalize`` whose axis is the constant 0
(keyword or second argument) or, for TensorFlow's ``argmax``/``argmin``, left out, and
whose operand uses one of the function's parameters. The note names the function, the call
and the parameter; the fix is the call over the last axis.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.squashed_logits import _helper_tree
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, scope_nodes

SECTION = "class-axis"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
# The operations meant within each example, that work across the batch over axis 0 (also
# read by ``layer_axis.py``, with ``normalize`` added).
PER_EXAMPLE = frozenset({"argmax", "argmin", "softmax", "log_softmax", "l2_normalize"})
# TensorFlow's own argmax/argmin reduce axis 0 when no axis is given.
_DEFAULT_ZERO = frozenset({"argmax", "argmin"})
_TENSORFLOW = ("tf", "tensorflow")


def _functions(call: ast.Call) -> list[tuple[str, str]]:
    """(the name given, "loss" or "metric") for each name ``compile`` is given."""
    found: list[tuple[str, str]] = []
    for keyword in call.keywords:
        if keyword.arg not in ("loss", "metrics"):
            continue
        role = "loss" if keyword.arg == "loss" else "metric"
        value = keyword.value
        items: list[ast.expr] = [value]
        if isinstance(value, (ast.List, ast.Tuple)):
            items = list(value.elts)
        elif isinstance(value, ast.Dict):
            items = [v for v in value.values if v is not None]
        for item in items:
            if isinstance(item, ast.Name):
                found.append((item.id, role))
    return found


def _axis(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "axis":
            return keyword.value
    return call.args[1] if len(call.args) > 1 else None


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def over_examples(call: ast.Call, operations: frozenset[str] = PER_EXAMPLE) -> bool:
    """Whether a call of one of ``operations`` works over axis 0: written, or TensorFlow's
    default."""
    name = call_name(call)
    if name not in operations or not call.args:
        return False
    axis = _axis(call)
    if axis is None:
        return name in _DEFAULT_ZERO and _root(call.func) in _TENSORFLOW
    return isinstance(axis, ast.Constant) and axis.value == 0 and type(axis.value) is int


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or "compile" not in source:
        return []
    if "loss" not in source and "metrics" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    told: list[Note] = []
    seen: set[str] = set()
    for node in scope_nodes(tree):
        if not (isinstance(node, ast.Call) and call_name(node) == "compile"):
            continue
        for name, role in _functions(node):
            if name in seen:
                continue
            seen.add(name)
            function = _helper_tree(namespace.get(name))
            if function is None:
                continue
            text = _told(function, name, role, node)
            if text is not None:
                told.append(reports.note(text, SECTION))
            if len(told) >= MAX_NOTES:
                return told
    return told


def _told(function: ast.FunctionDef, name: str, role: str, compile_call: ast.Call) -> str | None:
    parameters = [a.arg for a in function.args.args]
    found: list[tuple[ast.Call, str]] = []
    for node in scope_nodes(function):
        if not (isinstance(node, ast.Call) and over_examples(node)):
            continue
        used = [
            n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name) and n.id in parameters
        ]
        if used:
            found.append((node, used[0]))
    if not found:
        return None
    first, parameter = found[0]
    operation = call_name(first)
    default = "" if _axis(first) is not None else " (TensorFlow's default axis is 0)"
    line = first.lineno - function.lineno + 1
    where = ast.unparse(compile_call.func)
    also = ""
    if len(found) > 1:
        others = ", ".join(f"`{ast.unparse(node)}`" for node, _ in found[1:])
        also = f" So does {others}."
    fixes = ", ".join(f"`{_fixed(node)}`" for node, _ in found)
    return (
        f"`{ast.unparse(first)}` (line {line} of `{name}`){default} works over axis 0 of "
        f"`{parameter}`.{also} `{name}` is given to `{where}` as a {role}: Keras calls it "
        f"with a batch, so axis 0 counts the batch's examples, and the {operation} runs "
        "across the examples instead of within each one (for each class, the example that "
        f"scores highest; a distribution spread over the batch). The {role} runs and means "
        "something else, and its value changes with the batch size. Nothing raises. Within "
        f"each example is the last axis: {fixes}."
    )


def _fixed(node: ast.Call) -> str:
    """The call over the last axis."""
    fixed = ast.Call(
        func=node.func,
        args=node.args[:1],
        keywords=[
            *(k for k in node.keywords if k.arg != "axis"),
            ast.keyword(arg="axis", value=ast.Constant(-1)),
        ],
    )
    return ast.unparse(fixed)
