"""A split by slicing rows stacked from parts, before any shuffle (issue #25,
``symptoms/sorted_splits.py``, ``_part_note``): with no labels to read, the history shows
the array was stacked block by block, and a slice that cuts one block and leaves another
out holds one part of the data only. The note names the array, its parts, the slice and
the part left out; its fix (one permutation first), applied, mixes both parts into the
slice and is silent. Look-alikes stay silent: a slice on a block boundary, rows made in
one draw, rows shuffled in an earlier cell."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np")

_DATA = (
    "gen = np.random.default_rng(4)\n"
    "warm = gen.normal(5.0, 1.0, size=(300, 3))\n"
    "cold = gen.normal(-5.0, 1.0, size=(300, 3))\n"
    "readings = np.vstack([warm, cold])\n"
    "readings = readings * 2.0\n"
)

_SPLIT = "cut = int(0.8 * len(readings))\nfit_part, check_part = readings[:cut], readings[cut:]\n"


def _part_notes(kernel: KernelSession, cell: str) -> list[str]:
    texts = note_texts(checked_report(run(kernel, cell)))
    return [t for t in texts if "was stacked from" in t]


def test_a_slice_of_stacked_parts_is_named_and_fixed(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    told = _part_notes(kernel, _SPLIT)
    assert len(told) == 1
    text = told[0]
    assert "`readings` was stacked from `warm`, `cold` in that order" in text
    assert "`readings[cut:]` (line 2 of this cell) holds rows 480 to 599 only" in text
    assert "`warm` (rows 0 to 299) never appears in that part" in text
    assert "That part is `check_part`." in text
    fix = "perm = np.random.permutation(len(readings)); readings = readings[perm]"
    assert f"as the first line of the cell: `{fix}`." in text
    assert value_of(kernel, "bool((check_part[:, 0] < 0).all())") is True
    assert _part_notes(kernel, fix + "\n" + _SPLIT) == []
    # Both parts are now in the held-out slice.
    assert value_of(kernel, "bool((check_part[:, 0] > 0).any() and (check_part[:, 0] < 0).any())")


def test_look_alikes_are_quiet(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    on_boundary = "first, second = readings[:300], readings[300:]\n"
    assert _part_notes(kernel, on_boundary) == []
    run(kernel, "plain = gen.normal(size=(600, 3))")
    assert _part_notes(kernel, "a_part, b_part = plain[:480], plain[480:]\n") == []
    run(kernel, _DATA)
    run(kernel, "gen.shuffle(readings)")
    assert _part_notes(kernel, _SPLIT) == []
