"""A sparse tensor holding the same position twice, made dense (issue #25,
``errors/families_sparse_duplicates.py``): the entry names the sparse tensor and the
repeated position, says where repeats come from, and sums them with ``tf.scatter_nd``.
Each printed fix runs and adds the repeated values; a sparse tensor with distinct
positions gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_repeated_word_counts_are_summed(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "bag = tf.SparseTensor(indices=[[0, 1], [0, 1], [2, 3]], values=[1.0, 1.0, 4.0], "
        "dense_shape=[3, 5])",
    )
    error = failing(kernel, "counts = tf.sparse.to_dense(bag)")
    assert error["course"]["section"] == "joining-indexing"
    text = error["explanation"]
    assert "`bag` holds position (0, 1) more than once" in text
    fix = fix_of(text)
    assert fix == "counts = tf.scatter_nd(bag.indices, bag.values, bag.dense_shape)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "counts.numpy()[0].tolist()") == [0.0, 2.0, 0.0, 0.0, 0.0]


def test_repeated_ratings_of_an_item_are_summed(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "pairs = np.array([[1, 0], [0, 2], [1, 0]], dtype=np.int64)\n"
        "ratings = tf.sparse.reorder(tf.SparseTensor(pairs, tf.constant([2, 3, 5]), [2, 3]))",
    )
    error = failing(kernel, "matrix = tf.sparse.to_dense(ratings)")
    text = error["explanation"]
    assert "`ratings` holds position (1, 0) more than once" in text
    fix = fix_of(text)
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "matrix.numpy().tolist()") == [[0, 0, 3], [7, 0, 0]]


def test_distinct_positions_get_no_entry(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "single = tf.SparseTensor(indices=[[0, 1], [2, 3]], values=[1.0, 4.0], "
        "dense_shape=[3, 5])\n"
        "dense = tf.sparse.to_dense(single)",
    )
