"""``+`` between two NumPy arrays written to join them as ``+`` joins two lists (issue #25).

A learner who kept folds, chunks or batches in a list writes "every part but the i-th" as
``parts[:i] + parts[i + 1:]``. Once ``parts`` is one NumPy array (``order.reshape(k,
-1)``, ``np.stack``), the same line adds the two slices entry by entry: NumPy raises
``operands could not be broadcast together with shapes (0,160) (2,160)`` where their
numbers of rows differ, and where they agree the line runs and sums the rows, silently.
The same holds for ``np.concatenate(a + b)``: the ``+`` runs first, as arithmetic.

Read from the failing line, with the shapes of NumPy's message: a ``+`` whose two sides
differ only along their first axis and that is written to join, either

- as the sequence given to a joining call (``np.concatenate``, ``np.hstack``,
  ``np.vstack``, ``tf.concat``), both sides NumPy arrays of the message's shapes; or
- as the two parts of one array around a cut, ``a[:u] + a[l:]`` with ``l >= u`` (their
  bounds read from the frame): the parts a list's ``+`` would put back together. (An
  overlapping pair, ``a[:-1] + a[1:]``, is arithmetic on neighbours: not this family.)

The fix keeps what the line means for lists. Inside a joining call it unpacks each
array's rows into one list (``[*a, *b]``: iterating over an array gives its rows, as
iterating over the list of parts gave the parts), or, for vectors, lists the two arrays
(``[a, b]``: their entries are numbers, which the call would refuse to join). Outside one,
it joins the parts with ``np.concatenate([a, b])``. Every case says the silent twin:
where both parts have as many rows, ``+`` gives a sum and no error.
"""

from __future__ import annotations

import ast
import re
import sys
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
)

SECTION = "joining-indexing"
_NUMPY_BROADCAST = re.compile(
    r"^operands could not be broadcast together with shapes "
    r"\((?P<a>[\d,]*)\) \((?P<b>[\d,]*)\)\s*$"
)
# Calls that take a sequence of arrays to join: what a ``+`` given to them was meant as.
_JOINING_CALLS = frozenset({"concatenate", "hstack", "vstack", "row_stack", "concat"})
_JOINING_MODULES = ("numpy", "tensorflow")
# How deep a slice bound is evaluated (``i + 1``, ``k - 1``): a bound on the work.
_MAX_BOUND_DEPTH = 4


