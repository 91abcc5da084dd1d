"""A float given to a TensorFlow parameter that must be integer, where the op's message
names the parameter (``size: Tensor conversion requested dtype int32 for Tensor with dtype
float32``) (``errors/families_tensors.py``, ``CONVERSION_DTYPE``). The image beside it is
float32 too, so the dtype alone cannot say which argument is wrong: the parameter the
message names is found among the call's keywords, or by its place in the library
function's signature, and that argument is cast. The fix runs in the kernel and gives the
crop or rotation asked for; the call with an integer argument gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")


def test_a_float_crop_size_beside_a_float_picture(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel, "pic = tf.random.uniform([20, 24, 3])\nhalf = tf.constant([10.0, 12.0, 3.0])"
    )
    error = failing(kernel, "patch = tf.image.random_crop(pic, half)")
    text = error["explanation"]
    assert "the `size` argument of `tf.image.random_crop` must be int32" in text
    assert "tf.cast(pic" not in text
    fix = fix_of(text)
    assert fix == "tf.image.random_crop(pic, tf.cast(half, tf.int32))"
    runs_cleanly(kernel, "patch = " + fix)
    assert value_of(kernel, "patch.shape.as_list()") == [10, 12, 3]
    assert value_of(kernel, "patch.dtype.name") == "float32"
    runs_cleanly(kernel, "fine = tf.image.random_crop(pic, [10, 12, 3])")


def test_a_drawn_float_turn_count_given_positionally(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "board = tf.reshape(tf.range(12.0), [3, 4, 1])\n"
        "turns = tf.random.uniform([], minval=1, maxval=2)",
    )
    error = failing(kernel, "spun = tf.image.rot90(board, turns)")
    text = error["explanation"]
    assert "the `k` argument of `tf.image.rot90` must be int32" in text
    fix = fix_of(text)
    assert fix == "tf.image.rot90(board, tf.cast(turns, tf.int32))"
    runs_cleanly(kernel, "spun = " + fix)
    # One quarter turn: the (3, 4) board becomes (4, 3), values kept as floats.
    assert value_of(kernel, "spun.shape.as_list()") == [4, 3, 1]
    assert value_of(kernel, "float(tf.reduce_sum(spun))") == 66.0
    runs_cleanly(kernel, "also = tf.image.rot90(board, k=tf.cast(turns, tf.int32))")
