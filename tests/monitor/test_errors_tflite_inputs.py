"""A TFLite interpreter's inputs (errors/families_tflite.py): an array of another shape
than the input's allocated one gets the allocated shape (read from the interpreter) and,
on a free axis, the resize-and-allocate fix; an array of another dtype gets ``.astype``;
a signature runner called with a name its signature does not have, or positionally, gets
the input's name. Every printed fix runs; feeding the allocated shape stays quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """import warnings
warnings.simplefilter("ignore")
sensor = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(3, activation="softmax")])
readings = np.random.default_rng(3).normal(size=(30, 6)).astype("float32")
lite_model = tf.lite.TFLiteConverter.from_keras_model(sensor).convert()
lite = tf.lite.Interpreter(model_content=lite_model)
lite.allocate_tensors()
first_in = lite.get_input_details()[0]
first_out = lite.get_output_details()[0]
"""


def test_a_batch_larger_than_the_allocated_input(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = 'lite.set_tensor(first_in["index"], readings[:5])'
    error = failing(kernel, cell)
    assert error["course"]["section"] == "input-signature"
    text = error["explanation"]
    assert "`lite`'s input 0 was allocated with shape [1, 6]" in text
    assert "`readings[:5]` has shape [5, 6]" in text
    fix = fix_of(text)
    assert fix == (
        'lite.resize_tensor_input(first_in["index"], [5, 6]); lite.allocate_tensors(); '
        'lite.set_tensor(first_in["index"], readings[:5])'
    )
    runs_cleanly(kernel, fix + '\nlite.invoke()\nlite_out = lite.get_tensor(first_out["index"])')
    assert value_of(kernel, "lite_out.shape") == [5, 3]
    # The allocated shape, one row at a time: quiet.
    runs_cleanly(
        kernel,
        'lite.resize_tensor_input(first_in["index"], [1, 6])\nlite.allocate_tensors()\n'
        'for row in range(3):\n    lite.set_tensor(first_in["index"], readings[row:row + 1])\n'
        "    lite.invoke()",
    )


def test_a_missing_batch_axis(kernel: KernelSession) -> None:
    cell = 'one = readings[0]\nlite.set_tensor(first_in["index"], one)'
    text = failing(kernel, cell)["explanation"]
    assert "allocated with shape [1, 6]" in text and "`one` has shape [6]" in text
    fix = fix_of(text)
    assert fix == 'lite.set_tensor(first_in["index"], one[None])'
    runs_cleanly(kernel, fix)


def test_a_float64_array(kernel: KernelSession) -> None:
    cell = 'doubles = np.ones((1, 6))\nlite.set_tensor(first_in["index"], doubles)'
    text = failing(kernel, cell)["explanation"]
    assert "`doubles` is float64" in text
    fix = fix_of(text)
    assert fix == 'lite.set_tensor(first_in["index"], doubles.astype("float32"))'
    runs_cleanly(kernel, fix)


def test_a_runner_called_with_another_name(kernel: KernelSession) -> None:
    runs_cleanly(kernel, 'scorer = lite.get_signature_runner("serving_default")')
    name = value_of(kernel, "list(scorer.get_input_details())[0]")
    cell = "scores = scorer(inputs=readings[:4])"
    text = failing(kernel, cell)["explanation"]
    assert f"`{name}`" in text and "`inputs` is not one of them" in text
    fix = fix_of(text)
    assert fix == f"scores = scorer({name}=readings[:4])"
    runs_cleanly(kernel, fix)
    positional = failing(kernel, "scores = scorer(readings[:2])")["explanation"]
    assert "never positionally" in positional
    assert fix_of(positional) == f"scores = scorer({name}=readings[:2])"
    runs_cleanly(kernel, fix_of(positional))
    assert value_of(kernel, "list(scores)") == list(
        value_of(kernel, "list(scorer.get_output_details())")
    )
