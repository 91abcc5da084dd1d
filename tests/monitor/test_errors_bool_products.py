"""Floats multiplied by a bool tensor (``errors/families_bool_values.py``): TensorFlow's
``*`` on a bool tensor is a logical and, so ``token_loss * keep`` comes out bool and the
sum after it fails. The entry says why the product is bool and makes the mask floats
where it is made (not the product cast to a count, a wrong number); the printed fix runs
in the kernel and the sum is the masked mean. A product of two masks (a logical and
meant) keeps the count fix, and a mask made as floats gets no entry."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """token_loss = tf.constant([[0.5, 1.5, 2.0], [0.25, 3.0, 1.0]])
ids = tf.constant([[4, 9, 0], [7, 0, 0]])
"""


def test_a_mask_made_in_the_cell_is_made_as_floats(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "keep = tf.not_equal(ids, 0)\n"
        "masked = token_loss * keep\n"
        "mean_loss = tf.reduce_sum(masked) / tf.reduce_sum(keep)"
    )
    error = failing(kernel, cell)
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert "`masked` is bool because `masked = token_loss * keep` (line 2 of this cell)" in text
    assert "logical and" in text and "`keep`, a bool tensor" in text
    assert "tf.cast(masked" not in text
    fix = fix_of(text)
    assert fix == "keep = tf.cast(tf.not_equal(ids, 0), tf.float32)"
    assert "line 1 of this cell: `keep = tf.cast(" in text
    runs_cleanly(kernel, cell.replace("keep = tf.not_equal(ids, 0)", fix))
    assert value_of(kernel, "round(float(mean_loss), 4)") == 0.75
    # The mask made as floats from the start: no entry.
    runs_cleanly(kernel, cell.replace("keep = tf.not_equal(ids, 0)", fix))


def test_a_mask_from_an_earlier_cell_on_the_left(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "errors = tf.constant([1.0, -2.0, 0.5, 4.0])\n"
        "valid = tf.constant(np.array([True, True, False, True]))",
    )
    cell = "weighted = valid * (errors ** 2)\nprint(tf.reduce_mean(weighted))"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`weighted = valid * (errors ** 2)` (line 1 of this cell)" in text
    fix = fix_of(text)
    assert fix == "valid = tf.cast(tf.constant(np.array([True, True, False, True])), tf.float32)"
    assert re.search(r"cell In\[\d+\]: `valid = tf\.cast", text)
    runs_cleanly(kernel, fix)
    runs_cleanly(kernel, cell)
    assert value_of(kernel, "float(tf.reduce_mean(weighted))") == (1.0 + 4.0 + 16.0) / 4


def test_two_masks_anded_keep_the_count_fix(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "seen = tf.constant([True, False, True, True])\n"
        "liked = tf.constant([True, True, False, True])",
    )
    cell = "both = seen * liked\nn_both = tf.reduce_sum(both)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "logical and" not in text
    fix = fix_of(text)
    assert fix == "n_both = tf.reduce_sum(tf.cast(both, tf.int32))"
    runs_cleanly(kernel, f"both = seen * liked\n{fix}")
    assert value_of(kernel, "int(n_both)") == 2
