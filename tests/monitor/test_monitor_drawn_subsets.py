"""A labelled subset indexed by row numbers drawn from every row, beside a held-out slice
of the same array (issue #25, ``symptoms/overlapping_splits.py``, ``_drawn_subset``): the
subset holds held-out rows. The note names the subset, the index, the slice and the rows
shared; its fix (the draw limited to the rows before the slice), applied, leaves no
shared row and no note. Look-alikes stay silent: a draw from the rows before the slice, a
draw that indexes one array only (a look at a few rows)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np")

_DATA = (
    "gen = np.random.default_rng(8)\n"
    "signals = gen.normal(size=(200, 5))\n"
    "targets = gen.normal(size=200)\n"
)

_CELL = (
    "pick = gen.permutation(len(signals))[:40]\n"
    "sub_x, sub_t = signals[pick], targets[pick]\n"
    "sig_val, tgt_val = signals[150:], targets[150:]\n"
)


def _drawn_notes(kernel: KernelSession, cell: str) -> list[str]:
    texts = note_texts(checked_report(run(kernel, cell)))
    return [t for t in texts if "was drawn from all" in t]


def test_a_subset_drawn_from_every_row_is_named_and_fixed(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    told = _drawn_notes(kernel, _CELL)
    assert len(told) == 1
    text = told[0]
    shared = value_of(kernel, "int((pick >= 150).sum())")
    assert shared >= 3
    assert f"`sub_x` (line 2) takes the rows `pick` names, and {shared} of its 40 rows" in text
    assert (
        "rows 150 to 199 of `signals`, the rows of the held-out `sig_val = signals[150:]`" in text
    )
    assert "`pick` was drawn from all 200 rows" in text
    fixed_line = "pick = gen.permutation(150)[:40]"
    assert f"Fix: `{fixed_line}`." in text
    fixed = _CELL.replace("pick = gen.permutation(len(signals))[:40]", fixed_line)
    assert _drawn_notes(kernel, fixed) == []
    assert value_of(kernel, "int((pick >= 150).sum())") == 0
    assert value_of(kernel, "len(sub_x)") == 40


def test_look_alikes_are_quiet(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    before = _CELL.replace(
        "gen.permutation(len(signals))[:40]", "gen.choice(150, 40, replace=False)"
    )
    assert _drawn_notes(kernel, before) == []
    one_array = (
        "peek = gen.choice(len(signals), 12, replace=False)\n"
        "shown = signals[peek]\n"
        "sig_val = signals[150:]\n"
    )
    assert _drawn_notes(kernel, one_array) == []


def test_a_shuffle_before_the_split_is_quiet(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    shuffled = (
        "order = gen.permutation(len(signals))\n"
        "signals, targets = signals[order], targets[order]\n"
        "sig_val, tgt_val = signals[150:], targets[150:]\n"
        "mixed_x, mixed_t = signals[order[:40]], targets[order[:40]]\n"
    )
    assert _drawn_notes(kernel, shuffled) == []
