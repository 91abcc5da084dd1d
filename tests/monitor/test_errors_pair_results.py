"""A TensorFlow function's two results kept in one name (issue #25,
``errors/families_pair_results.py``): the entry names the assignment that kept the pair,
the fix unpacks it and the loop then trains; taking one of the two by index is right and
gets no such entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """keras.utils.set_random_seed(0)
clip_model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)])
clip_opt = keras.optimizers.SGD(0.1)
xb = np.random.rand(8, 4).astype("float32")
yb = np.random.rand(8, 1).astype("float32")
"""
LOOP = """for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((clip_model(xb) - yb) ** 2)
    grads = tape.gradient(loss, clip_model.trainable_variables)
    grads = tf.clip_by_global_norm(grads, 1.0)
    clip_opt.apply_gradients(zip(grads, clip_model.trainable_variables))
"""


def test_clip_by_global_norm_kept_whole(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, LOOP)
    assert error["course"]["section"] == "training-loop"
    text = error["explanation"]
    assert "`grads` holds both results of `tf.clip_by_global_norm(grads, 1.0)`" in text
    fix = fix_of(text)
    assert fix == "grads, global_norm = tf.clip_by_global_norm(grads, 1.0)"
    runs_cleanly(kernel, SETUP + LOOP.replace("grads = tf.clip_by_global_norm(grads, 1.0)", fix))
    assert value_of(kernel, "int(clip_opt.iterations)") == 3


def test_one_result_taken_by_index_is_not_this_family(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP + "stats = tf.nn.moments(tf.constant(xb), axes=[0])")
    error = failing(kernel, "bad = tf.matmul(stats[0], tf.ones((4, 2)))")
    assert "holds both results" not in error["explanation"]
    runs_cleanly(kernel, "mean, variance = tf.nn.moments(tf.constant(xb), axes=[0])")
