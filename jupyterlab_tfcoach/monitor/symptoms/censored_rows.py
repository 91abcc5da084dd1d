"""A survival likelihood that counts every row as an event: the censoring indicator unused.

With right-censored data, a row whose event was observed contributes its log-hazard and
its survival (``log h - H(t)``), a censored row only its survival (``-H(t)``): the log-hazard
term is multiplied by the event indicator. ``nll = -mean(log_h - exp(log_h) * time)``
leaves the indicator out and treats every censoring time as a death: the hazard is
over-estimated and the coefficients are biased. Nothing raises; the fit looks fine.

Read from the source after a completed cell whose words say hazard, survival or
censoring (one regular-expression search otherwise): a difference ``A - B`` in the cell
(a ``def`` or a loop body too) where ``B`` uses a name ``T`` holding a 1-D float array or
tensor of positive values (the times) and ``A`` does not, while the namespace holds, under
a name whose words say event, status, observed, censor(ed), death, died or delta, a 1-D
bool (or 0/1) array or tensor of the same length with both values present, which the
cell never uses (nor any other name holding a 0/1 indicator of that length: a cast copy
of it). The fix multiplies ``A`` by that indicator as floats
(``event.astype("float32") * A`` for NumPy, ``tf.cast(event, tf.float32) * A`` for a
tensor); a censoring indicator (True = censored) gets ``(1 - ...)``.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode, held_array
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "reducing-tensors"
WANTED = re.compile(r"(?i)hazard|surviv|censor")
MAX_ELEMENTS = 5_000_000
MAX_NAMES = 5_000
_EVENT_WORDS = frozenset({"event", "events", "status", "observed", "death", "died", "delta"})
_CENSOR_WORDS = frozenset({"censor", "censored", "censoring"})


def _positive_times(value: Any) -> int | None:
    array = held_array(value, MAX_ELEMENTS, ("float",), ndim=1)
    numpy = sys.modules.get("numpy")
    if array is None or numpy is None or array.shape[0] < 2:
        return None
    return int(array.shape[0]) if bool((array > 0).all()) else None


def _indicator(value: Any, rows: int) -> str | None:
    """``"numpy"`` or ``"tensor"`` for a 1-D 0/1 indicator of ``rows`` values with both."""
    array = held_array(value, MAX_ELEMENTS, ("bool", "int", "float"), ndim=1)
    numpy = sys.modules.get("numpy")
    if array is None or numpy is None or array.shape[0] != rows:
        return None
    values = numpy.unique(array)
    if len(values) != 2 or not set(values.tolist()) <= {0, 1}:
        return None
    return "numpy" if isinstance(value, numpy.ndarray) else "tensor"


def censored_row_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    tree = parsed_source(code.source)
    if tree is None:
        return []
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)):
            continue
        left_names = {n.id for n in ast.walk(node.left) if isinstance(n, ast.Name)}
        right_names = {n.id for n in ast.walk(node.right) if isinstance(n, ast.Name)}
        for time_name in sorted(right_names - left_names):
            rows = _positive_times(namespace.get(time_name))
            if rows is None:
                continue
            found = _unused_indicator(namespace, used, rows)
            if found is None:
                continue
            note = _note(code, node, time_name, *found)
            if note is not None:
                return [note]
    return []


def _unused_indicator(
    namespace: dict[str, Any], used: set[str], rows: int
) -> tuple[str, str, bool] | None:
    """(name, library, True for a censoring indicator) of the indicator the cell leaves
    out (a NumPy one first when the same values are also held as a tensor); None when
    there is none, or several that differ."""
    numpy = sys.modules.get("numpy")
    # An indicator the cell already uses, under any name (``event_f = tf.cast(event,
    # ...)``): the likelihood has its censoring.
    if any(_indicator(namespace.get(name), rows) is not None for name in used):
        return None
    found: list[tuple[str, str, bool]] = []
    values: list[Any] = []
    for name, value in list(namespace.items())[:MAX_NAMES]:
        if type(name) is not str or name.startswith("_") or name in used:
            continue
        words = set(identifier_words(name))
        censoring = bool(words & _CENSOR_WORDS)
        if not censoring and not words & _EVENT_WORDS:
            continue
        library = _indicator(value, rows)
        if library is not None:
            found.append((name, library, censoring))
            values.append(held_array(value, MAX_ELEMENTS, ("bool", "int", "float"), ndim=1))
    if not found or numpy is None:
        return None
    first = values[0].astype("float64")
    for (_, _, censoring), other in zip(found, values, strict=True):
        same = other.astype("float64")
        if censoring != found[0][2]:
            same = 1.0 - same
        if not numpy.array_equal(first, same):
            return None
    return next((f for f in found if f[1] == "numpy"), found[0])


def _note(
    code: CellCode, difference: ast.BinOp, time_name: str, name: str, library: str, censoring: bool
) -> Note | None:
    lines = code.source.split("\n")
    line = difference.lineno
    if difference.end_lineno != line or not 0 < line <= len(lines):
        return None
    text_line = lines[line - 1]
    left = ast.get_source_segment(code.source, difference.left)
    whole = ast.get_source_segment(code.source, difference)
    if left is None or whole is None or whole not in text_line:
        return None
    indicator = (
        f'{name}.astype("float32")' if library == "numpy" else f"tf.cast({name}, tf.float32)"
    )
    if censoring:
        indicator = f"(1.0 - {indicator})"
    wrapped = f"({left})" if isinstance(difference.left, ast.BinOp) else left
    fixed_difference = whole.replace(left, f"{indicator} * {wrapped}", 1)
    fixed = text_line.replace(whole, fixed_difference, 1).strip()
    kind = "censoring" if censoring else "event"
    text = (
        f"`{whole}` (line {line} of this cell) counts every row as an observed event: "
        f"`{left}` (the log-hazard term) is added for every row, but a censored row "
        f"contributes only its survival (the term with `{time_name}`). The {kind} "
        f"indicator `{name}` is never used here, so censoring times are read as deaths, "
        f"the hazard is over-estimated and the coefficients are biased. Nothing raises. "
        f"Fix: `{fixed}`."
    )
    return reports.note(text, SECTION)
