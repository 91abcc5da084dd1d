"""A NaN loss from a division, in the learner's loss function, by a sum that can be 0.

``rel / tf.reduce_sum(rel, axis=-1, keepdims=True)`` in a helper the loss calls (a target
distribution, a normalised weight, a masked mean ``tf.reduce_sum(err * mask) /
tf.reduce_sum(mask)``): for a row whose values are all 0 (a query with no relevant item, a
sequence all padding, a batch with no positive) the sum is 0, and 0 / 0 is NaN. Nothing
raises; once a batch holds such a row the loss is NaN, and the weights after one step.

Read when a ``fit`` reported a non-finite loss (``run_outcomes.py`` asks), from source only,
nothing run: the loss the model was compiled with, when it is a plain Python function, and
the learner's functions it calls (found in the namespace by name, ``MAX_DEPTH`` calls deep,
``MAX_FUNCTIONS`` in all). A division ``A / D`` (or ``tf.math.divide``/``truediv``) is told
when ``D``, or the expression a name ``D`` was last assigned in that function, is a sum or
count (``reduce_sum``, ``sum``, ``count_nonzero``, through a ``cast``) of values that can all
be exactly 0: its summand, followed through the function's own assignments, holds no
``exp``/``softplus``/``sigmoid``/``softmax`` (always positive) and no ``+ constant``. A
divisor already guarded (``tf.maximum(D, 1.0)``, ``D + eps``, ``clip_by_value``) is not a
sum and stays silent, as ``divide_no_nan`` does. The cause names the function, who calls
it, the line in the function and the fix ``tf.math.divide_no_nan(A, D)`` as written.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    dotted_name,
    function_definition,
    numpy_name,
)

MAX_DEPTH = 3
MAX_FUNCTIONS = 8
_MAX_SOURCE_CHARS = 100_000
_SUMS = frozenset({"reduce_sum", "sum", "count_nonzero"})
_PASS_THROUGH = frozenset({"cast", "astype", "float32", "float64"})
# A sum of these is never exactly 0 (or is meant to be normalised: a softmax).
_POSITIVE = frozenset({"exp", "softplus", "sigmoid", "softmax", "log_softmax"})
_FOLLOW = 4


@dataclass(frozen=True)
class ZeroSumDivision:
    function: str  # the function holding the division
    callers: tuple[str, ...]  # from the compiled loss down to ``function``'s caller
    line: int  # the division's line, counted in the function's definition
    division: str  # ``rel / tf.reduce_sum(...)`` as written
    fix: str | None  # ``tf.math.divide_no_nan(rel, tf.reduce_sum(...))``


def _definition(function: Any) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    if type(function) is not types.FunctionType:
        return None
    return function_definition(function.__code__, _MAX_SOURCE_CHARS)


def _assignments(definition: ast.AST) -> dict[str, ast.expr]:
    """Each name's last plain assignment in the function (``x = ...``)."""
    found: dict[str, ast.expr] = {}
    for node in ast.walk(definition):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                found[target.id] = node.value
    return found


def _unwrapped(node: ast.expr, assigned: dict[str, ast.expr]) -> ast.expr:
    """``D`` without casts and followed through the function's assignments."""
    for _ in range(_FOLLOW):
        if isinstance(node, ast.Name) and node.id in assigned:
            node = assigned[node.id]
        elif isinstance(node, ast.Call) and call_name(node) in _PASS_THROUGH and node.args:
            node = node.args[0]
        else:
            break
    return node


def _can_be_zero(summand: ast.expr, assigned: dict[str, ast.expr]) -> bool:
    """Whether the summed values can all be 0: nothing always positive in them."""
    pending, seen = [summand], set()
    while pending:
        node = pending.pop()
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call) and call_name(inner) in _POSITIVE:
                return False
            if (
                isinstance(inner, ast.BinOp)
                and isinstance(inner.op, ast.Add)
                and (isinstance(inner.right, ast.Constant) or isinstance(inner.left, ast.Constant))
            ):
                return False
            if isinstance(inner, ast.Name) and inner.id in assigned and inner.id not in seen:
                seen.add(inner.id)
                pending.append(assigned[inner.id])
    return True


