"""Rows held back by ``validation_split`` for validation figures nothing reads.

``model.fit(x, y, validation_split=0.2, verbose=0)`` trains on the first 80% of the rows
only: Keras keeps the last 20% apart to compute ``val_`` figures after each epoch. When the
cell neither prints them (``verbose=0``), nor keeps the History ``fit`` returns (the call
is a statement of its own), nor gives ``fit`` a callback (which could watch them), the
figures go nowhere and a fifth of the data never trained the model: a final refit "on all
the training data" that quietly is not. Nothing raises.

Read after a cell in which ``fit`` ran and logged ``val_`` figures (``FitRun.history``):
its top-level statements (one parse, cached) that are a call ``<name>.fit(...)`` alone,
with a constant ``validation_split`` above 0, ``verbose=0`` written, no ``callbacks``,
``<name>`` bound to a model a fit of the cell ran on. The note says how many rows were
held back (from the array given as ``x``, Keras's own cut: ``floor(n * (1 - split))``
train), and the fix is the statement without ``validation_split``. Silent: the History
kept (``history = model.fit(...)``), a callback given, figures printed (``verbose`` left
to its default or above 0), ``validation_data=`` (other rows, not taken from ``x``).

Cost: after a cell whose fits logged ``val_`` figures, one cached parse of the cell and a
few attribute reads; nothing otherwise. Nothing here imports TensorFlow or prints; every
failure leaves the note out.
"""

from __future__ import annotations

import ast
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "keras-validation-data"
MAX_CELL_CHARS = 50_000


def _constant(call: ast.Call, keyword: str) -> tuple[bool, Any]:
    for item in call.keywords:
        if item.arg == keyword:
            if isinstance(item.value, ast.Constant):
                return True, item.value.value
            return True, ...
    return False, None


def _rows(call: ast.Call, namespace: Mapping[str, Any]) -> int | None:
    """How many rows the array given as ``x`` holds (a NumPy array by name)."""
    given = call.args[0] if call.args else None
    for item in call.keywords:
        if item.arg == "x":
            given = item.value
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(given, ast.Name):
        return None
    value = namespace.get(given.id)
    if type(value) is not numpy.ndarray or value.ndim < 1:
        return None
    return int(value.shape[0])


def _without_split(source: str, statement: ast.stmt, call: ast.Call) -> str | None:
    """The statement as written without its ``validation_split=...`` keyword."""
    written = ast.get_source_segment(source, statement)
    if written is None or "\n" in written:
        return None
    arguments: list[ast.AST] = [*call.args, *call.keywords]
    arguments.sort(key=lambda node: (node.lineno, node.col_offset))  # type: ignore[attr-defined]
    split = next(k for k in call.keywords if k.arg == "validation_split")
    index = arguments.index(split)
    offset = statement.col_offset
    if index > 0:
        start = arguments[index - 1].end_col_offset  # type: ignore[attr-defined]
        end = split.end_col_offset
    elif len(arguments) > 1:
        start = split.col_offset
        end = arguments[1].col_offset  # type: ignore[attr-defined]
    else:
        start, end = split.col_offset, split.end_col_offset
    if start is None or end is None:
        return None
    raw = written.encode("utf-8")
    fixed = raw[: start - offset] + raw[end - offset :]
    text = fixed.decode("utf-8")
    try:
        ast.parse(text)
    except SyntaxError:
        return None
    return text


def unused_split_notes(
    fits: Sequence[Any], namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    """Notes for the cell's fits that held rows back for figures nothing reads."""
    try:
        validated = {
            run.model_id
            for run in fits
            if run.history and any(str(key).startswith("val_") for key in run.history)
        }
        if not validated or "validation_split" not in cell_source:
            return []
        if len(cell_source) > MAX_CELL_CHARS:
            return []
        tree = parsed_source(cell_source)
        if tree is None:
            return []
        notes: list[Note] = []
        for statement in tree.body:
            note = _statement_note(statement, validated, namespace, cell_source)
            if note is not None:
                notes.append(note)
        return notes
    except Exception:
        return []


def _statement_note(
    statement: ast.stmt, validated: set[int], namespace: Mapping[str, Any], source: str
) -> Note | None:
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "fit"):
        return None
    if not isinstance(func.value, ast.Name) or id(namespace.get(func.value.id)) not in validated:
        return None
    written, split = _constant(call, "validation_split")
    if not written or type(split) not in (int, float) or not 0 < split < 1:
        return None
    written, verbose = _constant(call, "verbose")
    if not written or verbose not in (0, False) or _constant(call, "callbacks")[0]:
        return None
    model = func.value.id
    rows = _rows(call, namespace)
    given = ast.get_source_segment(source, call.args[0]) if call.args else None
    if rows is not None and given:
        trained = math.floor(rows * (1.0 - split))
        held = (
            f"the last {rows - trained} of the {rows} rows of `{given}`, so `{model}` trains "
            f"on {trained} of them"
        )
    else:
        held = f"the last {split:.0%} of the rows, so `{model}` never trains on them"
    said = (
        f"`{model}.fit(...)` (line {statement.lineno}) holds back {held}, to compute "
        "validation figures that nothing reads: `verbose=0` prints none, the History "
        "`fit` returns is not kept, and no callback watches them. Those rows are left out "
        "of training for nothing. Nothing raises."
    )
    fixed = _without_split(source, statement, call)
    if fixed is None:
        return reports.note(f"{said} To train on every row, drop `validation_split`.", SECTION)
    return reports.note(f"{said} To train on every row, drop the split: `{fixed}`.", SECTION)
