"""NumPy's random draws inside a traced function (issue #25,
``errors/families_numpy_random.py``): ``np.random.uniform(..., size=t.shape)`` while a
tf.function or a ``Dataset.map`` function is traced meets a shape holding None. The entry
names the draw and TensorFlow's op; its fix (the one-line statement with ``tf.random``
and ``tf.shape``) runs and draws anew at every call. A TensorFlow draw in the same place
is quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

JITTER = """@tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
def jitter(rows):
    return rows + np.random.uniform(-0.1, 0.1, size=rows.shape)

shaken = jitter(tf.zeros((5, 3)))
"""


def test_a_numpy_draw_in_a_tf_function_is_written_with_tensorflows_op(
    kernel: KernelSession,
) -> None:
    error = failing(kernel, JITTER)
    text = error["explanation"]
    assert error["course"]["section"] == "numpy-in-graphs"
    assert "`np.random.uniform(-0.1, 0.1, size=rows.shape)` is NumPy's draw" in text
    fix = fix_of(text)
    assert fix == "return rows + tf.random.uniform(tf.shape(rows), -0.1, 0.1)"
    runs_cleanly(
        kernel, JITTER.replace("return rows + np.random.uniform(-0.1, 0.1, size=rows.shape)", fix)
    )
    assert value_of(kernel, "list(shaken.shape)") == [5, 3]
    assert value_of(kernel, "bool(float(tf.reduce_max(tf.abs(shaken))) <= 0.1)")
    assert value_of(kernel, "bool(np.any(jitter(tf.zeros((5, 3))).numpy() != shaken.numpy()))")


def test_a_draw_in_a_map_over_several_lines_names_both_calls(kernel: KernelSession) -> None:
    cell = """pixels = np.zeros((6, 2, 2), dtype="float32")
blurred = (tf.data.Dataset.from_tensor_slices(pixels)
           .batch(3)
           .map(lambda b: b + np.random.normal(0.0, 0.2, size=b.shape)))
"""
    text = failing(kernel, cell)["explanation"]
    # The statement over several lines is fixed on one line.
    fix = fix_of(text)
    assert fix == (
        "blurred = (tf.data.Dataset.from_tensor_slices(pixels).batch(3)"
        ".map(lambda b: b + tf.random.normal(tf.shape(b), 0.0, 0.2)))"
    )
    runs_cleanly(kernel, cell.splitlines()[0] + "\n" + fix)
    assert value_of(kernel, "[list(x.shape) for x in blurred]") == [[3, 2, 2], [3, 2, 2]]


def test_a_tensorflow_draw_is_quiet(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "calm = tf.data.Dataset.from_tensor_slices(np.zeros((4, 2), 'float32')).batch(2)"
        ".map(lambda b: b + tf.random.normal(tf.shape(b)))\nlist(calm)",
    )
