"""A dtype clash inside a TensorFlow function between two of its arguments (issue #25):
``tf.nn.sigmoid_cross_entropy_with_logits(labels=flags, logits=scores)`` with integer
labels fails on a ``Mul`` the learner never wrote. The entry names the argument of the
refused dtype as the call gives it (``labels=``) and casts it there; the fix runs in the
kernel, and the call with float labels gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")


def test_integer_labels_given_to_a_logits_loss(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "flags = np.array([0, 1, 1, 0, 1], dtype='int32')\nscores = tf.random.normal([5])",
    )
    error = failing(
        kernel,
        "pointwise = tf.nn.sigmoid_cross_entropy_with_logits(labels=flags, logits=scores)",
    )
    text = error["explanation"]
    assert error["course"]["section"] == "dtype-casting"
    assert "`flags` (`labels=`) is the int32 one" in text
    fix = fix_of(text)
    assert fix == (
        "pointwise = tf.nn.sigmoid_cross_entropy_with_logits("
        "labels=tf.cast(flags, tf.float32), logits=scores)"
    )
    runs_cleanly(kernel, fix + "\nassert pointwise.shape == (5,)")
    runs_cleanly(
        kernel,
        "soft = tf.nn.sigmoid_cross_entropy_with_logits("
        "labels=np.array([0.0, 1.0, 1.0, 0.0, 1.0], 'float32'), logits=scores)",
    )
