"""A reduction asked for an axis its input does not have (issue #25): the entry names the
input's axes and the written axis that does not exist; with other axes written beside it,
the fix reduces over those, and the corrected cell runs and gives the intended values. A
single axis out of range gets no guessed fix; a reduction over existing axes is silent."""

from __future__ import annotations

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    error_of_failing_cell,
    fix_in,
    runs_without_error_entry,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\n",
    after_load="",
)

SETUP = """rainfall = tf.reshape(tf.range(40, dtype=tf.float32), (8, 5))  # 8 stations, 5 days
"""


def test_list_of_axes_with_a_missing_one_is_fixed_to_the_existing(
    kernel: KernelSession,
) -> None:
    runs_without_error_entry(kernel, SETUP)
    cell = "daily_total = tf.reduce_sum(rainfall, axis=(0, 2))\n"
    error = error_of_failing_cell(kernel, cell)
    text = error["explanation"]
    assert "`rainfall` has 2 axes, axes 0 to 1 (or -2 to -1 counted from the end)" in text
    assert "axis 2 in `(0, 2)` does not exist" in text
    assert "it keeps axis 1" in text
    assert error["course"]["section"] == "reducing-tensors"
    fix = fix_in(text)
    assert fix == "daily_total = tf.reduce_sum(rainfall, axis=0)"
    runs_without_error_entry(kernel, fix)
    # One total per day, over the stations: the intended values.
    assert value_of(kernel, "daily_total.numpy().tolist()") == [140.0, 148.0, 156.0, 164.0, 172.0]


def test_numpy_method_with_a_missing_axis(kernel: KernelSession) -> None:
    runs_without_error_entry(kernel, SETUP + "levels = rainfall.numpy()\n")
    cell = "peak = levels.max(axis=(1, -3))\n"
    error = error_of_failing_cell(kernel, cell)
    text = error["explanation"]
    assert "axis -3 in `(1, -3)` does not exist" in text
    fix = fix_in(text)
    assert fix == "peak = levels.max(axis=1)"
    runs_without_error_entry(kernel, fix)
    assert value_of(kernel, "peak.tolist()") == [4.0, 9.0, 14.0, 19.0, 24.0, 29.0, 34.0, 39.0]


def test_single_missing_axis_gets_no_guessed_fix(kernel: KernelSession) -> None:
    runs_without_error_entry(kernel, SETUP)
    error = error_of_failing_cell(kernel, "spread = tf.math.reduce_std(rainfall, axis=2)\n")
    text = error["explanation"]
    # The refused-argument reading: the argument as written and the range the rank gives.
    assert "TensorFlow refused the `axis` argument" in text
    assert "the input has 2 axes, so an axis is from -2 to 1" in text
    assert "Fix:" not in text


def test_reduction_over_existing_axes_is_silent(kernel: KernelSession) -> None:
    cell = "overall = tf.reduce_mean(rainfall, axis=[0, 1])\nlast = np.sum(rainfall, axis=-1)\n"
    runs_without_error_entry(kernel, SETUP + cell)
