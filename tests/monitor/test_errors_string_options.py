"""A string option a library refused (issue #25, ``errors/families_arguments.py`` with
``library_checks.compared_strings``): when the message lists no accepted value
(``Resize method is not implemented: gauss``), the values are read from the library
function that raised, the strings it compared the learner's value with, and the closest
is the fix; a TensorFlow op's attribute listed in capitals ("SAME") is the fix of the
same word in lower case for a TensorFlow function, and of a misspelt one for a Keras
layer in the learner's case. Each fix runs; a tie names the values and prints no fix;
the accepted values raise nothing."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_an_option_the_message_does_not_list_is_read_from_the_library(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, "thumbs = np.random.default_rng(3).random((2, 6, 6, 1)).astype('f4')")
    cell = "enlarged = tf.image.resize(thumbs, [12, 12], method='gauss')"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "TensorFlow refused the `method` argument" in text
    assert "the values TensorFlow's code checks it against are" in text
    assert '"bilinear", "nearest", "bicubic", "area"' in text
    assert 'the closest "gaussian"' in text
    fix = fix_of(text)
    assert fix == "enlarged = tf.image.resize(thumbs, [12, 12], method='gaussian')"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(enlarged.shape)") == [2, 12, 12, 1]
    # Two values equally close: named, no fix guessed.
    text = failing(kernel, "tf.image.resize(thumbs, [3, 3], method='lanczos')")["explanation"]
    assert '"lanczos3", "lanczos5"' in text
    assert "Fix:" not in text
    # Look-alike: an accepted method.
    runs_cleanly(kernel, "smaller = tf.image.resize(thumbs, [3, 3], method='lanczos3')")


def test_an_op_attribute_in_capitals_is_the_fix_in_the_right_case(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, "grid = tf.random.uniform((1, 9, 9, 2), seed=5)")
    cell = "pooled = tf.nn.avg_pool2d(grid, 3, 3, padding='valid')"
    text = failing(kernel, cell)["explanation"]
    assert 'it is written "VALID"' in text
    fix = fix_of(text)
    assert fix == "pooled = tf.nn.avg_pool2d(grid, 3, 3, padding='VALID')"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(pooled.shape)") == [1, 3, 3, 2]
    # Under a Keras layer (which lowers the case itself), a misspelt word in the
    # learner's case.
    cell = "squeezed = keras.layers.AveragePooling2D(3, padding='smae')(grid)"
    text = failing(kernel, cell)["explanation"]
    assert "Keras refused the `padding` argument" in text
    fix = fix_of(text)
    assert fix == "squeezed = keras.layers.AveragePooling2D(3, padding='same')(grid)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(squeezed.shape)") == [1, 3, 3, 2]
    # Look-alike: the accepted spellings.
    runs_cleanly(
        kernel,
        "ok_a = tf.nn.avg_pool2d(grid, 3, 3, padding='SAME')\n"
        "ok_b = keras.layers.AveragePooling2D(3, padding='valid')(grid)",
    )
