"""Lengths counted with ``count_nonzero`` on sequences padded with 0 that hold real zeros
(issue #25, ``symptoms/padding_zeros.py``), also inside a function of the cell that
returns the padded rows: the note names the call and the array, its fix (the lengths
taken before padding) run as printed gives the right lengths and the note goes; rows
without a real 0 between other values stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def notes_in(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == "tf-data"]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


TUNES = "tunes = [[3, 0, 5], [7, 7], [0, 2, 0, 4], [6]]\n"
COUNTED = (
    "grid = keras.utils.pad_sequences(tunes, padding='post')\n"
    "note_counts = tf.math.count_nonzero(grid, axis=1).numpy().tolist()\n"
)
PACKED = (
    "def pack(seqs):\n"
    "    padded = keras.utils.pad_sequences(seqs, padding='post')\n"
    "    sizes = np.count_nonzero(padded, axis=1)\n"
    "    return padded, sizes\n"
    "\n"
    "batch_ids, batch_sizes = pack(tunes)\n"
)


def test_count_nonzero_on_rows_with_real_zeros(kernel: KernelSession) -> None:
    run(kernel, TUNES)
    [text] = notes_in(kernel, COUNTED)
    assert value_of(kernel, "note_counts") == [2, 2, 2, 1]  # the symptom
    assert text.startswith(
        "`tf.math.count_nonzero(grid, axis=1)` (line 2 of this cell) takes 0 for padding, but "
        "0 is also a real value of `grid`: 2 of its 4 rows hold a 0 between other values "
        "(row 0, position 1)"
    ), text
    fix = last_code(text)
    assert fix == "[len(row) for row in tunes]"
    fixed = COUNTED.replace("tf.math.count_nonzero(grid, axis=1).numpy().tolist()", fix)
    assert notes_in(kernel, fixed) == []
    assert value_of(kernel, "note_counts") == [3, 2, 4, 1]


def test_count_nonzero_inside_a_function_that_returns_the_rows(kernel: KernelSession) -> None:
    run(kernel, TUNES)
    [text] = notes_in(kernel, PACKED)
    assert "`np.count_nonzero(padded, axis=1)` (line 3 of this cell)" in text, text
    assert "`padded` (read as `batch_ids`, where this cell keeps it)" in text
    fix = last_code(text)
    assert fix == "[len(row) for row in seqs]"
    fixed = PACKED.replace("np.count_nonzero(padded, axis=1)", f"np.array({fix})")
    assert notes_in(kernel, fixed) == []
    assert value_of(kernel, "batch_sizes.tolist()") == [3, 2, 4, 1]


def test_rows_without_an_inner_zero_stay_silent(kernel: KernelSession) -> None:
    run(kernel, "tunes = [[3, 1, 5], [7, 7], [2, 2, 9, 4], [6, 0]]\n")
    assert notes_in(kernel, COUNTED) == []
    assert notes_in(kernel, PACKED) == []
