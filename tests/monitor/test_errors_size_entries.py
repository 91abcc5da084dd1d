"""A size list with fewer entries than the value has axes (``errors/families_size_entries
.py``): ``tf.image.random_crop(photo, [24, 24])`` on a ``(30, 30, 3)`` photo fails inside
the op with ``Incompatible shapes: [3] vs. [2]``, which reads as a broadcast the learner
never wrote. The entry says one size per axis is needed and the fix adds the missing axes'
own sizes; it runs in the kernel and gives the crop, and a full size list gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")


def test_a_crop_size_without_the_channels(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "photo = tf.random.uniform([30, 30, 3])")
    error = failing(kernel, "piece = tf.image.random_crop(photo, [24, 24])")
    text = error["explanation"]
    assert "needs one size per axis of `photo`, 3 for its (30, 30, 3)" in text
    fix = fix_of(text)
    assert fix == "piece = tf.image.random_crop(photo, [24, 24, 3])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "piece.shape.as_list()") == [24, 24, 3]
    runs_cleanly(kernel, "whole = tf.image.random_crop(photo, [24, 24, 3])")


def test_a_batch_crop_size_by_keyword(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "stack = tf.zeros([5, 20, 20, 1])")
    error = failing(kernel, "cut = tf.image.random_crop(stack, size=[5, 16, 16])")
    fix = fix_of(error["explanation"])
    assert fix == "cut = tf.image.random_crop(stack, size=[5, 16, 16, 1])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "cut.shape.as_list()") == [5, 16, 16, 1]
