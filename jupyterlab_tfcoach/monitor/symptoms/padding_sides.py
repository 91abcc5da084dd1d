"""Tokens and their per-token labels padded on different sides.

``pad_sequences`` pads at the start unless told ``padding="post"``. When a cell pads the
token sequences at the end and the label sequences with the default (or the other way
round), both arrays come out with the same shape, so nothing raises, but in every row
shorter than the longest the labels sit shifted against their tokens: the model learns
each token with another position's tag, and the padding of one lines up with real
values of the other.

After a completed cell whose text holds ``pad_sequences`` twice (one substring count
otherwise), its top-level assignments ``name = ...pad_sequences(seqs, ...)`` are read
(``ast``): two calls whose ``padding=`` differ (``"pre"`` when not given), whose
results the namespace holds as 2-D arrays of one shape, and whose first arguments are
two different names holding lists (or tuples) of the same number of sequences, each of
the same length as its partner (at most ``MAX_ROWS`` rows; lengths only, read with ``len`` of lists,
tuples and NumPy arrays): per-token labels. Sequences of different lengths (a
translation's source and target) stay silent, as do two calls padded alike. The fix is
the call written with no ``padding=`` (else the later one) given the other's side.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "tf-data"
MAX_CELL_CHARS = 50_000
MAX_ROWS = 200_000
_SEQUENCE_TYPES = (list, tuple)


def _side(call: ast.Call) -> tuple[str, ast.keyword | None] | None:
    for keyword in call.keywords:
        if keyword.arg == "padding":
            value = keyword.value
            if isinstance(value, ast.Constant) and value.value in ("pre", "post"):
                return str(value.value), keyword
            return None  # a side held in a name: not read
    return "pre", None


def _lengths(value: Any) -> list[int] | None:
    if type(value) not in _SEQUENCE_TYPES or len(value) > MAX_ROWS:
        return None
    lengths: list[int] = []
    for row in value:
        if type(row) in _SEQUENCE_TYPES:
            lengths.append(len(row))
        elif type(row).__name__ == "ndarray" and type(row).__module__ == "numpy":
            lengths.append(int(row.shape[0]) if row.ndim == 1 else -1)
        else:
            return None
    return lengths


def _shape(value: Any) -> tuple[int, ...] | None:
    if type(value).__name__ != "ndarray" or type(value).__module__ != "numpy":
        return None
    shape = value.shape
    return tuple(int(dim) for dim in shape) if len(shape) == 2 else None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for two aligned sequence lists padded on different sides, if any."""
    if source.count("pad_sequences") < 2 or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    calls: list[tuple[str, ast.Call, str, ast.keyword | None]] = []
    for statement in tree.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target, value = statement.targets[0], statement.value
        if not (isinstance(target, ast.Name) and isinstance(value, ast.Call)):
            continue
        if call_name(value) != "pad_sequences" or not value.args:
            continue
        if not isinstance(value.args[0], ast.Name):
            continue
        side = _side(value)
        if side is not None:
            calls.append((target.id, value, side[0], side[1]))
    for index, (first, first_call, first_side, first_keyword) in enumerate(calls):
        for second, second_call, second_side, second_keyword in calls[index + 1 :]:
            if first_side == second_side:
                continue
            if not _aligned(namespace, first, first_call, second, second_call):
                continue
            # Change the call that took the default; else the later one.
            if first_keyword is None and second_keyword is not None:
                changed, keyword, side, kept = first_call, first_keyword, second_side, second
            else:
                changed, keyword, side, kept = second_call, second_keyword, first_side, first
            note = _note(
                source, changed, keyword, side, (first, first_side, second, second_side), kept
            )
            if note is not None:
                return [note]
    return []


def _aligned(
    namespace: Mapping[str, Any],
    first: str,
    first_call: ast.Call,
    second: str,
    second_call: ast.Call,
) -> bool:
    shape = _shape(namespace.get(first))
    if shape is None or shape != _shape(namespace.get(second)):
        return False
    names = [call.args[0].id for call in (first_call, second_call)]  # type: ignore[attr-defined]
    if names[0] == names[1]:
        return False  # one list padded both ways on purpose, not tokens and labels
    lengths = [_lengths(namespace.get(name)) for name in names]
    if lengths[0] is None or lengths[1] is None or lengths[0] != lengths[1]:
        return False
    # Padding only moves something when some row is shorter than the padded width.
    return bool(lengths[0]) and min(lengths[0]) < shape[1]


def _note(
    source: str,
    call: ast.Call,
    keyword: ast.keyword | None,
    side: str,
    sides: tuple[str, str, str, str],
    kept: str,
) -> Note | None:
    text = ast.get_source_segment(source, call)
    if not text or "\n" in text:
        return None
    if keyword is not None:
        value = ast.get_source_segment(source, keyword.value)
        if not value:
            return None
        fixed = text.replace(f"padding={value}", f'padding="{side}"', 1)
    else:
        fixed = f'{text[:-1].rstrip()}, padding="{side}")'
    first, first_side, second, second_side = sides
    message = (
        f"`{first}` is padded {_where(first_side)} and `{second}` {_where(second_side)} "
        f"(line {call.lineno} of this cell): their sequences have the same lengths row by "
        "row, one label per token, so in every row shorter than the longest the values of "
        "one sit shifted against the other's, and padding lines up with real values. Both "
        f"arrays have one shape and nothing raises. Pad both on the same side, as `{kept}` "
        f"is: `{fixed}`."
    )
    return reports.note(message, SECTION)


def _where(side: str) -> str:
    return 'at the end (`padding="post"`)' if side == "post" else 'at the start (`"pre"`)'
