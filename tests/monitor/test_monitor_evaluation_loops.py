"""A custom loop's pass over validation data that trains the model
(``monitor/symptoms/evaluation_loops.py``, issue #25 part 2): the training step called on
the validation batches, or an optimizer update copied into the validation loop. The
symptom is the optimizer's step count (it stepped on the validation batches too); the
note names the loop, the line and the optimizer, its fix is applied in the kernel, and
the optimizer then steps on the training batches only. A validation loop that only
computes the loss stays silent."""

from __future__ import annotations

import ast
import re

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "training-argument"
KERNEL = KernelSetup(
    after_load="""import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(7)
feats = np.random.default_rng(1).normal(size=(96, 3)).astype("float32")
target = feats @ np.array([[1.0], [-2.0], [0.5]], dtype="float32")
train_batches = tf.data.Dataset.from_tensor_slices((feats[:64], target[:64])).batch(16)
val_batches = tf.data.Dataset.from_tensor_slices((feats[64:], target[64:])).batch(16)
net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
mse = keras.losses.MeanSquaredError()
sgd = keras.optimizers.SGD(0.05)

@tf.function
def fit_batch(xb, yb):
    with tf.GradientTape() as tape:
        out = net(xb, training=True)
        batch_loss = mse(yb, out)
    grads = tape.gradient(batch_loss, net.trainable_variables)
    sgd.apply_gradients(zip(grads, net.trainable_variables))
    return batch_loss
"""
)
# 2 epochs x 4 training batches; the validation set has 2 batches per epoch.
LOOP = """for epoch in range(2):
    for xb, yb in train_batches:
        loss = fit_batch(xb, yb)
    for xb, yb in val_batches:
        val_loss = fit_batch(xb, yb)
"""
STEPS = "int(sgd.iterations.numpy())"


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    report = checked_report(run(kernel, code))
    texts = [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == SECTION]
    for text in texts:
        for span in re.findall(r"`([^`]+)`", text):
            ast.parse(span)
    return texts


def test_the_training_step_called_on_validation_batches(kernel: KernelSession) -> None:
    before = value_of(kernel, STEPS)
    [text] = notes_of(kernel, LOOP)
    assert value_of(kernel, STEPS) - before == 12  # the symptom: 8 training + 4 validation
    assert (
        "A loop over validation data trains the model: `for xb, yb in val_batches: ...` (line 4)"
        in text
    )
    assert "calls `val_loss = fit_batch(xb, yb)` (line 5) on the batches of `val_batches`" in text
    assert "`fit_batch` applies gradients with `sgd`" in text
    fix = re.findall(r"`([^`]+)`", text[text.index("write ") :])[0]
    assert fix == "val_loss = mse(yb, net(xb, training=False))"
    before = value_of(kernel, STEPS)
    assert notes_of(kernel, LOOP.replace("val_loss = fit_batch(xb, yb)", fix)) == []
    assert value_of(kernel, STEPS) - before == 8  # training batches only


def test_an_update_copied_into_the_validation_loop(kernel: KernelSession) -> None:
    update = "        sgd.apply_gradients(zip(vgrads, net.trainable_variables))\n"
    code = (
        "for xb, yb in val_batches:\n"
        "    with tf.GradientTape() as tape:\n"
        "        vloss = mse(yb, net(xb, training=False))\n"
        "    vgrads = tape.gradient(vloss, net.trainable_variables)\n"
        f"{update}"
    ).replace("        sgd.", "    sgd.")
    before = value_of(kernel, STEPS)
    [text] = notes_of(kernel, code)
    assert value_of(kernel, STEPS) - before == 2
    assert "`for xb, yb in val_batches: ...` (line 1) runs" in text
    assert "`sgd.apply_gradients(zip(vgrads, net.trainable_variables))` (line 5)" in text
    assert "delete that line" in text
    before = value_of(kernel, STEPS)
    assert notes_of(kernel, code.replace(update.replace("        ", "    "), "")) == []
    assert value_of(kernel, STEPS) == before


def test_a_sweep_over_settings_to_test_stays_silent(kernel: KernelSession) -> None:
    # The loop's name says "test", but it holds learning rates, not examples: the
    # training step runs on the training batches, as it should.
    code = (
        "rates_to_test = [0.02, 0.01]\n"
        "for rate in rates_to_test:\n"
        "    sgd.learning_rate.assign(rate)\n"
        "    for xb, yb in train_batches:\n"
        "        fit_batch(xb, yb)\n"
    )
    before = value_of(kernel, STEPS)
    assert notes_of(kernel, code) == []
    assert value_of(kernel, STEPS) - before == 8
