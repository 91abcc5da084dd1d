"""A loss function that sums over the batch axis (issue #25, heldout9's VAE): told at the
first call of the function in the cell that calls it, naming the sum as written and the
fix; the fix applied gives a loss that no longer grows with the batch size and no entry.
A sum over the features averaged over the batch, and a function returning per-column sums
(not a loss), stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

CELL = """def spread_penalty(mu, log_var):
    terms = 0.5 * (tf.square(mu) + tf.exp(log_var) - 1.0 - log_var)
    return tf.reduce_mean(tf.reduce_sum(terms, axis=0))

small = float(spread_penalty(tf.ones((10, 2)), tf.zeros((10, 2))))
large = float(spread_penalty(tf.ones((40, 2)), tf.zeros((40, 2))))
"""


def sum_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "reducing-tensors"
    ]


def test_sum_over_the_batch_axis(kernel: KernelSession) -> None:
    notes = sum_notes(checked_report(run(kernel, CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.reduce_sum(terms, axis=0)` (line 3 of this cell, in `spread_penalty`) sums over "
        "the batch axis: `terms` is (10, 2), one row per example"
    ), text
    fix = "tf.reduce_mean(tf.reduce_sum(terms, axis=1))"
    assert f"`{fix}`" in text
    assert value_of(kernel, "large") == 4 * value_of(kernel, "small")
    fixed = CELL.replace("tf.reduce_mean(tf.reduce_sum(terms, axis=0))", fix)
    assert sum_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "large") == value_of(kernel, "small") == 1.0


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    per_column = """def column_totals(table, weights):
    return tf.reduce_sum(table * weights, axis=0)

totals = column_totals(tf.ones((6, 3)), tf.ones((6, 3)))
"""
    assert sum_notes(checked_report(run(kernel, per_column))) == []
