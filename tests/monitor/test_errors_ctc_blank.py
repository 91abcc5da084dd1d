"""Sparse CTC labels with no blank class named (``errors/families_time_major.py``,
``SPARSE_LABELS_BLANK``): ``tf.nn.ctc_loss`` given a SparseTensor of labels raises
``Argument `blank_index` must be provided``. The entry reads the labels' values for a
class they never use: 0 (``tf.sparse.from_dense`` drops the zeros of the padding), else
the scores' last class; the printed fix runs in the kernel and gives one loss per
sequence. The call with the blank named gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """phones = np.array([[3, 1, 0], [2, 2, 4], [5, 0, 0], [1, 4, 0]], dtype="int32")
phone_sp = tf.sparse.from_dense(phones)
acoustic = tf.random.stateless_normal((4, 10, 6), seed=(4, 2))
frame_counts = tf.constant([10, 9, 10, 8])
"""


def test_labels_from_dense_get_blank_zero(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = (
        "nll = tf.nn.ctc_loss(phone_sp, acoustic, None, frame_counts,\n"
        "                     logits_time_major=False)"
    )
    error = failing(kernel, cell)
    assert error["course"]["section"] == "labels-and-loss"
    text = error["explanation"]
    assert "has no default blank class for labels given as a SparseTensor (`phone_sp`)" in text
    assert "`phone_sp` never holds 0" in text, text
    fix = fix_of(text)
    assert fix == (
        "nll = tf.nn.ctc_loss(phone_sp, acoustic, None, frame_counts, "
        "logits_time_major=False, blank_index=0)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(nll.shape)") == [4]
    assert value_of(kernel, "bool(tf.reduce_all(tf.math.is_finite(nll)))") is True


def test_labels_using_class_zero_get_the_last_class(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        SETUP + "moves = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [3, 0]],"
        " [0, 2, 1, 3, 0], [4, 2])",
    )
    cell = "cost = tf.nn.ctc_loss(moves, acoustic, None, frame_counts, logits_time_major=False)"
    text = failing(kernel, cell)["explanation"]
    assert "its largest class is 3, so the last class, 5" in text, text
    fix = fix_of(text)
    assert fix == cell[:-1] + ", blank_index=-1)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(cost.shape)") == [4]
    # The blank named: no error, no entry.
    runs_cleanly(
        kernel,
        "ok = tf.nn.ctc_loss(phone_sp, acoustic, None, frame_counts, logits_time_major=False,"
        " blank_index=0)",
    )
