"""A reduction given a bool mask (issue #25, ``errors/families_bool_values.py``): the
entry says TensorFlow has no bool sum/mean/max, casts the mask in the learner's line (an
int count, a float rate) or names the bool reduction, and shows the cell's other lines
that repeat it fixed too; each printed fix runs in the kernel and gives the right value.
The same reductions of a cast mask get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """tokens = np.array([[5, 2, 0, 0], [7, 1, 3, 0], [4, 0, 0, 0]])
scores = tf.constant([0.2, 0.9, 0.7, 0.1])
"""


def test_a_count_of_a_mask_is_cast_to_int(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = "present = tokens > 0\nsizes = tf.reduce_sum(present, axis=-1)\nprint(sizes)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert "`present`, a bool array" in text and "has no bool version" in text
    fix = fix_of(text)
    assert fix == "sizes = tf.reduce_sum(tf.cast(present, tf.int32), axis=-1)"
    runs_cleanly(kernel, f"present = tokens > 0\n{fix}")
    assert value_of(kernel, "sizes.numpy().tolist()") == [2, 3, 1]
    # Cast already: no entry.
    runs_cleanly(kernel, "n_kept = tf.reduce_sum(tf.cast(tokens > 0, tf.int32))")


def test_a_rate_of_a_mask_is_cast_to_float_on_every_line(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "confident = scores > 0.5\n"
        "share = tf.reduce_mean(confident)\n"
        "rate_again = tf.reduce_mean(confident)"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "the fraction of True entries" in text
    # The repeated line is named with its own fix, and the fixes together run.
    assert "line 3: `rate_again = tf.reduce_mean(tf.cast(confident, tf.float32))`" in text
    fix = fix_of(text)
    assert fix == "share = tf.reduce_mean(tf.cast(confident, tf.float32))"
    again = "rate_again = tf.reduce_mean(tf.cast(confident, tf.float32))"
    runs_cleanly(kernel, f"confident = scores > 0.5\n{fix}\n{again}")
    assert value_of(kernel, "round(float(share), 3)") == 0.5
    assert value_of(kernel, "round(float(rate_again), 3)") == 0.5


def test_a_maximum_of_a_mask_is_reduce_any(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "padded = tf.reduce_max(tf.equal(tokens, 0), axis=1)")
    text = error["explanation"]
    assert "`tf.reduce_any`" in text
    fix = fix_of(text)
    assert fix == "padded = tf.reduce_any(tf.equal(tokens, 0), axis=1)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "padded.numpy().tolist()") == [True, True, True]
    runs_cleanly(kernel, "full = tf.reduce_all(tokens > 0, axis=1)")


def test_a_rate_of_a_picked_part_of_a_mask(kernel: KernelSession) -> None:
    """``tf.boolean_mask`` (or a gather, a reshape) of a bool tensor is bool too: the
    reduction's argument is that call, cast where it is given."""
    runs_cleanly(
        kernel,
        "passed = tf.constant([True, False, True, True, False])\n"
        "evening = np.array([True, True, False, True, True])",
    )
    cell = "evening_rate = float(tf.reduce_mean(tf.boolean_mask(passed, evening)))"
    text = failing(kernel, cell)["explanation"]
    assert "`tf.boolean_mask(passed, evening)`, a bool tensor" in text
    fix = fix_of(text)
    assert fix == (
        "evening_rate = float(tf.reduce_mean(tf.cast(tf.boolean_mask(passed, evening), "
        "tf.float32)))"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "evening_rate") == 0.5
