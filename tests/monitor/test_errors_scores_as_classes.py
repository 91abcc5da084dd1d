"""Scores given to confusion_matrix where it takes class numbers (issue #25,
``errors/families_scores_as_classes.py``): the entry says one class number per example is
wanted and fixes the learner's line with ``tf.argmax(scores, axis=-1)``; the fix runs in
the kernel and counts every example. Class numbers get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """gold = np.array([0, 2, 1, 1, 0])
raw = np.array([[2.0, -1.0, 0.5], [-0.3, 0.1, 1.2], [0.0, 3.0, -2.0],
                [-1.0, 0.4, 0.2], [1.5, 0.2, -0.7]], dtype="float32")
onehot = np.eye(3)[gold]
"""


def test_logits_given_as_predictions(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "table = tf.math.confusion_matrix(gold, raw, num_classes=3)")
    text = error["explanation"]
    assert "takes one class number per example for `predictions`" in text
    fix = fix_of(text)
    assert fix == "table = tf.math.confusion_matrix(gold, tf.argmax(raw, axis=-1), num_classes=3)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "int(tf.reduce_sum(table))") == 5
    runs_cleanly(kernel, "ok = tf.math.confusion_matrix(gold, np.argmax(raw, axis=1))")


def test_one_hot_labels(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = "grid = tf.math.confusion_matrix(labels=onehot, predictions=np.argmax(raw, 1))"
    error = failing(kernel, cell)
    fix = fix_of(error["explanation"])
    assert fix == (
        "grid = tf.math.confusion_matrix(labels=tf.argmax(onehot, axis=-1), "
        "predictions=np.argmax(raw, 1))"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "int(tf.linalg.trace(grid))") == 5
