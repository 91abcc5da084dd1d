"""Data already in [0, 1] (or [-1, 1]) divided by 255 again: every value near 0.

Pixels that a loader or a generator already gives in [0, 1], divided by 255 as raw 8-bit
pixels are, end up in [0, 0.004]: the model sees images close to black, and every number
written for the [0, 1] scale (an attack's ``eps``, a ``clip_by_value(x, 0, 1)``, a
threshold) is now hundreds of times too large. A cell that divides, then runs a second
time, does the same. Nothing raises, and a later ``predict`` on [0, 1] inputs looks like
the faulty call (``training/input_ranges.py`` names this cell's data instead).

Told after a cell that completed (a cell without a ``/`` or ``*`` followed by a number
costs one regular-expression search), from its source and the values after it: a top-
level ``A = E / c``, ``A = E * (1 / c)``, ``A = E * k`` (``k`` under ``1 / MIN_DIVISOR``)
or ``A /= c`` with ``c`` a written number of at least ``MIN_DIVISOR`` (255, 127.5, 256),
``A`` not bound again later in the cell, whose value after the cell is a float array or
eager tensor of at least ``MIN_VALUES`` values whose largest magnitude ``m`` is above 0
and at most ``1 / c``: the divided data's largest magnitude, ``m * c``, was at most 1,
so they were on the [0, 1] (or [-1, 1]) scale already. One note per cell names every such
statement; fix: delete them (the data need no division; data that were raw when the cell
was written mean the cell ran twice, and are remade from the raw data).

Reads the cell's source and one maximum per value; nothing here imports TensorFlow.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import held_array
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training.user_code import cell_place, cell_sources

SECTION = "tf-data"
MIN_DIVISOR = 50.0
MIN_VALUES = 64
MAX_VALUES = 2_000_000
MAX_CELL_CHARS = 20_000
# The largest magnitude ``m * c`` the divided data may have had: 1, with float rounding.
UNIT_SCALE = 1.0 + 1e-3
# A division or a product by a written number.
_WANTED = re.compile(r"(?:/=?|\*)\s*\(?\s*\d")


@dataclass(frozen=True)
class Division:
    """One statement dividing data by ``divisor``, and what its result holds."""

    name: str
    line: int
    written: str
    divisor: float
    largest: float
    before: float
    signed: bool


def _number(node: ast.AST) -> float | None:
    """A written number, or ``1 / 255``-like quotient of two."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        top, bottom = _number(node.left), _number(node.right)
        if top is not None and bottom:
            return top / bottom
    return None


def _divisor(value: ast.AST) -> float | None:
    """``c`` of ``E / c``, ``E * (1 / c)``, ``(1 / c) * E``, ``E * k``."""
    if not isinstance(value, ast.BinOp):
        return None
    if isinstance(value.op, ast.Div):
        number = _number(value.right)
        return number if number is not None and number >= MIN_DIVISOR else None
    if isinstance(value.op, ast.Mult):
        for factor in (value.right, value.left):
            number = _number(factor)
            if number is not None and 0 < number <= 1 / MIN_DIVISOR:
                return 1 / number
    return None


def _divisions(tree: ast.Module, source: str) -> list[tuple[str, ast.stmt, float]]:
    found: list[tuple[str, ast.stmt, float]] = []
    for statement in tree.body:
        name, divisor = None, None
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            name, divisor = statement.targets[0].id, _divisor(statement.value)
        elif (
            isinstance(statement, ast.AugAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(statement.op, ast.Div)
        ):
            number = _number(statement.value)
            name = statement.target.id
            divisor = number if number is not None and number >= MIN_DIVISOR else None
        if name is not None and divisor is not None:
            found.append((name, statement, divisor))
    # Only a name's last binding in the cell holds the value read after it.
    last: dict[str, int] = {}
    for statement in tree.body:
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, ast.AugAssign | ast.AnnAssign)
            else []
        )
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    last[node.id] = statement.lineno
    return [(n, s, d) for n, s, d in found if last.get(n) == s.lineno]


def _division(
    name: str, statement: ast.stmt, divisor: float, source: str, namespace: Mapping[str, Any]
) -> Division | None:
    numpy = sys.modules.get("numpy")
    if numpy is None or name not in namespace:
        return None
    values = held_array(namespace[name], MAX_VALUES, ("float",))
    if values is None or values.size < MIN_VALUES:
        return None
    with numpy.errstate(all="ignore"):
        if not bool(numpy.isfinite(values).all()):
            return None
        largest = float(numpy.abs(values).max())
        signed = bool(values.min() < 0)
    if largest <= 0 or largest * divisor > UNIT_SCALE:
        return None
    written = ast.get_source_segment(source, statement)
    if written is None or "\n" in written:
        return None
    return Division(name, statement.lineno, written, divisor, largest, largest * divisor, signed)


def _number_text(value: float) -> str:
    return f"{value:.3g}"


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or _WANTED.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found = [
        division
        for name, statement, divisor in _divisions(tree, source)
        if (division := _division(name, statement, divisor, source, namespace)) is not None
    ]
    if not found:
        return []
    return [_note(found)]


def _note(found: list[Division]) -> Note:
    lines = [str(d.line) for d in found]
    where = (
        f"Line {lines[0]}" if len(lines) == 1 else f"Lines {', '.join(lines[:-1])} and {lines[-1]}"
    )
    divisors = sorted({_number_text(d.divisor) for d in found})
    scale = "[-1, 1]" if any(d.signed for d in found) else "[0, 1]"
    spans = "; ".join(
        f"`{d.name}` now reaches {_number_text(d.largest)} at most (before the division, "
        f"{_number_text(d.before)})"
        for d in found
    )
    fixes = " and ".join(f"`{d.written}`" for d in found)
    text = (
        f"{where} of this cell divide{'s' if len(found) == 1 else ''} by "
        f"{' and '.join(divisors)} data that were already on the {scale} scale: {spans}. "
        f"Scaled twice, every value is about {divisors[0]} times smaller than the {scale} "
        "scale the data had, so the model sees inputs close to 0, and any number written "
        "for that scale (a step size, a clip range, a threshold) is now far too large. "
        "Nothing raises. Divide once: these values needed no division (if they held raw "
        "0..255 values when you wrote this cell, it ran twice: remake them from the raw "
        f"data and run it once). Fix: delete {fixes}."
    )
    return reports.note(text, SECTION)


def division_statement(
    name: str, namespace: Mapping[str, Any], source: str
) -> tuple[str, str] | None:
    """The newest statement of the history (``In``, this cell first) dividing ``name`` by
    a number of at least ``MIN_DIVISOR`` and binding it, with where it is (``cell In[3],
    line 2``): for a later note that sees the result."""
    sources, counts = cell_sources(namespace, source)
    for text, count in zip(sources, counts, strict=True):
        if name not in text or len(text) > MAX_CELL_CHARS or _WANTED.search(text) is None:
            continue
        tree = parsed_source(text)
        if tree is None:
            continue
        for bound, statement, _ in reversed(_divisions(tree, text)):
            written = ast.get_source_segment(text, statement)
            if bound == name and written is not None and "\n" not in written:
                return written, cell_place(count, statement.lineno)
    return None
