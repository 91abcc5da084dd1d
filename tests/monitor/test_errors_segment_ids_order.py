"""Unsorted segment ids given to a sorted segment reduction (``errors/families_segment_ids
.py``): ``tf.math.segment_max(values, ids)`` raises ``segment ids are not increasing``
without naming the argument. The entry says the ids are not sorted and the fix is the
``unsorted_`` reduction with ``num_segments``; the fix runs in the kernel and gives the
per-segment result, and sorted ids get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")


def test_scores_grouped_by_unsorted_owners(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "scores = tf.constant([5.0, 1.0, 7.0, 2.0, 9.0])\nowners = tf.constant([2, 0, 2, 1, 0])",
    )
    error = failing(kernel, "best = tf.math.segment_max(scores, owners)")
    text = error["explanation"]
    assert "`owners` is not in increasing order" in text
    fix = fix_of(text)
    assert fix == (
        "best = tf.math.unsorted_segment_max(scores, owners, "
        "num_segments=tf.reduce_max(owners) + 1)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "best.numpy().tolist()") == [9.0, 2.0, 7.0]
    runs_cleanly(kernel, "fine = tf.math.segment_max(scores, tf.constant([0, 0, 1, 1, 2]))")


def test_rows_averaged_by_numpy_ids_given_by_keyword(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "rows = np.arange(12, dtype='float32').reshape(6, 2)\n"
        "groups = np.array([1, 1, 0, 2, 0, 2])",
    )
    error = failing(kernel, "avg = tf.math.segment_mean(rows, segment_ids=groups)")
    fix = fix_of(error["explanation"])
    assert fix == (
        "avg = tf.math.unsorted_segment_mean(rows, segment_ids=groups, "
        "num_segments=tf.reduce_max(groups) + 1)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "avg.numpy()[:, 0].tolist()") == [6.0, 1.0, 8.0]


def test_an_id_past_the_last_one_is_read_as_unsorted_ids(kernel: KernelSession) -> None:
    # TensorFlow 2.21 reports shuffled ids this way too: an id past the segments it
    # counted from the last id ("Segment id 6 out of range [0, 5), possibly because ...").
    runs_cleanly(
        kernel,
        "clicks = np.array([3.0, 1.0, 4.0, 1.0, 5.0], dtype='float32')\n"
        "session_of = np.array([2, 6, 7, 0, 4])",
    )
    error = failing(kernel, "per_session = tf.math.segment_sum(clicks, session_of)")
    text = error["explanation"]
    assert "`session_of` is not in increasing order" in text, text
    fix = fix_of(text)
    assert fix == (
        "per_session = tf.math.unsorted_segment_sum(clicks, session_of, "
        "num_segments=tf.reduce_max(session_of) + 1)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "per_session.numpy().tolist()") == [
        1.0,
        0.0,
        3.0,
        0.0,
        5.0,
        0.0,
        1.0,
        4.0,
    ]


def test_sorted_ids_out_of_range_are_not_called_unsorted(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "marks = tf.constant([1.0, 2.0, 3.0])\nbins = tf.constant([-1, 0, 1])")
    execution_text = failing(kernel, "by_bin = tf.math.segment_max(marks, bins)")["explanation"]
    assert "unsorted_segment_max" not in execution_text
