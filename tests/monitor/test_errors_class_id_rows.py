"""Class ids, one per row, set against a table of one score per class (issue #25,
``errors/class_id_rows.py``): ``(N, C) - (N,)`` fails on the shapes, and when the vector
holds class ids (integers, through a ``tf.cast`` or not, or whole-number floats of
several values, all in ``[0, C)``) the entry says so and fixes it with one-hot rows of the
ids, never with a new axis. The fixed cells run and compute what was meant. Real-valued
per-row values, a vector of one repeated value and whole-number floats in a product keep
the broadcast family's reading (its axis, or a per-row weight); the correct cell is
silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

IDS = "class ids set against one score per class"
SHARES = (
    "shares = tf.nn.softmax(tf.reshape(tf.range(24, dtype=tf.float32) / 10.0, (6, 4)))\n"
    "tier = np.array([0, 3, 1, 2, 2, 0])"
)


def test_integer_ids_minus_probabilities_become_one_hot_rows(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SHARES)
    cell = "gap = shares - tier"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`tier` holds 6 integers from 0 to 3, one per row of `shares`" in text, text
    assert IDS in text and "SparseCategoricalCrossentropy" in text
    assert "expand_dims" not in text and "[:, None]" not in text
    assert error["course"]["section"] == "labels-and-loss"
    fix = fix_of(text)
    assert fix == "gap = shares - tf.one_hot(tier, 4)"
    runs_cleanly(kernel, fix)
    # Each row: probabilities that sum to 1, minus a one-hot row: 0 in all.
    assert value_of(kernel, "bool(np.abs(gap.numpy().sum(axis=1)).max() < 1e-6)")
    assert value_of(kernel, "float(gap[1, 3])") == pytest.approx(
        value_of(kernel, "float(shares[1, 3]) - 1.0")
    )


def test_a_cast_of_ids_in_a_product_inside_a_function(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SHARES + "\nn_tiers = 4")
    cell = (
        "def true_share(probs, target):\n"
        "    return tf.reduce_sum(probs * tf.cast(target, tf.float32), axis=1)\n"
        "picked = true_share(shares, tf.constant(tier))  # n_tiers columns"
    )
    text = failing(kernel, cell)["explanation"]
    assert (
        "`target` (cast to float32 there) holds 6 integers from 0 to 3, one per row of `probs`"
        in text
    ), text
    assert "multiply every score of a row by the row's class id" in text
    fix = fix_of(text)
    assert fix == "return tf.reduce_sum(probs * tf.one_hot(target, n_tiers), axis=1)"
    old = "return tf.reduce_sum(probs * tf.cast(target, tf.float32), axis=1)"
    runs_cleanly(kernel, cell.replace(old, fix))
    expected = value_of(kernel, "[float(shares[i, t]) for i, t in enumerate(tier)]")
    assert value_of(kernel, "picked.numpy().tolist()") == pytest.approx(expected)


def test_whole_number_floats_of_several_classes_are_ids(kernel: KernelSession) -> None:
    cell = (
        "marks = tf.reshape(tf.range(15, dtype=tf.float64), (5, 3)) / 15.0\n"
        "grade = tf.constant([2.0, 0.0, 1.0, 1.0, 2.0], dtype=tf.float64)\n"
        "miss = tf.math.squared_difference(marks, grade)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`grade` holds 5 whole numbers from 0 to 2" in text, text
    fix = fix_of(text)
    assert fix == (
        "miss = tf.math.squared_difference(marks, "
        "tf.one_hot(tf.cast(grade, tf.int32), 3, dtype=tf.float64))"
    )
    runs_cleanly(kernel, cell.replace("miss = tf.math.squared_difference(marks, grade)", fix))
    assert value_of(kernel, "float(miss[0, 2])") == pytest.approx((2 / 15 - 1.0) ** 2)


def test_per_row_values_keep_their_axis_or_weight_reading(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "levels = tf.ones((5, 3))\n"
        "offsets = tf.constant([0.5, 1.5, 0.25, 2.0, 1.0])\n"
        "same = tf.ones((5,))\n"
        "counts = tf.constant([1.0, 2.0, 0.0, 1.0, 2.0])\n"
        "far_ids = np.array([0, 4, 1, 2, 7])",
    )
    # Real-valued offsets, one per row: the axis is the fix.
    text = failing(kernel, "shifted = levels - offsets")["explanation"]
    assert IDS not in text and "one_hot" not in text
    assert fix_of(text) == "levels - tf.expand_dims(offsets, -1)"
    # One repeated whole number: nothing says it is a class.
    text = failing(kernel, "flat = levels - same")["explanation"]
    assert IDS not in text and fix_of(text) == "levels - tf.expand_dims(same, -1)"
    # Whole-number floats scaling rows (counts): a per-row weight, not ids.
    text = failing(kernel, "counted = levels * counts")["explanation"]
    assert IDS not in text
    assert fix_of(text) == "counted = levels * counts[:, None]"
    # Integers outside [0, 3): not ids of these 3 columns.
    text = failing(kernel, "beyond = levels - far_ids")["explanation"]
    assert IDS not in text
    # The correct cell: one-hot rows of the ids.
    runs_cleanly(kernel, "ok = levels - tf.one_hot(np.array([0, 2, 1, 2, 0]), 3)")
