"""A vector given where the call documents a matrix (issue #25,
``errors/families_vector_as_matrix.py``): ``tf.linalg.triangular_solve(L, b)`` or
``cholesky_solve(chol, b)`` with a 1-D ``b``. The entry quotes the documented shape, says
the argument is a vector, and makes it a column in the call, taking the result's column
back; each printed fix runs and solves the system. The column written already gets no
entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """lower = tf.constant([[2.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 3.0, 1.0]])
target = tf.constant([4.0, 3.0, 7.0])
spd = tf.constant([[4.0, 1.0], [1.0, 3.0]])
loads = np.array([1.0, 2.0], dtype="float32")
"""


def test_a_triangular_solve_of_a_vector_makes_it_a_column(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    text = failing(kernel, "z = tf.linalg.triangular_solve(lower, target)")["explanation"]
    assert "`target` is a vector of shape (3,)" in text
    assert "documents its `rhs` as `[..., M, N]`" in text
    fix = fix_of(text)
    assert fix == "z = tf.linalg.triangular_solve(lower, target[:, None])[:, 0]"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "np.round(z.numpy(), 4).tolist()") == [2.0, 1.0, 4.0]


def test_a_solve_of_a_computed_vector_makes_it_a_column(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "chol = tf.linalg.cholesky(spd)\n"
        "coef = tf.linalg.cholesky_solve(chol, tf.linalg.matvec(spd, loads))"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`tf.linalg.matvec(spd, loads)` is a vector (one axis)" in text
    fix = fix_of(text)
    assert (
        fix == "coef = tf.linalg.cholesky_solve(chol, tf.linalg.matvec(spd, loads)[:, None])[:, 0]"
    )
    runs_cleanly(kernel, "chol = tf.linalg.cholesky(spd)\n" + fix)
    assert value_of(kernel, "np.round(coef.numpy(), 4).tolist()") == [1.0, 2.0]
    runs_cleanly(kernel, "w = tf.linalg.solve(spd, loads[:, None])")


def test_a_column_taken_out_by_an_integer_index_is_kept_with_a_slice(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, DATA)
    # A NumPy matrix of right-hand sides, one taken out with an integer index inside a
    # call whose other argument is itself computed (TensorFlow's trace holds no frame).
    runs_cleanly(kernel, 'sides = np.array([[4.0, 1.0], [3.0, 0.0], [7.0, 2.0]], "float32")')
    cell = "picked = tf.linalg.triangular_solve(tf.linalg.band_part(lower, -1, 0), sides[:, 0])"
    text = failing(kernel, cell)["explanation"]
    assert "`sides[:, 0]` is a vector of shape (3,): the integer index took the column" in text
    assert "Keep the column with a slice (`sides[:, 0:1]`)" in text
    fix = fix_of(text)
    assert fix == (
        "picked = tf.linalg.triangular_solve(tf.linalg.band_part(lower, -1, 0), sides[:, 0:1])"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "np.round(picked.numpy(), 4).tolist()") == [[2.0], [1.0], [4.0]]
    # The column sliced already: no entry.
    runs_cleanly(kernel, "kept = tf.linalg.solve(spd, tf.constant(sides[:2, 1:2]))")
