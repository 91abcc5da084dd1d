"""A model's variable list copied before its first call (issue #25,
``errors/families_tensors.py``, EMPTY_UNPACK): Keras makes the weights when the model first
runs, so ``params = net.trainable_variables`` read before that holds an empty list, the
gradients are empty, and ``apply_gradients`` fails unpacking them. The entry reads back to
that assignment and its fix (every line reading the name made to read the attribute) runs
and trains. A model built before the list is read is quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """rng = np.random.default_rng(8)
xs = rng.normal(size=(32, 3)).astype("float32")
ys = xs @ np.array([[1.0], [2.0], [-1.0]], dtype="float32")
"""
LOOP = """weights_list = regressor.trainable_variables
sgd = keras.optimizers.SGD(0.05)
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(regressor(xs) - ys))
    gs = tape.gradient(loss, weights_list)
    sgd.apply_gradients(zip(gs, weights_list))
"""


def test_a_list_copied_before_the_first_call_is_read_back(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    unbuilt = "regressor = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])\n"
    text = failing(kernel, unbuilt + LOOP)["explanation"]
    assert (
        "`weights_list` was set by `weights_list = regressor.trainable_variables` "
        "(line 2 of this cell), before `regressor` had run" in text
    )
    assert "`regressor.trainable_variables` now holds 4 variables" in text
    spans = text.split("Fix: ", 1)[1]
    first = "sgd.apply_gradients(zip(gs, regressor.trainable_variables))"
    again = "gs = tape.gradient(loss, regressor.trainable_variables)"
    assert spans.startswith(f"`{first}` and on line 7 `{again}`")
    fixed = LOOP.replace("sgd.apply_gradients(zip(gs, weights_list))", first).replace(
        "gs = tape.gradient(loss, weights_list)", again
    )
    runs_cleanly(kernel, unbuilt + fixed)
    assert value_of(kernel, "int(sgd.iterations)") == 3


def test_a_built_model_is_quiet(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    built = (
        "regressor = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), "
        "keras.layers.Dense(1)])\n"
    )
    runs_cleanly(kernel, built + LOOP)
