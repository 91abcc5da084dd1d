"""A custom layer whose ``compute_output_shape`` says another shape than its ``call``
gives (issue #25, ``errors/declared_output_shape.py``): the next layer is built for the
declared width and refuses the real one while the data fits the model. The entry names
the method and the two shapes; the printed return statement, put in the method, makes
the model run. Data of the wrong width keeps the Input reading."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

CELL = """class Stacked(keras.layers.Layer):
    def call(self, v):
        return keras.ops.concatenate([v, 2 * v, v - 1], axis=-1)

    def compute_output_shape(self, input_shape):
        return input_shape

src = keras.Input(shape=(4,))
widen = keras.Model(src, keras.layers.Dense(2)(Stacked()(src)))
batch = np.zeros((5, 4), dtype="float32")
out = widen(batch)
"""


def test_compute_output_shape_unlike_call(kernel: KernelSession) -> None:
    error = failing(kernel, CELL)
    text = error["explanation"]
    assert "the data fits `widen` (`batch` is (5, 4))" in text
    assert "`Stacked.compute_output_shape` told Keras its output is (None, 4)" in text
    assert "`Stacked.call` gives (5, 12)" in text
    assert "keras.Input(shape=(12,))" not in text
    fixed = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert "return (*input_shape[:-1], 3 * input_shape[-1])" in fixed
    runs_cleanly(
        kernel,
        CELL.replace("return input_shape", "return (*input_shape[:-1], 3 * input_shape[-1])"),
    )
    assert value_of(kernel, "list(out.shape)") == [5, 2]


def test_data_of_another_width_keeps_the_input_reading(kernel: KernelSession) -> None:
    # Data written in the call: its shape is read from what Keras says it received.
    error = failing(
        kernel,
        CELL.replace("out = widen(batch)", "out = widen.predict(np.ones((3, 4)), verbose=0)"),
    )
    assert "`Stacked.call` gives (3, 12)" in error["explanation"]
    right = CELL.replace("return input_shape", "return (*input_shape[:-1], 3 * input_shape[-1])")
    error = failing(kernel, right.replace("np.zeros((5, 4)", "np.zeros((5, 6)"))
    assert "compute_output_shape" not in error["explanation"]
