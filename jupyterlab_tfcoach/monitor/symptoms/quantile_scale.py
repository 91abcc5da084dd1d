"""A percentile asked for with a fraction: ``np.percentile(errors, 0.99)``.

``np.percentile``/``np.nanpercentile`` and ``tfp.stats.percentile`` take ``q`` in percent,
from 0 to 100; ``np.quantile`` takes a fraction, from 0 to 1. Given 0.99 (the fraction
meant for ``quantile``), ``percentile`` returns the 0.99th percentile, a value near the
smallest of the data, and a threshold set there flags nearly everything. Nothing raises:
0.99 is a valid percent. (The other way round, ``np.quantile(x, 99)``, raises.)

Found after a completed cell (``cell_reading``: top-level calls, loops included, parsed
once per source): a call named ``percentile`` or ``nanpercentile`` whose ``q`` (second
argument or ``q=``) is read from the call as written: number literals (a list or tuple of
them, a sign), ``linspace``/``arange`` of literals, or a name holding a Python number, a
NumPy scalar or a small NumPy array (at most ``MAX_Q_VALUES``). Told when every ``q`` lies
in [0, 1] and one lies strictly between 0 and 1 (``q=1`` alone, the 1st percentile, is
plausible and stays silent).

The fix: for a ``q`` written as numbers, the same call with them times 100
(``np.percentile(errors, 99)``); else for NumPy the ``quantile`` function of the same
arguments (``np.quantile(errors, levels)``), for TensorFlow Probability ``100 * (q)``.
The note also names what the call returned and the data's range when they are cheap to
read (an assigned number, an array of at most ``MAX_RANGE_ELEMENTS`` values).
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import (
    CellCode,
    call_name,
    reference_path,
    value_at,
    value_range,
)
from jupyterlab_tfcoach.monitor.syntax import held_at

SECTION = "reducing-tensors"
MAX_NOTES = 2
MAX_Q_VALUES = 10_000
_PERCENTILES = {"percentile": "quantile", "nanpercentile": "nanquantile"}
_RANGES = frozenset({"linspace", "arange"})


def _literal(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _literal(node.operand)
        if inner is not None:
            return -inner if isinstance(node.op, ast.USub) else inner
    return None


def _written(node: ast.AST) -> list[float] | None:
    """The numbers ``q`` is written as: one literal or a list/tuple of them."""
    single = _literal(node)
    if single is not None:
        return [single]
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        values = [_literal(element) for element in node.elts]
        if all(value is not None for value in values):
            return [float(value) for value in values if value is not None]
    return None


def _q_values(node: ast.AST, namespace: dict[str, Any]) -> list[float] | None:
    written = _written(node)
    if written is not None:
        return written
    if isinstance(node, ast.Call) and call_name(node) in _RANGES and len(node.args) >= 2:
        ends = [_literal(node.args[0]), _literal(node.args[1])]
        if all(end is not None for end in ends):
            return [float(end) for end in ends if end is not None]
        return None
    path = reference_path(node)
    if path is None:
        return None
    found, value = held_at(path, namespace)
    if not found:
        return None
    if type(value) in (int, float):
        return [float(value)]
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    if isinstance(value, numpy.integer | numpy.floating):
        return [float(value)]
    if type(value) is numpy.ndarray and 0 < value.size <= MAX_Q_VALUES and value.dtype.kind in "fi":
        return [float(numpy.min(value)), float(numpy.max(value))]
    return None


def _hundredfold(node: ast.AST, text: str) -> str | None:
    """``q`` written as numbers, each times 100 (``0.99`` -> ``99``), else None."""
    values = _written(node)
    if values is None:
        return None
    shown = [f"{round(value * 100, 10):g}" for value in values]
    if isinstance(node, ast.List):
        return "[" + ", ".join(shown) + "]"
    if isinstance(node, ast.Tuple):
        return "(" + ", ".join(shown) + ("," if len(shown) == 1 else "") + ")"
    return shown[0]


def _percents(values: list[float], scale: float) -> str:
    return ", ".join(f"{value * scale:g}%" for value in values[:3])


def _statement(code: CellCode, node: ast.Call) -> ast.AST:
    """The top-level statement holding the call when it is one line, else the call."""
    current: ast.AST = node
    for parent in code.ancestors(node):
        if isinstance(parent, ast.stmt):
            current = parent
            break
    return current if code.segment(current) is not None else node


def quantile_scale_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    notes: list[Note] = []
    for node in code.nodes:
        if len(notes) >= MAX_NOTES:
            break
        if not isinstance(node, ast.Call) or call_name(node) not in _PERCENTILES:
            continue
        q_node: ast.expr | None = None
        for keyword in node.keywords:
            if keyword.arg == "q":
                q_node = keyword.value
        if q_node is None and len(node.args) >= 2:
            q_node = node.args[1]
        if q_node is None or not node.args:
            continue
        values = _q_values(q_node, namespace)
        if not values or not all(0.0 <= value <= 1.0 for value in values):
            continue
        if not any(0.0 < value < 1.0 for value in values):
            continue
        call_text, q_text = code.segment(node), code.segment(q_node)
        data_text = code.segment(node.args[0])
        if call_text is None or q_text is None or data_text is None:
            continue
        name = call_name(node) or "percentile"
        func_text = code.segment(node.func) or name
        numpy_call = func_text.endswith(name) and func_text.split(".")[0] in ("np", "numpy")
        start = q_node.col_offset - node.col_offset
        same_line = q_node.lineno == node.lineno and call_text[start:].startswith(q_text)
        hundred = _hundredfold(q_node, q_text)
        if hundred is not None and same_line:
            fixed = call_text[:start] + hundred + call_text[start + len(q_text) :]
        elif numpy_call:
            fixed = func_text[: -len(name)] + _PERCENTILES[name] + call_text[len(func_text) :]
        elif same_line:
            fixed = call_text[:start] + f"100 * ({q_text})" + call_text[start + len(q_text) :]
        else:
            continue
        statement = _statement(code, node)
        statement_text = code.segment(statement)
        if statement is not node and statement_text is not None:
            call_start = node.col_offset - statement.col_offset
            if statement.lineno == node.lineno and statement_text[call_start:].startswith(
                call_text
            ):
                fixed = (
                    statement_text[:call_start]
                    + fixed
                    + statement_text[call_start + len(call_text) :]
                )
        data = ""
        operand = value_at(node.args[0], namespace, data_text)
        bounds = value_range(operand) if operand is not None else None
        if bounds is not None:
            data = f" (`{data_text}` runs from {bounds[0]:.4g} to {bounds[1]:.4g})"
        text = (
            f"`{call_text}` (line {node.lineno} of this cell) gives `{name}` q = `{q_text}`, "
            f"a fraction, but `{name}` reads q in percent (0 to 100): it returns the value "
            f"below which {_percents(values, 1)} of `{data_text}` lies, close to its "
            f"smallest{data}, not the value below which {_percents(values, 100)} lies. "
            f"Nothing raises (`quantile` is the function that takes fractions). "
            f"Fix: `{fixed}`."
        )
        notes.append(reports.note(text, SECTION))
    return notes
