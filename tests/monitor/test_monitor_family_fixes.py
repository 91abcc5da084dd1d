"""The fixes of error families that had no test running them (issue #25): each fix is
taken from the entry, run in the kernel, and the error is gone. Our own cells."""

from __future__ import annotations

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
)
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")


def test_assign_with_a_value_of_another_shape(kernel: KernelSession) -> None:
    cell = "acc_w = tf.Variable(tf.zeros((2, 2)))\nstep = tf.ones((2,))\nacc_w.assign_sub(step)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "rebinding-variables"
    fix = fix_of(error["explanation"])
    assert fix == "acc_w.assign(acc_w - step)"
    runs_cleanly(kernel, cell.replace("acc_w.assign_sub(step)", fix))


def test_an_update_of_another_shape_gets_no_fix_that_fails_the_same_way(
    kernel: KernelSession,
) -> None:
    # (3, 4) does not broadcast to (4,): ``kernel_b.assign(kernel_b - step_b)`` would
    # raise the same error, so no such fix is printed; the cause is named instead.
    cell = (
        "kernel_b = tf.Variable(tf.zeros((4,)))\n"
        "step_b = tf.ones((3, 4))\n"
        "kernel_b.assign_sub(step_b)"
    )
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "assign(" not in explanation
    assert "does not even broadcast to (4,)" in explanation
    assert "gradients paired with the wrong variables" in explanation
    assert error["course"]["section"] == "gradient-tape"
    failing(
        kernel, cell.replace("kernel_b.assign_sub(step_b)", "kernel_b.assign(kernel_b - step_b)")
    )


def test_a_python_float_against_an_integer_tensor(kernel: KernelSession) -> None:
    cell = "counts = tf.constant([1, 2, 3])\nhalf = counts * 0.5"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "dtype-casting"
    assert "while computing `half`" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "tf.cast(counts, tf.float32)"
    runs_cleanly(kernel, cell.replace("counts * 0.5", f"{fix} * 0.5"))


def test_an_argument_the_input_signature_rejects(kernel: KernelSession) -> None:
    cell = """@tf.function(input_signature=[tf.TensorSpec([16, 3], tf.float32)])
def row_sums(block):
    return tf.reduce_sum(block, 1)

row_sums(tf.ones((10, 3)))
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "input-signature"
    fix = fix_of(error["explanation"])
    assert fix == "tf.TensorSpec([None, 3], tf.float32)"
    runs_cleanly(kernel, cell.replace("tf.TensorSpec([16, 3], tf.float32)", fix))
