"""Rows sorted by a measured value, then split by position (issue #25,
``symptoms/sorted_splits.py``, ``_sorted_column_note``; and
``training/unprocessed_test_data.py``, which no longer blames a missed preprocessing
when both sides are rows of one array).

Feature rows sorted by one of their columns (descending here, split at ``int(0.75 *
len(...))``) are told with the two ranges and the shuffle before the split; the fix,
applied, gives overlapping parts and no note, and no note says the test data missed a
preprocessing. An evenly spaced time axis split in order, data shuffled before the
split, and a split the cell says is a forecast stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """gen8 = np.random.default_rng(8)
feats = np.stack([gen8.uniform(40, 250, 300), gen8.normal(size=300)], axis=1).astype("float32")
feats = (feats - feats.mean(0)) / feats.std(0)
price = (3 * feats[:, 0] + gen8.normal(size=300)).astype("float32")
rank = np.argsort(-feats[:, 0])
feats, price = feats[rank], price[rank]
grid = np.linspace(0, 10, 200).reshape(-1, 1).astype("float32")
signal = np.sin(grid[:, 0])
"""


def texts(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"]]


def test_sorted_rows_split_by_position(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "cut = int(0.75 * len(feats))\n"
        "feats_tr, price_tr = feats[:cut], price[:cut]\n"
        "feats_te, price_te = feats[cut:], price[cut:]"
    )
    found = texts(cell, kernel)
    assert not any("preprocessing" in t for t in found), found
    [text] = [t for t in found if "sorted by" in t]
    assert text.startswith(
        "`feats` is sorted by its column 0 in descending order (`feats, price = feats[rank], "
        "price[rank]`, cell In["
    )
    assert (
        "line 6), and this cell splits it by position: `feats[:cut]` (`feats_tr`) holds "
        "values from" in text
    )
    assert "`feats[cut:]` (`feats_te`) holds values from" in text
    assert "extrapolation" in text
    fix = fix_in(text)
    assert fix == (
        "perm = np.random.permutation(len(feats)); price, feats = price[perm], feats[perm]"
    )
    assert [t for t in texts(fix + "\n" + cell, kernel) if "sorted by" in t] == []
    # The parts overlap now, and the pairs still match.
    assert value_of(kernel, "bool(feats_te[:, 0].max() > feats_tr[:, 0].min())") is True
    assert value_of(kernel, "bool(np.corrcoef(feats_tr[:, 0], price_tr)[0, 1] > 0.9)") is True


def test_ordered_splits_that_are_right_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # An evenly spaced axis split in order.
    cell = "g_train, g_test = grid[:150], grid[150:]"
    assert [t for t in texts(cell, kernel) if "sorted by" in t] == []
    # Sorted rows, but the cell says the later part is a forecast.
    cell = "# forecast the last quarter\nhead, tail = feats[:225], feats[225:]"
    assert [t for t in texts(cell, kernel) if "sorted by" in t] == []
    # Shuffled before the split.
    run(kernel, "mix = np.random.default_rng(1).permutation(len(feats))\nmixed = feats[mix]")
    cell = "m_train, m_test = mixed[:225], mixed[225:]"
    assert [t for t in texts(cell, kernel) if "sorted by" in t] == []
