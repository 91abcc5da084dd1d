"""Keras 2's loss-scaling calls in a Keras 3 custom loop, and a float learning rate set on
a wrapped optimizer built on a schedule (issue #25). Every printed fix is applied in the
kernel and runs; correct look-alikes get no error entry."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

_MADE = (
    "net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation='tanh'),"
    " keras.layers.Dense(1)])\n"
    "scaler = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-2))\n"
    "feats = np.random.default_rng(1).normal(size=(32, 6)).astype('float32')\n"
    "target = feats[:, :1] * 2.0\n"
)

_STEP = (
    "def fit_batch(batch, wanted):\n"
    "    with tf.GradientTape() as tape:\n"
    "        err = tf.reduce_mean((net(batch) - wanted) ** 2)\n"
    "        big_err = scaler.get_scaled_loss(err)\n"
    "    big_grads = tape.gradient(big_err, net.trainable_weights)\n"
    "    real_grads = scaler.get_unscaled_gradients(big_grads)\n"
    "    scaler.apply_gradients(zip(real_grads, net.trainable_weights))\n"
    "    return err\n"
    "\n"
    "first = float(fit_batch(feats, target))\n"
    "for _ in range(20):\n"
    "    last = float(fit_batch(feats, target))\n"
)


def _applied(cell: str, explanation: str) -> str:
    """The cell with every ``on line N `...` `` of the fix put in place of line N."""
    lines = cell.split("\n")
    fix = explanation.split("Fix: ", 1)[1]
    for number, statement in re.findall(r"on line (\d+) `([^`]+)`", fix):
        old = lines[int(number) - 1]
        lines[int(number) - 1] = old[: len(old) - len(old.lstrip())] + statement
    return "\n".join(lines)


def test_keras2_loss_scaling_calls_become_scale_loss_and_apply_gradients(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, _MADE)
    error = failing(kernel, _STEP)
    explanation = error["explanation"]
    assert "`scaler.get_scaled_loss` is tf.keras 2's" in explanation
    assert "no `get_unscaled_gradients`" in explanation
    assert "`scaler.scale_loss(loss)`" in explanation
    assert "divides them by the scale itself" in explanation
    assert error["course"]["section"] == "mixed-precision"
    # Both Keras 2 lines are rewritten: the next one would fail once the first is fixed.
    fix = explanation.split("Fix: ", 1)[1]
    assert "on line 4 `big_err = scaler.scale_loss(err)`" in fix
    assert "on line 6 `real_grads = big_grads`" in fix
    assert fix_of(explanation) == "big_err = scaler.scale_loss(err)"
    runs_cleanly(kernel, _applied(_STEP, explanation))
    # The fixed step trains: apply_gradients unscaled the gradients by itself.
    assert value_of(kernel, "last < first") is True
    # The look-alike: the Keras 3 step as written in the fix gives no entry.
    runs_cleanly(kernel, _applied(_STEP, explanation).replace("range(20)", "range(2)"))


def test_the_unscaling_line_alone_names_apply_gradients(kernel: KernelSession) -> None:
    runs_cleanly(kernel, _MADE)
    cell = (
        "with tf.GradientTape() as tape:\n"
        "    err = tf.reduce_mean((net(feats) - target) ** 2)\n"
        "    big_err = scaler.scale_loss(err)\n"
        "raw = tape.gradient(big_err, net.trainable_weights)\n"
        "grads_now = scaler.get_unscaled_gradients(raw)\n"
        "scaler.apply_gradients(zip(grads_now, net.trainable_weights))"
    )
    explanation = failing(kernel, cell)["explanation"]
    assert "`scaler.get_unscaled_gradients` is tf.keras 2's" in explanation
    fix = fix_of(explanation)
    assert fix == "grads_now = raw"
    runs_cleanly(kernel, cell.replace("scaler.get_unscaled_gradients(raw)", "raw"))


def test_a_rate_set_on_a_wrapped_scheduled_optimizer_gets_a_separate_optimizer(
    kernel: KernelSession,
) -> None:
    made = (
        "decay = keras.optimizers.schedules.CosineDecay(0.05, decay_steps=200)\n"
        "tuner = keras.optimizers.LossScaleOptimizer(\n"
        "    keras.optimizers.Adam(learning_rate=decay, beta_1=0.8))\n"
        "small = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1)])\n"
        "def one_step(batch, wanted):\n"
        "    with tf.GradientTape() as tape:\n"
        "        err = tf.reduce_mean((small(batch) - wanted) ** 2)\n"
        "        big = tuner.scale_loss(err)\n"
        "    tuner.apply_gradients(zip(tape.gradient(big, small.trainable_weights),"
        " small.trainable_weights))\n"
        "    return err\n"
        "feats = np.random.default_rng(2).normal(size=(16, 6)).astype('float32')\n"
        "one_step(feats, feats[:, :1])"
    )
    runs_cleanly(kernel, made)
    cell = "tuner.learning_rate = 3e-4\none_step(feats, feats[:, :1])"
    explanation = failing(kernel, cell)["explanation"]
    assert "its learning rate is not settable" in explanation
    assert "built on the learning-rate schedule `decay`" in explanation
    assert "`tuner.iterations`" in explanation
    assert "use a separate optimizer made as `tuner` was" in explanation
    assert "when you create" not in explanation
    fix = fix_of(explanation)
    assert fix == (
        "tuner = keras.optimizers.LossScaleOptimizer("
        "keras.optimizers.Adam(learning_rate=3e-4, beta_1=0.8))"
    )
    runs_cleanly(kernel, cell.replace("tuner.learning_rate = 3e-4", fix))
    assert value_of(kernel, "float(tuner.learning_rate)") == pytest.approx(3e-4)
    assert value_of(kernel, "float(tuner.inner_optimizer.beta_1)") == pytest.approx(0.8)
    # The look-alike: a wrapped optimizer made with a float rate takes a new one.
    runs_cleanly(
        kernel,
        "plain = keras.optimizers.LossScaleOptimizer(\n"
        "    keras.optimizers.SGD(learning_rate=0.1))\n"
        "plain.learning_rate = 0.01",
    )
