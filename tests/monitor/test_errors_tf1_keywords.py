"""A TensorFlow 1 keyword given to the TensorFlow 2 function of the same name
(``errors/families_arguments.py``): ``tf.image.resize(..., align_corners=True)`` raises
``unexpected keyword argument``; TF 1's ``tf.compat.v1.image.resize`` documents that
setting, TF 2's has none. The entry names TF 1's function and drops the keyword; the
printed fix runs in the kernel. A keyword TF 1 documents as an old name of another
parameter (``keep_prob``) is not told to be dropped."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_tf1_setting_is_dropped(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "photo = tf.random.uniform((1, 6, 6, 3))")
    cell = "small = tf.image.resize(photo,\n                        [3, 3], align_corners=True)"
    text = failing(kernel, cell)["explanation"]
    assert "`align_corners` is an argument of TensorFlow 1's version, " in text, text
    assert "`tf.compat.v1.image.resize`" in text
    fix = fix_of(text)
    assert fix == "small = tf.image.resize(photo, [3, 3])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "small.shape.as_list()") == [1, 3, 3, 3]


def test_a_setting_in_a_call_of_several_keywords(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "frames = tf.random.uniform((2, 8, 8, 1))\nkern = tf.random.uniform((3, 3, 1, 4))",
    )
    cell = "maps = tf.nn.conv2d(frames, kern, strides=1, use_cudnn_on_gpu=False, padding='SAME')"
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == "maps = tf.nn.conv2d(frames, kern, strides=1, padding='SAME')"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "maps.shape.as_list()") == [2, 8, 8, 4]


def test_an_old_name_of_a_tf2_parameter_is_not_dropped(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "acts = tf.ones((4, 5))")
    text = failing(kernel, "thinned = tf.nn.dropout(acts, keep_prob=0.75)")["explanation"]
    assert "TensorFlow 1's version" not in text, text
