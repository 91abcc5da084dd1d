"""NumPy functions on tensors being traced (issue #25): a custom loss or a tf.function
calling ``np.square`` gets an entry naming the NumPy functions of the line and the line
written with ``keras.ops`` (``errors/numpy_calls.py``), not one about a graph tensor that
escaped; the replaced line runs, and the same loss written with keras.ops gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """pts = np.random.rand(32, 3).astype("float32")
goal = pts.sum(axis=1, keepdims=True)
"""

LOSS = """def squared_gap(y_true, y_pred):
    return np.mean(np.square(y_true - y_pred))
fitter = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
fitter.compile(optimizer="adam", loss=squared_gap)
fitter.fit(pts, goal, epochs=1, verbose=0)"""


def test_numpy_functions_in_a_custom_loss(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, LOSS)
    assert error["course"]["section"] == "numpy-in-graphs"
    text = error["explanation"]
    assert "`np.mean` and `np.square` are NumPy functions" in text
    assert "no value outside it" not in text  # not the escaped-tensor entry
    line = "return np.mean(np.square(y_true - y_pred))"
    assert f"replace `{line}` by" in text
    fix = fix_of(text)
    assert fix == "return keras.ops.mean(keras.ops.square(y_true - y_pred))"
    runs_cleanly(kernel, LOSS.replace(line, fix))
    assert value_of(kernel, "fitter.loss is squared_gap") is True


def test_a_numpy_function_in_a_tf_function(kernel: KernelSession) -> None:
    cell = """@tf.function
def doubled_square(t):
    return 2.0 * np.square(t)
out = doubled_square(tf.constant([1.0, 2.0]))"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`np.square` is a NumPy function" in text
    fix = fix_of(text)
    assert fix == "return 2.0 * keras.ops.square(t)"
    runs_cleanly(kernel, cell.replace("return 2.0 * np.square(t)", fix))
    assert value_of(kernel, "out.numpy().tolist()") == [2.0, 8.0]
