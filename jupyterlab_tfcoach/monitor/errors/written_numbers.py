"""Whole numbers a cell writes, worked out from the values its names hold after it.

A row count or split point (``800``, ``n_train``, ``-n_test``, ``len(x) - k``,
``int(0.8 * len(x))``, ``n // 5``) or a size given to an op (``fft_len // 2 + 1``) is read
the same way by the symptom checks on splits (``symptoms/sorted_splits``,
``overlapping_splits``, ``copied_targets``) and by the error families that correct a size
(``families_spectrum_bins``). It lives here, next to ``held_values``, because the error
families cannot import the symptom package (which imports them).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor.errors.held_values import first_axis

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Div)
_MAX_DEPTH = 8


def row_count(value: Any) -> int | None:
    """``len`` of a list, tuple or range, or the first axis of an array or eager tensor,
    read without calling the user's ``__len__``."""
    if type(value) in (list, tuple, range, str, dict):
        return len(value)
    return first_axis(value)


def _number(node: ast.AST, names: Mapping[str, Any], depth: int) -> int | float | None:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name):
        value = names.get(node.id)
        if type(value) in (int, float):
            return value
        # A count NumPy gave (``n = labels.shape[0] // 5`` keeps a Python int, but
        # ``np.sum(mask)`` holds a NumPy integer).
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(value, numpy.integer | numpy.floating):
            return value.item()
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _number(node.operand, names, depth + 1)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        left = _number(node.left, names, depth + 1)
        right = _number(node.right, names, depth + 1)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if not right:
            return None
        return left // right if isinstance(node.op, ast.FloorDiv) else left / right
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("int", "len", "round")
        and len(node.args) == 1
        and not node.keywords
    ):
        argument = node.args[0]
        if node.func.id == "len":
            if not isinstance(argument, ast.Name):
                return None
            return row_count(names.get(argument.id))
        inner = _number(argument, names, depth + 1)
        if inner is None or abs(inner) > 2**62:
            return None
        return int(inner) if node.func.id == "int" else round(inner)
    return None


def whole_number(node: ast.AST | None, names: Mapping[str, Any]) -> int | None:
    """The whole number an expression of literals, names holding numbers, ``len(name)``,
    ``int(...)`` and ``+ - * / //`` comes to after the cell; None for anything else (or a
    fraction left unconverted)."""
    if node is None:
        return None
    try:
        value = _number(node, names, 0)
    except Exception:
        return None
    return value if type(value) is int else None
