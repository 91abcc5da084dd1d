"""Data scaled with ``//`` where ``/`` was meant.

``x_train = x_train // 255`` (or ``// 255.0``) floor-divides: only the whole part is kept,
so every pixel under 255 becomes 0 and the images come out blank (0 and 1 only). Nothing
raises; the model trains on nearly empty inputs and stays at chance.

Found after a cell that completed (a cell without ``//`` costs one substring test), from
its top-level ``name = <value> // <number>`` statements with a number of 2 or more (a
literal, or a name holding one; ``//=`` too): ``name`` then holds a NumPy array or tensor
of at least 16 values (at most a million read) that are all 0 or 1, mostly 0 (over
``ZERO_SHARE``). The note names the statement and the share of zeros; fix: the statement
with ``/`` (``x = x / 255`` for ``x //= 255``: ``/=`` raises on an integer array).
When the statement divided the name it rebinds (``x = x // 255``), the
original values are gone: the note says to load them again first.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import numpy_values, value_at
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "dtype-casting"
MAX_NOTES = 2
ZERO_SHARE = 0.9
MIN_VALUES = 16
_MAX_CHARS = 50_000


def _divisor(node: ast.expr, namespace: dict[str, Any]) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        if type(value) in (int, float):
            return float(value)
    return None


def floor_division_notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if "//" not in source or len(source) > _MAX_CHARS:
        return []
    tree = parsed_source(source)
    numpy = sys.modules.get("numpy")
    if tree is None or numpy is None:
        return []
    statements = list(tree.body)
    notes: list[Note] = []
    for index, statement in enumerate(statements):
        if len(notes) >= MAX_NOTES:
            break
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
            if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.FloorDiv)):
                continue
            numerator, divisor = value.left, value.right
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.FloorDiv):
            target, numerator, divisor = statement.target, statement.target, statement.value
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        number = _divisor(divisor, namespace)
        if number is None or number < 2:
            continue
        if any(
            isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Store)
            for later in statements[index + 1 :]
            for n in ast.walk(later)
        ):
            continue  # bound again: its value now is another one
        held = value_at(target, namespace, target.id)
        values = numpy_values(held) if held is not None else None
        if values is None or values.size < MIN_VALUES:
            continue
        zeros = float(numpy.mean(values == 0))
        if zeros < ZERO_SHARE or not bool(numpy.all((values == 0) | (values == 1))):
            continue
        written = ast.get_source_segment(source, statement)
        if written is None or "\n" in written:
            continue
        # ``x /= 255`` would raise on an integer array (NumPy keeps its dtype in place).
        numerator_text = ast.get_source_segment(source, numerator)
        divisor_text = ast.get_source_segment(source, divisor)
        if numerator_text is None or divisor_text is None:
            continue
        fixed = f"{target.id} = {numerator_text} / {divisor_text}"
        rebinds = any(isinstance(n, ast.Name) and n.id == target.id for n in ast.walk(numerator))
        again = (
            f" `{target.id}` no longer holds the values it divided: load them again first, "
            "then run it."
            if rebinds
            else ""
        )
        notes.append(
            reports.note(
                f"`{written}` (line {statement.lineno} of this cell) floor-divides: `//` "
                "keeps only the whole part of each quotient, so every value under "
                f"{number:g} became 0 ({zeros:.1%} of `{target.id}` is 0 now, the rest 1). "
                "The data lost almost everything it held, and nothing raises. Divide with "
                f"`/` to scale: `{fixed}`.{again}",
                SECTION,
            )
        )
    return notes
