"""``tf.convert_to_tensor(t, dtype=...)`` given a tensor of another dtype (issue #25,
``errors/families_tensors.py``, ``CONVERSION_DTYPE``): the conversion makes tensors from
Python numbers and arrays but never changes a tensor's dtype, so the entry names the call
and its tensor and the fix replaces the call by ``tf.cast`` (not a cast wrapped inside the
conversion). The fix runs and gives the values in the asked dtype; the conversion of a
NumPy array, and of a tensor already in that dtype, stay silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")


def test_a_double_tensor_converted_to_float32(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "heights = tf.constant(np.linspace(1.5, 2.0, 6))")
    wrong = "heights_f = tf.convert_to_tensor(heights, dtype=tf.float32)"
    cell = wrong + "\nmean_h = float(tf.reduce_mean(heights_f))"
    text = failing(kernel, cell)["explanation"]
    assert (
        "`tf.convert_to_tensor` makes a tensor from Python numbers or a NumPy array in the "
        "dtype it is asked for, but `heights` is already a float64 tensor, and "
        "`tf.convert_to_tensor` never changes the dtype of a tensor" in text
    ), text
    assert "`tf` is" not in text and "variable keeps" not in text
    fix = fix_of(text)
    assert fix == "heights_f = tf.cast(heights, tf.float32)"
    runs_cleanly(
        kernel, cell.replace("heights_f = tf.convert_to_tensor(heights, dtype=tf.float32)", fix)
    )
    assert value_of(kernel, "heights_f.dtype.name") == "float32"
    assert value_of(kernel, "round(mean_h, 4)") == 1.75


def test_an_integer_tensor_given_a_dtype_positionally(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "votes = tf.constant([3, 0, 5, 2])")
    text = failing(kernel, "share = tf.convert_to_tensor(votes, tf.float32) / 10.0")["explanation"]
    assert "`votes` is already an int32 tensor" in text, text
    fix = fix_of(text)
    assert fix == "share = tf.cast(votes, tf.float32) / 10.0"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "[round(v, 2) for v in share.numpy().tolist()]") == [0.3, 0.0, 0.5, 0.2]


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "grid = tf.convert_to_tensor(np.ones((2, 3)), dtype=tf.float32)")
    runs_cleanly(kernel, "same = tf.convert_to_tensor(grid, dtype=tf.float32)")
    assert value_of(kernel, "same.dtype.name") == "float32"
