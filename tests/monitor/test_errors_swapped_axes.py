"""A 2-D argument with its two axes the other way round (issue #25): when swapping its
axes makes every documented shape of the call agree (``[N, ndims]`` with ``dense_shape``
making ``ndims`` 2), the entry names that argument as swapped, with its documented shape,
and prints the call with it transposed (``.T`` for NumPy, ``tf.transpose`` for a tensor);
the fix runs and gives the right value. A call whose arguments already agree is silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_numpy_coordinates_stacked_as_rows_are_transposed(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "rows_at = np.array([0, 2, 3, 1])\ncols_at = np.array([1, 0, 2, 3])\n"
        "cells = np.stack([rows_at, cols_at])\nweights4 = np.arange(4, dtype='float32') + 1\n"
        "size = 4",
    )
    cell = (
        "grid = tf.sparse.SparseTensor(indices=cells, values=weights4, "
        "dense_shape=[size, size])\nprint(grid.shape)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`cells` is (2, 4)" in text, text
    assert "(4, 2), the same two sizes the other way round" in text, text
    assert "`dense_shape` (your" not in text, text
    fix = fix_of(text)
    assert fix == (
        "grid = tf.sparse.SparseTensor(indices=cells.T, values=weights4, dense_shape=[size, size])"
    )
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))
    dense = value_of(kernel, "tf.sparse.to_dense(tf.sparse.reorder(grid)).numpy().tolist()")
    assert dense[0][1] == 1.0 and dense[2][0] == 2.0 and dense[3][2] == 3.0
    # Look-alike: stacked along axis 1, no entry.
    runs_cleanly(
        kernel,
        "grid = tf.sparse.SparseTensor(indices=np.stack([rows_at, cols_at], axis=1), "
        "values=weights4, dense_shape=[size, size])",
    )


def test_a_tensor_of_coordinates_is_transposed_with_tf(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "xs = tf.constant([0, 3], tf.int64)\nys = tf.constant([1, 2], tf.int64)\n"
        "zs = tf.constant([2, 0], tf.int64)\nwhere = tf.stack([xs, ys, zs])\n"
        "amounts2 = tf.constant([5.0, 6.0])",
    )
    cell = "cube = tf.sparse.SparseTensor(where, amounts2, [4, 4, 4])"
    text = failing(kernel, cell)["explanation"]
    assert "`where` is (3, 2)" in text, text
    fix = fix_of(text)
    assert fix == "cube = tf.sparse.SparseTensor(tf.transpose(where), amounts2, [4, 4, 4])"
    runs_cleanly(kernel, fix)
    dense = value_of(kernel, "tf.sparse.to_dense(cube).numpy().tolist()")
    assert dense[0][1][2] == 5.0 and dense[3][2][0] == 6.0
    # Look-alike: one row per point, no entry.
    runs_cleanly(
        kernel, "cube = tf.sparse.SparseTensor(tf.stack([xs, ys, zs], axis=1), amounts2, [4, 4, 4])"
    )
