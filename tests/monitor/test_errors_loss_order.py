"""A Keras loss called with the predictions first and the labels second
(``errors/families_loss_order.py``): ``loss(y_true, y_pred)`` is the order of every Keras
loss; the entry names both arguments as they are (scores, labels) and prints the call with
them swapped, which runs and gives the loss of the right order. The right order, and a
loss that fails for another reason, get no such entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

STEP = """tagger = keras.Sequential([keras.Input(shape=(7,)), keras.layers.Dense(5)])
crit = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
tokens = np.random.rand(12, 7).astype("float32")
tags = tf.constant(np.random.randint(0, 5, size=12))
weights_t = np.ones(12, "float32")
"""


def test_a_loss_object_in_a_tape_step(kernel: KernelSession) -> None:
    runs_cleanly(kernel, STEP)
    cell = """with tf.GradientTape() as rec:
    scores = tagger(tokens, training=True)
    step_loss = crit(scores, tags, sample_weight=weights_t)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "A Keras loss is called `crit(y_true, y_pred)`: the labels first" in text
    assert "the first argument, `scores`, is a (12, 5) float32 tensor" in text
    assert "the second, `tags`, is a (12,) int64 tensor (labels)" in text
    assert error["course"]["section"] == "labels-and-loss"
    fix = fix_of(text)
    assert fix == "step_loss = crit(tags, scores, sample_weight=weights_t)"
    runs_cleanly(kernel, fix)
    expected = value_of(kernel, "float(crit(tags, scores))")
    assert abs(value_of(kernel, "float(step_loss)") - expected) < 1e-5
    runs_cleanly(kernel, "step_loss = crit(tags, scores)")


def test_a_loss_function_of_keras_losses(kernel: KernelSession) -> None:
    runs_cleanly(kernel, STEP + "scores = tagger(tokens)")
    cell = "per_item = keras.losses.sparse_categorical_crossentropy(scores, tags, from_logits=True)"
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == (
        "per_item = keras.losses.sparse_categorical_crossentropy(tags, scores, from_logits=True)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(per_item.shape)") == [12]
    # Labels and scores in the right order but of different lengths: not a swap.
    execution = kernel.execute("short = scores[:6]\ncrit(tags, short)")
    assert execution.reply["status"] == "error"
    error = execution.report["error"]
    assert error is None or "labels first" not in error["explanation"]
