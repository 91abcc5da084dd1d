"""A refused operand named back to the array it was built from (issue #25): a logical op
given a 0/1 mask stored as integers (``tf.logical_or(hits, flags_t)`` with ``flags_t =
tf.constant(flags[:, 1])`` and ``flags`` uint8) names ``flags`` and makes the mask bool
where it is built; without an earlier assignment, at the operand. Each printed fix runs
in the kernel and the logical op then works; a bool mask gets no entry."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")


def test_integer_mask_named_back_to_its_array(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "flags = np.array([[0, 1], [1, 0], [1, 1]], dtype='uint8')\n"
        "hits = tf.constant([True, False, False])",
    )
    error = failing(
        kernel,
        "flags_t = tf.constant(flags[:, 1])\nboth = tf.logical_or(hits, flags_t)",
    )
    text = error["explanation"]
    assert error["course"]["section"] == "dtype-casting"
    assert "`flags_t` was built from `flags`, a (3, 2) uint8 NumPy array" in text
    fix = fix_of(text)
    assert fix == "flags_t = tf.constant(flags[:, 1] != 0)"
    runs_cleanly(
        kernel,
        fix + "\nboth = tf.logical_or(hits, flags_t)\n"
        "assert both.numpy().tolist() == [True, False, True]",
    )
    # The look-alike: a mask that is already bool.
    runs_cleanly(kernel, "ok = tf.logical_and(hits, tf.constant(flags[:, 0] > 0))")


def test_integer_operand_of_and_made_bool_in_place(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "seen = tf.constant([True, True, False, True])\n"
        "counts = tf.constant([3, 0, 2, 1], dtype=tf.int32)",
    )
    error = failing(kernel, "kept = seen & counts")
    text = error["explanation"]
    assert "`counts` (the right side of `&`) is int32" in text
    fix = fix_of(text)
    assert fix == "kept = seen & (counts != 0)"
    runs_cleanly(kernel, fix + "\nassert kept.numpy().tolist() == [True, False, False, True]")
    # Two in a previous cell: the origin is named with its cell.
    runs_cleanly(kernel, "valid = np.array([2, 0, 5, 0], dtype='int64')")
    runs_cleanly(kernel, "valid_t = tf.convert_to_tensor(valid)")
    error = failing(kernel, "keep = tf.logical_and(seen, valid_t)")
    text = error["explanation"]
    assert "`valid_t` was built from `valid`" in text
    fix = fix_of(text)
    assert fix == "valid_t = tf.convert_to_tensor(valid != 0)"
    runs_cleanly(
        kernel,
        fix + "\nkeep = tf.logical_and(seen, valid_t)\n"
        "assert keep.numpy().tolist() == [True, False, False, False]",
    )
    runs_cleanly(kernel, "fine = tf.logical_and(seen, seen)")


def test_an_operand_cast_names_the_array_it_was_built_from(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "votes = np.array([4, 1, 3], dtype='int64')\nshares = tf.constant([0.5, 0.25, 0.25])",
    )
    cell = "votes_t = tf.convert_to_tensor(votes)\nscore = tf.reduce_sum(votes_t * shares)"
    text = failing(kernel, cell)["explanation"]
    assert (
        "`votes_t` was built from `votes`, a (3,) int64 NumPy array, by "
        "`votes_t = tf.convert_to_tensor(votes)` (line 1 of this cell)." in text
    )
    told = re.search(r"Cast `votes_t` to float32: `([^`]+)`", text)
    assert told is not None, text
    fix = told.group(1)
    assert fix == "tf.cast(votes_t, tf.float32) * shares"
    runs_cleanly(kernel, cell.replace("votes_t * shares", fix) + "\nassert float(score) == 3.0")
    # An origin in an earlier cell, a column of a table, divided.
    runs_cleanly(kernel, "table = np.array([[2, 9], [6, 9]], dtype='int32')")
    runs_cleanly(kernel, "firsts = tf.constant(table[:, 0])")
    text = failing(kernel, "half = firsts / tf.constant([4.0, 4.0])")["explanation"]
    assert "`firsts` was built from `table`, a (2, 2) int32 NumPy array" in text
    # The look-alike: a float tensor built from a float array.
    runs_cleanly(
        kernel, "ok = tf.constant(table[:, 0] * 1.0, tf.float32) / tf.constant([4.0, 4.0])"
    )
