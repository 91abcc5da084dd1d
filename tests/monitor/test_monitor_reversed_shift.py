"""Teacher-forcing pairs returned the wrong way round (issue #25, silent bugs,
``symptoms/reversed_shift.py``): a function that returns ``p[:, 1:]`` as the input and
``p[:, :-1]`` as the target of integer token ids is told in the cell that calls it, with
the two slices swapped as the fix; the fixed cell is quiet and its pairs put each target
one step ahead of its input. The right order, float series and a function returning
other slices stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(before_load="import numpy as np\n", after_load="")

PHRASES = """phrases = np.array(
    [[1, 8, 4, 9, 2, 0], [1, 5, 5, 7, 3, 2], [1, 6, 2, 0, 0, 0], [1, 9, 9, 4, 2, 0]], "int64"
)
"""


def shift_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "one step earlier" in note["text"]]


def test_pairs_made_the_wrong_way_round_are_told_with_the_slices_swapped(
    kernel: KernelSession,
) -> None:
    run(kernel, PHRASES)
    cell = """def next_word_pairs(rows):
    reads = rows[:, 1:]
    wants = rows[:, :-1]
    return reads, wants

lm_x, lm_y = next_word_pairs(phrases)
"""
    notes = shift_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`next_word_pairs` returns `reads = rows[:, 1:]` as the input and "
        "`wants = rows[:, :-1]` as the target (`lm_x` and `lm_y` in this cell)"
    ), text
    fixes = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert fixes == ["next_word_pairs", "reads = rows[:, :-1]", "wants = rows[:, 1:]"]
    fixed = cell.replace("reads = rows[:, 1:]", fixes[1]).replace("wants = rows[:, :-1]", fixes[2])
    assert shift_notes(checked_report(run(kernel, fixed))) == []
    # Each target is now the next token of its input: the first input is the start id.
    assert value_of(kernel, "bool((lm_x[:, 1:] == lm_y[:, :-1]).all())") is True
    assert value_of(kernel, "int(lm_x[0, 0])") == 1


def test_a_pair_returned_directly_gets_the_return_swapped(kernel: KernelSession) -> None:
    run(kernel, PHRASES)
    cell = "def split_ids(batch):\n    return batch[..., 1:], batch[..., :-1]\n\n"
    cell += "feed, goal = split_ids(phrases)\n"
    notes = shift_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = re.findall(r"`([^`]+)`", notes[0].split("Fix: ", 1)[1])[-1]
    assert fix == "return batch[..., :-1], batch[..., 1:]"
    fixed = cell.replace("return batch[..., 1:], batch[..., :-1]", fix)
    assert shift_notes(checked_report(run(kernel, fixed))) == []


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, PHRASES + "levels = np.linspace(0.0, 1.0, 24).reshape(4, 6)\n")
    for cell in (
        # Teacher forcing the right way round.
        "def pairs(rows):\n    return rows[:, :-1], rows[:, 1:]\n\nsx, sy = pairs(phrases)",
        # A float series: differences, not token pairs.
        "def steps(series):\n    return series[:, 1:], series[:, :-1]\n\n"
        "now, before = steps(levels)",
        # Slices of two different arrays.
        "def two(a, b):\n    return a[:, 1:], b[:, :-1]\n\nfa, fb = two(phrases, phrases * 2)",
        # A name rebound in the body is not the slice any more.
        "def swap(rows):\n    head = rows[:, 1:]\n    head = rows[:, :-1]\n"
        "    return head, rows[:, :-1]\n\nha, hb = swap(phrases)",
    ):
        assert shift_notes(checked_report(run(kernel, cell))) == [], cell
