"""Two arguments of one op in different dtypes where TensorFlow numbers an input past the
first two (issue #25, ``errors/families_operand_dtypes.py``): sparse tensors are several
inputs to an op, so the message's number is not the argument's position. The entry names
both arguments with their dtypes and casts the refused one; each fix runs in the kernel.
Arguments of one dtype get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """guess = tf.sparse.from_dense(tf.constant([[1, 2, 0], [3, 0, 0]], tf.int64))
answer = tf.sparse.from_dense(tf.constant([[1, 2, 2], [3, 1, 0]], tf.int32))
counts = tf.sparse.from_dense(tf.constant([[1.0, 0.0], [0.0, 2.0]]))
weights = tf.constant([[0.5], [2.0]], tf.float64)
extra = tf.sparse.from_dense(tf.constant([[0.0, 1.0], [1.0, 0.0]], tf.float64))
"""


def test_sparse_sequences_of_two_integer_dtypes(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "dist = tf.edit_distance(guess, answer, normalize=False)")
    text = error["explanation"]
    assert (
        "`tf.edit_distance` needs its arguments in one dtype: `guess` is int64 and `answer` "
        "is int32 (the op's input #4)"
    ) in text, text
    fix = fix_of(text)
    assert fix == "dist = tf.edit_distance(guess, tf.cast(answer, tf.int64), normalize=False)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "dist.numpy().tolist()") == [1.0, 1.0]


def test_a_sparse_float32_times_a_float64_matrix(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "scaled = tf.sparse.sparse_dense_matmul(counts, weights)")
    text = error["explanation"]
    assert "`counts` is float32 and `weights` is float64" in text, text
    fix = fix_of(text)
    assert fix == "scaled = tf.sparse.sparse_dense_matmul(counts, tf.cast(weights, tf.float32))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "scaled.numpy().tolist()") == [[0.5], [4.0]]


def test_sparse_sums_of_two_float_dtypes(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    text = failing(kernel, "total = tf.sparse.add(counts, extra)")["explanation"]
    fix = fix_of(text)
    assert fix == "total = tf.sparse.add(counts, tf.cast(extra, tf.float32))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "tf.sparse.to_dense(total).numpy().tolist()") == [
        [1.0, 1.0],
        [1.0, 2.0],
    ]


def test_arguments_of_one_dtype_stay_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(
        kernel,
        "d = tf.edit_distance(guess, tf.cast(answer, tf.int64))\n"
        "s = tf.sparse.add(tf.cast(counts, tf.float64), extra)",
    )