def _zero_sum(divisor: ast.expr, assigned: dict[str, ast.expr]) -> str | None:
    """``"tf"`` or ``"numpy"`` (the library of the sum) when ``divisor`` is a sum that can
    be 0; None otherwise."""
    node = _unwrapped(divisor, assigned)
    if not (isinstance(node, ast.Call) and call_name(node) in _SUMS):
        return None
    root = dotted_name(node.func)
    library = root.split(".", 1)[0] if root is not None else ""
    if isinstance(node.func, ast.Attribute) and call_name(node) == "sum" and not node.args:
        summand: ast.expr = node.func.value  # ``x.sum(axis=1)``: a NumPy array's method
        library = "numpy"
    elif node.args and library in ("tf", "tensorflow"):
        summand, library = node.args[0], "tf"
    elif node.args and library in ("np", "numpy"):
        summand, library = node.args[0], "numpy"
    else:
        return None
    return library if _can_be_zero(summand, assigned) else None


def _divisions(
    source: str, definition: ast.FunctionDef | ast.AsyncFunctionDef, numpy: str | None
) -> list[tuple[ast.AST, str, str | None, int]]:
    assigned = _assignments(definition)
    found: list[tuple[ast.AST, str, str | None, int]] = []
    for node in ast.walk(definition):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            top, bottom = node.left, node.right
        elif (
            isinstance(node, ast.Call)
            and call_name(node) in ("divide", "truediv")
            and len(node.args) == 2
        ):
            top, bottom = node.args
        else:
            continue
        library = _zero_sum(bottom, assigned)
        if library is None:
            continue
        above = ast.get_source_segment(source, top)
        below = ast.get_source_segment(source, bottom)
        written = ast.get_source_segment(source, node)
        if not (above and below and written) or "\n" in written:
            continue
        if library == "tf":
            fix = f"tf.math.divide_no_nan({above}, {below})"
        elif numpy is not None:
            fix = (
                f"{numpy}.divide({above}, {below}, out={numpy}.zeros_like({above}), "
                f"where={below} != 0)"
            )
        else:
            fix = None
        found.append((node, written, fix, node.lineno - definition.lineno + 1))
    return found


def _called(definition: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(definition):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id not in names:
                names.append(node.func.id)
    return names


def zero_sum_division(loss: Any, namespace: Mapping[str, Any]) -> ZeroSumDivision | None:
    """The first division by a sum that can be 0 in ``loss`` (a learner's function) or the
    functions it calls, breadth first; None when there is none or ``loss`` is not one."""
    read = 0
    queue: list[tuple[Any, str | None, tuple[str, ...]]] = [(loss, None, ())]
    seen: set[int] = set()
    while queue and read < MAX_FUNCTIONS:
        function, name, callers = queue.pop(0)
        if id(function) in seen or len(callers) > MAX_DEPTH:
            continue
        seen.add(id(function))
        found = _definition(function)
        if found is None:
            continue
        read += 1
        source, definition = found
        own = name or definition.name
        divisions = _divisions(source, definition, numpy_name(namespace))
        if divisions:
            _node, written, fix, line = divisions[0]
            return ZeroSumDivision(own, callers, line, written, fix)
        for called in _called(definition):
            if called in namespace:
                queue.append((namespace[called], called, (*callers, own)))
    return None


def where_text(found: ZeroSumDivision) -> str:
    """`` `f` (called by `g`), line 3 of its definition, computes `a / tf.reduce_sum(a)` ``"""
    chain = ""
    if found.callers:
        chain = " (" + ", ".join(f"called by `{c}`" for c in reversed(found.callers)) + ")"
    return (
        f"`{found.function}`{chain}, line {found.line} of its definition, computes "
        f"`{found.division}`"
    )


def cause_text(found: ZeroSumDivision) -> str:
    fix = f". Fix: `{found.fix}`" if found.fix is not None else ""
    return (
        f"the loss function divides by a sum that can be 0: {where_text(found)}; for a row "
        "whose values are all 0 the sum is 0 and 0 / 0 is NaN, so the first batch holding "
        "one makes the loss NaN, and the weights after it. Where the sum is 0, set the "
        f"result to 0{fix}"
    )
