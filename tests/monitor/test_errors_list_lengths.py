"""List arguments written one per spatial axis where the op takes one per axis (issue #25,
``errors/families_list_lengths.py``): TensorFlow names one op attribute (``rates`` for
``dilations``, ``ksizes`` for ``sizes``), the entry reads the call's list arguments and
names every one that is too short, with the fix giving the batch and channel axes a 1.
The fix applied runs. Lists of the right length stay out of the entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """volume = tf.random.normal((2, 8, 8, 8, 3))
kernel3d = tf.random.normal((3, 3, 3, 3, 4))
photos = tf.random.normal((1, 12, 12, 2))
step = 2
"""


def test_three_strides_for_a_five_axis_input(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = (
        'feature_map = tf.nn.conv3d(volume, kernel3d, strides=[step, step, step], padding="SAME")'
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "shape-dtype-device"
    assert "`tf.nn.conv3d` takes `strides` as 5 numbers, one per axis of its input" in text, text
    assert "`strides=[step, step, step]` has 3 entries" in text
    assert "`padding`" not in text
    fix = fix_of(text)
    assert fix == (
        "feature_map = tf.nn.conv3d(volume, kernel3d, strides=[1, step, step, step, 1], "
        'padding="SAME")'
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(feature_map.shape)") == [2, 4, 4, 4, 4]


def test_every_short_list_is_named_not_only_the_one_the_message_names(
    kernel: KernelSession,
) -> None:
    run(kernel, SETUP)
    cell = (
        "eroded = tf.nn.dilation2d(photos, tf.zeros((3, 3, 2)), strides=[1, 1], "
        'padding="SAME", data_format="NHWC", dilations=(2, 2))'
    )
    text = failing(kernel, cell)["explanation"]
    assert "takes `strides` and `dilations` as 4 numbers each" in text, text
    fix = fix_of(text)
    assert "strides=[1, 1, 1, 1]" in fix and "dilations=[1, 2, 2, 1]" in fix
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(eroded.shape)") == [1, 12, 12, 2]


def test_lists_of_the_right_length_are_not_named(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = (
        "grid = tf.image.extract_patches(photos, sizes=[1, 4, 4, 1], strides=[4, 4], "
        'rates=[1, 1, 1, 1], padding="VALID")'
    )
    text = failing(kernel, cell)["explanation"]
    assert "`strides=[4, 4]` has 2 entries" in text, text
    assert "`sizes=" not in text and "`rates=" not in text
    fix = fix_of(text)
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(grid.shape)") == [1, 3, 3, 32]
