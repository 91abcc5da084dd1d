"""A sum weighted by counts divided by the number of counts (issue #25,
``symptoms/weighted_averages.py``).

The note is told where the division is written; the fix, applied, gives back identical
values averaged. Look-alikes stay silent: the division by the counts' total, a plain mean,
importance weights (not named as counts) divided by their number."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

POOLED = """def pooled_mean(batch_means, batch_counts):
    \"\"\"The mean over all examples from per-batch means.\"\"\"
    return sum(m * c for m, c in zip(batch_means, batch_counts)) / len(batch_counts)"""


def average_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "weighted average" in n["text"]]


def test_a_count_weighted_sum_divided_by_the_number_of_counts(kernel: KernelSession) -> None:
    [text] = average_notes(POOLED, kernel)
    assert text.startswith(
        "`sum(m * c for m, c in zip(batch_means, batch_counts)) / len(batch_counts)` (line 3 "
        "of this cell, in `pooled_mean`) weights each value by its count in `batch_counts`"
    ), text
    fix = fix_in(text)
    assert fix == "sum(m * c for m, c in zip(batch_means, batch_counts)) / sum(batch_counts)"
    fixed = POOLED.replace(
        "sum(m * c for m, c in zip(batch_means, batch_counts)) / len(batch_counts)", fix
    )
    assert average_notes(fixed, kernel) == []
    assert value_of(kernel, "float(pooled_mean([np.float32(2.5)] * 3, [40, 60, 100]))") == 2.5
    # Arrays weighted by client sizes, the counts first in the product.
    cell = """def merge(client_arrays, client_sizes):
    return [sum(n * a for n, a in zip(client_sizes, group)) / len(client_sizes)
            for group in zip(*client_arrays)]"""
    [text] = average_notes(cell, kernel)
    assert "`len(client_sizes)`" in text and "in `merge`" in text


def test_right_divisions_and_other_weights_stay_silent(kernel: KernelSession) -> None:
    for cell in (
        "def mix(vals, sizes):\n    return sum(v * s for v, s in zip(vals, sizes)) / sum(sizes)",
        "def plain(vals):\n    return sum(v for v in vals) / len(vals)",
        # Importance weights: dividing by their number is the estimator meant.
        "def estimate(ratios, values):\n"
        "    return sum(r * v for r, v in zip(ratios, values)) / len(ratios)",
    ):
        assert average_notes(cell, kernel) == [], cell
