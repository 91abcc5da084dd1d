"""Functions whose inputs were fixed when they were traced, called with other values
(issue #25): a tf.function's input_signature, a loaded SavedModel's function and its
signatures. Each entry names the learner's function and value with its dtype, prints a
fix (a cast, a keyword) that runs in the kernel; the look-alike NumPy array, which
TensorFlow converts, gets no entry. Our own cells (``errors/families_signatures.py``,
``errors/families_shapes.py``'s input_signature family)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

READINGS = """readings = np.random.rand(6, 3)
readings64 = tf.constant(readings)
"""


def test_a_float64_tensor_given_to_a_float32_input_signature(kernel: KernelSession) -> None:
    setup = (
        READINGS
        + """@tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
def totals(rows):
    return tf.reduce_sum(rows, axis=1)"""
    )
    runs_cleanly(kernel, setup)
    cell = "sums = totals(readings64)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "input-signature"
    text = error["explanation"]
    assert "declares (None, 3) float32" in text and "the argument is (6, 3) float64" in text
    assert "`readings64` is that tensor" in text
    # The batch axis is already unknown: no advice to make it so.
    assert "batch axis" not in text
    fix = fix_of(text)
    assert fix == "sums = totals(tf.cast(readings64, tf.float32))"
    runs_cleanly(kernel, fix)
    # A float64 NumPy array is converted to the signature's dtype: no entry.
    runs_cleanly(kernel, "sums = totals(readings)")


def test_a_saved_models_function_and_signature(kernel: KernelSession, tmp_path: Path) -> None:
    export = str(tmp_path / "sensor")
    setup = (
        READINGS
        + f"""sensor = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
sensor.export({export!r}, verbose=False)
served = tf.saved_model.load({export!r})
predict_fn = served.signatures["serving_default"]"""
    )
    runs_cleanly(kernel, setup)
    # The endpoint: the input_signature family, a cast.
    error = failing(kernel, "served.serve(readings64)")
    fix = fix_of(error["explanation"])
    assert fix == "served.serve(tf.cast(readings64, tf.float32))"
    runs_cleanly(kernel, fix)
    # A signature called positionally: keyword arguments only.
    cell = "outputs = predict_fn(readings)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "input-signature"
    text = error["explanation"]
    assert "`predict_fn` is a SavedModel signature" in text and "(`keras_tensor`)" in text
    fix = fix_of(text)
    assert fix == "outputs = predict_fn(keras_tensor=readings)"
    runs_cleanly(kernel, fix)
    # A float64 tensor to the signature: its graph's input #0, not two operands.
    cell = "outputs = predict_fn(keras_tensor=readings64)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "input-signature"
    text = error["explanation"]
    assert "`predict_fn` runs a graph traced once for float32 inputs" in text
    assert "`readings64` is that float64 tensor" in text
    fix = fix_of(text)
    assert fix == "outputs = predict_fn(keras_tensor=tf.cast(readings64, tf.float32))"
    runs_cleanly(kernel, fix)


SIGNED_STEP = """@tf.function(
    input_signature=[
        tf.TensorSpec([None, 4], tf.float32),
        tf.TensorSpec([None, 1], tf.float32),
        tf.TensorSpec([None], tf.float32),
    ]
)
def signed_step(xs, targets, weights):
    return tf.reduce_sum(xs) + tf.reduce_sum(targets * weights[:, None])
"""


def test_a_reduction_that_dropped_the_declared_last_axis_keeps_it(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, SIGNED_STEP)
    reduced = "row_totals = batch_x.sum(axis=1)"
    cell = (
        'batch_x = np.random.rand(8, 4).astype("float32")\n'
        f"{reduced}\n"
        'row_weights = np.ones(8, dtype="float32")\n'
        "signed_step(batch_x, row_totals, row_weights)"
    )
    text = failing(kernel, cell)["explanation"]
    # Of the two (8,) arrays, the one at the position of the (None, 1) spec is named.
    assert "`row_totals` has one axis fewer than declared" in text
    assert "which `.sum(axis=...)` on line 2 dropped (`keepdims=True` keeps it)" in text
    fix = fix_of(text)
    assert fix == "row_totals = batch_x.sum(axis=1, keepdims=True)"
    runs_cleanly(kernel, cell.replace(reduced, fix))
    # The look-alike: the axis kept from the start is quiet.
    runs_cleanly(kernel, cell.replace(reduced, "row_totals = batch_x.sum(axis=1)[:, None]"))


def test_one_example_given_to_a_signature_of_batches(kernel: KernelSession) -> None:
    setup = """sensor_rows = tf.random.normal((8, 4))
@tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
def row_norms(rows):
    return tf.norm(rows, axis=1)"""
    runs_cleanly(kernel, setup)
    error = failing(kernel, "first_norm = row_norms(sensor_rows[2])")
    text = error["explanation"]
    assert error["course"]["section"] == "input-signature"
    assert "the argument is (4,) float32" in text
    assert "counts the examples, and the argument is one example without it" in text
    fix = fix_of(text)
    assert fix == "first_norm = row_norms(sensor_rows[2:3])"
    runs_cleanly(kernel, fix + "\nassert first_norm.shape == (1,)")
    runs_cleanly(kernel, "all_norms = row_norms(sensor_rows)")