def _shape(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        return None


def _ndarray(value: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and type(value) is numpy.ndarray


def _bound(node: ast.expr | None, line: FailingLine, context: ErrorContext, depth: int = 0) -> Any:
    """A slice bound's integer value: a constant, a name the frame holds an int for, or
    ``+``/``-`` of those; ``None`` for no bound; ``...`` when it cannot be read."""
    if node is None:
        return None
    if depth > _MAX_BOUND_DEPTH:
        return ...
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else ...
    if isinstance(node, ast.Name):
        found, value = context.lookup(node.id, line.frame)
        return value if found and type(value) is int else ...
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _bound(node.operand, line, context, depth + 1)
        return -inner if type(inner) is int else ...
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left = _bound(node.left, line, context, depth + 1)
        right = _bound(node.right, line, context, depth + 1)
        if type(left) is not int or type(right) is not int:
            return ...
        return left + right if isinstance(node.op, ast.Add) else left - right
    return ...


def _position(bound: Any, size: int, default: int) -> int:
    if bound is None:
        return default
    return max(0, min(size, bound + size if bound < 0 else bound))


def _cut_parts(
    node: ast.BinOp, line: FailingLine, context: ErrorContext, shapes: tuple[tuple[int, ...], ...]
) -> str | None:
    """``a[:u] + a[l:]`` with ``l >= u``: the two parts of one array around a cut, of the
    message's shapes. The array's name (its source), else None."""
    left, right = node.left, node.right
    if not (isinstance(left, ast.Subscript) and isinstance(right, ast.Subscript)):
        return None
    if not (isinstance(left.slice, ast.Slice) and isinstance(right.slice, ast.Slice)):
        return None
    if left.slice.step is not None or right.slice.step is not None:
        return None
    base = line.frame.segment(left.value)
    if not base or base != line.frame.segment(right.value) or "\n" in base:
        return None
    whole = operand_of(left.value, line, context)
    if whole is None or not _ndarray(whole.value) or whole.shape is None:
        return None
    size = whole.shape[0]
    if type(size) is not int or tuple(whole.shape[1:]) != shapes[0][1:]:
        return None
    bounds = [
        _bound(part, line, context)
        for part in (left.slice.lower, left.slice.upper, right.slice.lower, right.slice.upper)
    ]
    if any(bound is ... for bound in bounds):
        return None
    start = _position(bounds[0], size, 0)
    cut = _position(bounds[1], size, size)
    resume = _position(bounds[2], size, 0)
    end = _position(bounds[3], size, size)
    if start != 0 or end != size or resume < cut:
        return None  # not the pieces around a cut: arithmetic on overlapping parts
    if (cut, size - resume) != (shapes[0][0], shapes[1][0]):
        return None
    return base


def _joining_call(node: ast.BinOp, line: FailingLine, context: ErrorContext) -> ast.Call | None:
    """The ``np.concatenate(...)`` (or kin) whose first argument is ``node``."""
    statement = line.statement
    if statement is None:
        return None
    for call in ast.walk(statement):
        if not isinstance(call, ast.Call) or not call.args or call.args[0] is not node:
            continue
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr not in _JOINING_CALLS:
            continue
        if not isinstance(func.value, ast.Name):
            continue
        found, module = context.lookup(func.value.id, line.frame)
        name = module.__name__ if found and isinstance(module, ModuleType) else ""
        if type(name) is str and name.startswith(_JOINING_MODULES):
            return call
    return None


def _callee(call: ast.Call | None, line: FailingLine) -> str:
    segment = line.frame.segment(call.func) if call is not None else None
    return segment or "the call"


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    a, b = _shape(error.group("a")), _shape(error.group("b"))
    statement = line.statement
    if a is None or b is None or statement is None or not a or len(a) != len(b):
        return None
    if a[1:] != b[1:] or a[0] == b[0]:
        return None
    for node in ast.walk(statement):
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Add):
            continue
        finding = _explain(node, line, context, (a, b))
        if finding is not None:
            return finding
    return None


def _explain(
    node: ast.BinOp, line: FailingLine, context: ErrorContext, shapes: tuple[tuple[int, ...], ...]
) -> Finding | None:
    a, b = shapes
    left_source, right_source = line.frame.segment(node.left), line.frame.segment(node.right)
    if not left_source or not right_source or "\n" in left_source + right_source:
        return None
    call = _joining_call(node, line, context)
    base = _cut_parts(node, line, context, shapes)
    if call is None and base is None:
        return None
    if base is None:
        left, right = operand_of(node.left, line, context), operand_of(node.right, line, context)
        if left is None or right is None or not (_ndarray(left.value) and _ndarray(right.value)):
            return None
        if (left.shape, right.shape) != (a, b):
            return None
    parts = (
        f"{code(left_source)} and {code(right_source)} are the parts of {code(base)} before "
        f"and after the cut, a {show_shape(a)} and a {show_shape(b)} NumPy array"
        if base is not None
        else f"{code(left_source)} and {code(right_source)} are NumPy arrays of {a[0]} and "
        f"{b[0]} rows, given to {code(_callee(call, line))} to join"
    )
    rule = (
        f"{parts}. `+` on NumPy arrays adds them entry by entry (their shapes must be equal "
        "or broadcast); it never joins them the way `+` joins two lists. Where the two parts "
        "hold as many rows, the same line runs and adds the rows number by number: a wrong "
        "result with no error."
    )
    rows = a[0] + b[0]
    if call is not None:
        if len(a) == 1:
            replaced = f"[{left_source}, {right_source}]"
            result: tuple[int, ...] = (rows,)
            how = "List the two arrays for the call to join"
        else:
            replaced = f"[*{left_source}, *{right_source}]"
            result = (rows * a[1], *a[2:])
            how = (
                "To join them as the list of parts was joined, unpack each array's rows "
                "into one list (iterating over an array gives its rows)"
            )
    else:
        numpy = context.module_alias("numpy", "np")
        replaced = f"{numpy}.concatenate([{left_source}, {right_source}])"
        result = (rows, *a[1:])
        how = "Join the parts along their first axis"
    fixed = rewrite(line.frame, line.statement, node, replaced) if line.statement else None
    said = f"{rule} {how}: the result is a {show_shape(result)} array"
    if not fixed or "\n" in fixed:
        return Finding(f"{said}, with {code(replaced)}.", None)
    return Finding(said + ".", code(fixed))


JOINED_ARRAYS = ErrorFamily(
    "`+` between NumPy arrays written to join them, as `+` joins lists",
    messages=(Message(_NUMPY_BROADCAST),),
    exception_type="ValueError",
    read=_read,
    section=SECTION,
    without_library=True,
)
