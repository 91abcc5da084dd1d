"""Predicted classes taken with argmax over the examples' axis (issue #25,
``errors/families_argmax_axis.py``): the error comes where those "classes" meet the
labels (a confusion matrix); the entry names the argmax's assignment, the scores' shape
and the axis, and its fix (the argmax over the last axis) makes the cell run. The argmax
over the class axis is quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SCORES = """rng = np.random.default_rng(3)
test_probs = rng.random((40, 4)).astype("float32")
test_labels = rng.integers(0, 4, size=40)
"""


def test_argmax_over_the_examples_is_named_where_it_was_taken(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SCORES)
    argmax = "test_classes = np.argmax(test_probs, axis=0)"
    cell = (
        f"{argmax}\nconfusion = tf.math.confusion_matrix(test_labels, test_classes, num_classes=4)"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "class-axis"
    assert f"`test_classes` was set by `{argmax}` (line 1 of this cell)" in text
    assert "`test_probs` is a (40, 4) float32 NumPy array, one row of 4 class scores" in text
    assert "argmax over axis 0 picks, for each of the 4 classes, the example" in text
    fix = fix_of(text)
    assert fix == "test_classes = np.argmax(test_probs, axis=-1)"
    runs_cleanly(kernel, cell.replace(argmax, fix))
    assert value_of(kernel, "int(tf.reduce_sum(confusion))") == 40
    # TensorFlow's argmax takes axis 0 when none is written: the same mistake, named.
    cell = "tf_classes = tf.argmax(test_probs)\ntf.math.confusion_matrix(test_labels, tf_classes)"
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == "tf_classes = tf.argmax(test_probs, axis=-1)"
    runs_cleanly(kernel, cell.replace("tf_classes = tf.argmax(test_probs)", fix))
    # The look-alike: classes taken over the class axis are quiet.
    runs_cleanly(
        kernel,
        "ok_classes = np.argmax(test_probs, axis=1)\n"
        "tf.math.confusion_matrix(test_labels, ok_classes, num_classes=4)",
    )
