"""Rows selected on one side of a call or operation that pairs rows (issue #25,
``errors/families_selected_rows.py``): ``loss(y[keep], scores)``, ``a[idx] - b``. The
entry says what the selection keeps, that the other side goes in whole, and applies the
same mask or indices to it (``tf.boolean_mask``/``tf.gather`` for a tensor, brackets for
an array); the fixed cell runs and gives the value of the selected rows. A selection on
both sides runs silently; two sides of unrelated row counts are not this family's."""

from __future__ import annotations

import numpy as np
import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SAME = "must be made on the other too"


def test_integer_indices_on_one_side_of_a_difference(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "prices = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0], 'float32')\n"
        "estimates = tf.constant([2.5, 1.5, 4.0, 0.5, 5.5, 8.0, 2.0])\n"
        "picked = np.array([0, 4, 5])",
    )
    cell = "err = tf.abs(prices[picked] - estimates)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`prices[picked]` keeps the 3 entries of `prices` that `picked` lists (of 7)" in text
    assert "`estimates` goes in whole, all 7 entries" in text and SAME in text, text
    assert error["course"]["section"] == "joining-indexing"
    fix = fix_of(text)
    assert fix == "err = tf.abs(prices[picked] - tf.gather(estimates, picked))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "err.numpy().tolist()") == [0.5, 0.5, 1.0]


def test_a_mask_inside_a_loss_function_on_the_predictions_side(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "onehot_targets = np.eye(4, dtype='float32')[[0, 1, 2, 3, 0, 1]]\n"
        "scores6 = tf.constant(np.log(np.eye(4, dtype='float32')[[0, 1, 2, 3, 0, 1]] * 0.9"
        " + 0.025))\n"
        "visible = np.array([True, False, False, True, False, False])\n"
        "cce = keras.losses.CategoricalCrossentropy()",
    )
    cell = (
        "def seen_loss(targets, out, seen):\n"
        "    return cce(targets, tf.boolean_mask(tf.nn.softmax(out), seen))\n"
        "val = seen_loss(onehot_targets, scores6, visible)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "keeps the 2 rows of `tf.nn.softmax(out)` where `seen` is True (of 6)" in text, text
    assert "`targets` goes in whole, all 6 rows" in text
    fix = fix_of(text)
    assert fix == "return cce(targets[seen], tf.boolean_mask(tf.nn.softmax(out), seen))"
    runs_cleanly(
        kernel,
        cell.replace("return cce(targets, tf.boolean_mask(tf.nn.softmax(out), seen))", fix),
    )
    # Rows 0 and 3 are right with probability 0.925 (softmax of the logs, renormalised).
    assert value_of(kernel, "float(val)") == pytest.approx(-np.log(0.925), rel=1e-4)


def test_both_sides_selected_and_unrelated_counts_stay_out(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "tgt = np.eye(3, dtype='float32')[[0, 1, 2, 0, 1]]\n"
        "probs5 = tf.fill((5, 3), 1 / 3)\n"
        "chosen = np.array([True, True, False, False, True])\n"
        "xent = keras.losses.CategoricalCrossentropy()",
    )
    runs_cleanly(kernel, "ok = xent(tgt[chosen], tf.boolean_mask(probs5, chosen))")
    text = failing(kernel, "odd = xent(tgt[:4], tf.boolean_mask(probs5, chosen))")["explanation"]
    assert SAME not in text
