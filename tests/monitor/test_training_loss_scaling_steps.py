"""A custom step under a LossScaleOptimizer that differentiates the unscaled loss, or clips
the gradients while they are still scaled: the note names the function, the lines and the
optimizer; its fix, applied, trains; correct look-alikes stay silent (issue #25)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

_DATA = (
    "keras.utils.set_random_seed(4)\n"
    "reg = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
    "rows = np.random.default_rng(4).normal(size=(64, 4)).astype('float32')\n"
    "goal = (rows @ np.array([[1.0], [-2.0], [0.5], [3.0]])).astype('float32')\n"
    "start = [w.numpy().copy() for w in reg.trainable_variables]\n"
    "def moved():\n"
    "    return float(np.abs(reg.trainable_variables[0].numpy() - start[0]).max())\n"
)


def _scaling_notes(kernel: KernelSession, cell: str) -> list[str]:
    texts = note_texts(checked_report(run(kernel, cell)))
    return [t for t in texts if "LossScaleOptimizer" in t or "scaled loss" in t]


_TEN_STEPS = (
    "for _ in range(10):\n"
    "    lso.apply_gradients(zip(grads_of(rows, goal)[1], reg.trainable_variables))"
)

_UNSCALED = (
    "lso = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.05))\n"
    "def grads_of(batch, wanted):\n"
    "    with tf.GradientTape() as tape:\n"
    "        cost = tf.reduce_mean((reg(batch) - wanted) ** 2)\n"
    "        boosted = lso.scale_loss(cost)\n"
    "    return cost, tape.gradient(cost, reg.trainable_variables)\n"
)


def test_the_gradient_of_the_unscaled_loss_is_named_and_fixed(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    told = _scaling_notes(kernel, _UNSCALED)
    assert len(told) == 1
    text = told[0]
    assert "`grads_of` scales the loss (`boosted = lso.scale_loss(cost)`, line 5)" in text
    assert "gradients of the unscaled `cost` (line 6), and `boosted` is never read" in text
    assert "(32768 at the start)" in text
    fixed_line = "return cost, tape.gradient(boosted, reg.trainable_variables)"
    assert f"write line 6 as `{fixed_line}`" in text
    # As written, ten steps hardly move the weights.
    run(
        kernel,
        _TEN_STEPS,
    )
    assert value_of(kernel, "moved()") < 1e-3
    fixed = _UNSCALED.replace(
        "    return cost, tape.gradient(cost, reg.trainable_variables)", "    " + fixed_line
    )
    assert _scaling_notes(kernel, fixed) == []
    run(
        kernel,
        _TEN_STEPS,
    )
    assert value_of(kernel, "moved()") > 0.05


_CLIPPED = (
    "LIMIT = 0.5\n"
    "lso2 = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1))\n"
    "def clipped(batch, wanted):\n"
    "    with tf.GradientTape() as tape:\n"
    "        cost = tf.reduce_mean((reg(batch) - wanted) ** 2)\n"
    "        big = lso2.scale_loss(cost)\n"
    "    gs = tape.gradient(big, reg.trainable_variables)\n"
    "    gs = [tf.clip_by_norm(g, LIMIT) for g in gs]\n"
    "    lso2.apply_gradients(zip(gs, reg.trainable_variables))\n"
    "    return cost\n"
)


def test_clipping_the_scaled_gradients_is_named_and_moved_into_the_optimizer(
    kernel: KernelSession,
) -> None:
    run(kernel, _DATA)
    told = _scaling_notes(kernel, _CLIPPED)
    assert len(told) == 1
    text = told[0]
    assert "`clipped` clips the gradients of the scaled loss" in text
    assert "(`gs = [tf.clip_by_norm(g, LIMIT) for g in gs]`, line 8)" in text
    assert "before `lso2.apply_gradients` unscales them" in text
    assert "`clipnorm=LIMIT`" in text and "delete line 8" in text
    made = "lso2 = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1, clipnorm=LIMIT))"
    assert f": `{made}`" in text
    run(kernel, "for _ in range(10):\n    clipped(rows, goal)")
    assert value_of(kernel, "moved()") < 1e-3
    lines = _CLIPPED.split("\n")
    lines[1] = made
    del lines[7]
    fixed = "\n".join(lines)
    assert _scaling_notes(kernel, fixed) == []
    run(kernel, "start = [w.numpy().copy() for w in reg.trainable_variables]")
    run(kernel, "for _ in range(10):\n    clipped(rows, goal)")
    assert value_of(kernel, "moved()") > 0.05


def test_correct_look_alikes_are_quiet(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    # The scaled loss differentiated, clipped by the inner optimizer.
    assert (
        _scaling_notes(
            kernel,
            "good = keras.optimizers.LossScaleOptimizer(\n"
            "    keras.optimizers.Adam(1e-3, global_clipnorm=1.0))\n"
            "def good_step(batch, wanted):\n"
            "    with tf.GradientTape() as tape:\n"
            "        cost = tf.reduce_mean((reg(batch) - wanted) ** 2)\n"
            "        scaled_cost = good.scale_loss(cost)\n"
            "    gs = tape.gradient(scaled_cost, reg.trainable_variables)\n"
            "    good.apply_gradients(zip(gs, reg.trainable_variables))\n"
            "    return cost\n"
            "good_step(rows, goal)\n",
        )
        == []
    )
    # A plain optimizer's scale_loss (no loss scale) and clipping of its gradients.
    assert (
        _scaling_notes(
            kernel,
            "plain = keras.optimizers.Adam(1e-3)\n"
            "def plain_step(batch, wanted):\n"
            "    with tf.GradientTape() as tape:\n"
            "        cost = tf.reduce_mean((reg(batch) - wanted) ** 2)\n"
            "        same = plain.scale_loss(cost)\n"
            "    gs = tape.gradient(same, reg.trainable_variables)\n"
            "    gs, _ = tf.clip_by_global_norm(gs, 1.0)\n"
            "    plain.apply_gradients(zip(gs, reg.trainable_variables))\n"
            "plain_step(rows, goal)\n",
        )
        == []
    )
