"""A clip whose bounds are built from the clipped value itself: it changes nothing.

``tf.clip_by_value(x_adv, x_adv - eps, x_adv + eps)`` keeps each value within ``eps`` of
itself, which every value already is: the clip is a no-op. The learner meant to keep the
value near a reference it started from (a projection: the input before the attack, the
weights before the step, the previous iterate), so the quantity that should stay within
``eps`` grows without bound, and every figure computed from it describes a larger change
than the one announced. Nothing raises.

After a completed cell holding ``clip``, its calls of ``clip_by_value``/``clip`` (TensorFlow,
NumPy, ``keras.ops``) are read with ``ast``: told when both bounds are the clipped
expression (the same text) plus or minus something. The reference for the fix is the one
name the code started the clipped name from in the same function or cell (``x_adv = x +
noise`` gives ``x``); with none, the note says to keep the starting value under its own
name and clip around it, with no code.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "tensors-immutable"
MAX_CELL_CHARS = 50_000
_CLIPS = frozenset({"clip_by_value", "clip"})


def _offset_of(bound: ast.AST, clipped: str) -> tuple[str, ast.AST] | None:
    """``("-", eps)`` for a bound written ``<clipped> - eps`` (``eps + <clipped>`` too)."""
    if not isinstance(bound, ast.BinOp) or not isinstance(bound.op, ast.Add | ast.Sub):
        return None
    sign = "+" if isinstance(bound.op, ast.Add) else "-"
    if ast.dump(bound.left) == clipped:
        return sign, bound.right
    if sign == "+" and ast.dump(bound.right) == clipped:
        return sign, bound.left
    return None


def _self_bounded(call: ast.Call) -> tuple[ast.AST, ast.AST, ast.AST] | None:
    """(the clipped value, the lower offset, the upper offset) of a self-bounded clip."""
    if call_name(call) not in _CLIPS or len(call.args) < 3:
        return None
    value, low, high = call.args[:3]
    if isinstance(value, ast.Constant):
        return None
    clipped = ast.dump(value)
    lower, upper = _offset_of(low, clipped), _offset_of(high, clipped)
    if lower is None or upper is None or lower[0] != "-" or upper[0] != "+":
        return None
    return value, lower[1], upper[1]


def _scopes(tree: ast.Module) -> list[ast.AST]:
    return [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a cell or function, not those of functions defined inside it."""
    found: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _reference(nodes: list[ast.AST], name: str, before: int) -> str | None:
    """The one other name the first assignment of ``name`` started it from:
    ``x_adv = x + noise``, ``x_adv = tf.identity(x)``, ``x_adv = x.copy()``, ``x_adv = x``."""
    assignments = sorted(
        (
            n
            for n in nodes
            if isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id == name
            and n.lineno < before
        ),
        key=lambda n: n.lineno,
    )
    if not assignments:
        return None
    value = assignments[0].value
    if isinstance(value, ast.Call) and call_name(value) in ("identity", "copy", "Variable"):
        if value.args:
            value = value.args[0]
        elif isinstance(value.func, ast.Attribute):  # ``anchor.copy()``
            value = value.func.value
    if isinstance(value, ast.Name):
        return value.id if value.id != name else None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add | ast.Sub):
        if isinstance(value.left, ast.Name) and value.left.id != name:
            return value.left.id
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """A note for the first self-bounded clip of the cell, if any."""
    if len(source) > MAX_CELL_CHARS or "clip" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for scope in _scopes(tree):
        nodes = _own_nodes(scope)
        for call in nodes:
            if not isinstance(call, ast.Call):
                continue
            found = _self_bounded(call)
            if found is None:
                continue
            note = _note(source, scope, nodes, call, *found)
            if note is not None:
                return [note]
    return []


def _note(
    source: str,
    scope: ast.AST,
    nodes: list[ast.AST],
    call: ast.Call,
    value: ast.AST,
    low: ast.AST,
    high: ast.AST,
) -> Note | None:
    text = ast.get_source_segment(source, call)
    clipped = ast.get_source_segment(source, value)
    low_text = ast.get_source_segment(source, low)
    high_text = ast.get_source_segment(source, high)
    if not text or not clipped or not low_text or not high_text or "\n" in text:
        return None
    where = f"line {call.lineno} of this cell"
    if isinstance(scope, ast.FunctionDef):
        where += f", in `{scope.name}`"
    head = (
        f"`{text}` ({where}) keeps `{clipped}` between `{clipped} - {low_text}` and "
        f"`{clipped} + {high_text}`: bounds built from the clipped value itself, which every "
        "value already lies within, so the clip changes nothing and whatever should stay "
        f"within `{high_text}` of where it started is never held there. Nothing raises."
    )
    reference = _reference(nodes, clipped, call.lineno) if isinstance(value, ast.Name) else None
    if reference is None:
        return reports.note(
            head + " Keep the value it must stay near under its own name before it changes "
            "(a tensor is a value: rebinding the name loses the old one) and clip around that.",
            SECTION,
        )
    bounds = call.args[1:3]
    if any(bound.lineno != call.lineno for bound in bounds):
        return None
    raw = text.encode("utf-8")
    for bound, offset in ((bounds[1], high_text), (bounds[0], low_text)):
        start = bound.col_offset - call.col_offset
        end = (bound.end_col_offset or 0) - call.col_offset
        sign = "+" if bound is bounds[1] else "-"
        raw = raw[:start] + f"{reference} {sign} {offset}".encode() + raw[end:]
    fixed = raw.decode("utf-8")
    return reports.note(
        head + f" `{clipped}` started from `{reference}`; clip around it: `{fixed}`.", SECTION
    )
