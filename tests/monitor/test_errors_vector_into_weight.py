"""A vector of n values reaching a custom layer's matmul with its weight (issue #25,
``errors/families_shapes.py``, the matmul family's rank-1 reading): one example without
its batch axis when the weight expects n features, n examples of one feature when it
expects 1, sizes that disagree otherwise; and, when the layer was built on the vector
itself, both readings with their edits. Each printed fix is applied and runs."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

LAYER = """class Projection(keras.layers.Layer):
    def __init__(self, width):
        super().__init__()
        self.width = width

    def build(self, input_shape):
        self.proj = self.add_weight(shape=(input_shape[-1], self.width), name="proj")

    def call(self, feats):
        return tf.matmul(feats, self.proj)


one_in = Projection(3)
one_in.build((None, 1))
seven_in = Projection(2)
seven_in.build((None, 7))
"""


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])


def test_batch_of_scalars_given_to_a_one_feature_layer(kernel: KernelSession) -> None:
    runs_cleanly(kernel, LAYER)
    cell = "temps = np.arange(6, dtype='float32')\nout = one_in(temps)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "these are 6 examples of one feature each, missing their feature axis" in text
    assert "expand_dims(feats, 0)" not in text
    assert error["course"]["section"] == "batch-dimension"
    assert spans(text)[-1] == "one_in(temps[:, None])"
    runs_cleanly(kernel, "temps = np.arange(6, dtype='float32')\nout = one_in(temps[:, None])")
    assert value_of(kernel, "list(out.shape)") == [6, 3]


def test_one_example_keeps_the_batch_axis_reading(kernel: KernelSession) -> None:
    runs_cleanly(kernel, LAYER)
    error = failing(kernel, "sample = np.ones(7, dtype='float32')\nout = seven_in(sample)")
    text = error["explanation"]
    # The lost-batch-axis family reads it first, from the layer's built input shape.
    assert "examples of one feature" not in text
    assert spans(text)[-1] == "out = seven_in(sample[None])"
    runs_cleanly(kernel, "sample = np.ones(7, dtype='float32')\nout = seven_in(sample[None])")
    assert value_of(kernel, "list(out.shape)") == [1, 2]


def test_sizes_that_disagree_get_no_axis_fix(kernel: KernelSession) -> None:
    runs_cleanly(kernel, LAYER)
    error = failing(kernel, "sample = np.ones(5, dtype='float32')\nout = seven_in(sample)")
    text = error["explanation"]
    assert "the weight expects 7 features per example" in text
    assert "neither one example of 5 features nor 5 examples of one feature" in text
    assert "Fix:" not in text


def test_layer_built_on_the_vector_says_both_readings(kernel: KernelSession) -> None:
    runs_cleanly(kernel, LAYER)
    cell = "grid = np.linspace(0, 1, 4).astype('float32')\nfresh = Projection(2)\nres = fresh(grid)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "the layer was built on it, so its weight took the 4 values as 4 features" in text
    as_batch, as_features = spans(text)[-2:]
    assert as_batch == "fresh(grid[None, :])"
    assert as_features == "fresh(grid[:, None])"
    for fixed, shape in ((as_batch, [1, 2]), (as_features, [4, 2])):
        runs_cleanly(kernel, cell.replace("fresh(grid)", fixed))
        assert value_of(kernel, "list(res.shape)") == shape
