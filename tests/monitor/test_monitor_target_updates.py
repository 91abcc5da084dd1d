"""Targets and target networks that never behave as meant (issue #25,
``symptoms/target_gradients.py`` and ``symptoms/discarded_weights.py``).

A bootstrapped target and a self-distillation teacher computed from the trained model
inside the tape without ``tf.stop_gradient`` are told; each fix, applied, gives the
gradient of the loss with the target held constant. An EMA written on the copies
``get_weights()`` returns (rebinding, and an in-place ``*=``) is told; each fix, applied,
moves the shadow model. Look-alikes stay silent: a target computed before the tape, one
under ``stop_gradient``, one from another network, a label named target; new arrays
written back with ``set_weights``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """keras.utils.set_random_seed(9)
rng = np.random.default_rng(9)
obs = rng.normal(size=(64, 3)).astype("float32")
next_obs = rng.normal(size=(64, 3)).astype("float32")
rewards = rng.normal(size=(64, 1)).astype("float32")
critic = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="tanh"),
                           keras.layers.Dense(1)])
frozen_critic = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
discount = 0.95
"""


def notes_with(code: str, kernel: KernelSession, words: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if words in n["text"]]


LOOP = """with tf.GradientTape() as tape:
    bootstrap_value = rewards + discount * critic(next_obs)
    err = tf.reduce_mean(tf.square(bootstrap_value - critic(obs)))
critic_grads = tape.gradient(err, critic.trainable_variables)
"""


def test_bootstrapped_target_from_the_trained_critic(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = notes_with(LOOP, kernel, "stop its gradient")
    assert text.startswith(
        "`bootstrap_value = rewards + discount * critic(next_obs)` (line 2 of this cell) "
        "computes `bootstrap_value` from `critic` inside the `tape` block"
    )
    fix = fix_in(text)
    assert fix == "bootstrap_value = tf.stop_gradient(rewards + discount * critic(next_obs))"
    fixed = LOOP.replace("bootstrap_value = rewards + discount * critic(next_obs)", fix)
    assert notes_with(fixed, kernel, "stop its gradient") == []
    run(
        kernel,
        "held = rewards + discount * critic(next_obs)\n"
        "with tf.GradientTape() as t2:\n"
        "    e2 = tf.reduce_mean(tf.square(held - critic(obs)))\n"
        "constant_grads = t2.gradient(e2, critic.trainable_variables)",
    )
    same = "max(float(tf.reduce_max(tf.abs(a - b))) for a, b in zip(critic_grads, constant_grads))"
    assert value_of(kernel, same) < 1e-6


def test_self_distillation_teacher_inside_a_train_function(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "opt = keras.optimizers.SGD(0.1)\n"
        "def distil_step(x):\n"
        "    with tf.GradientTape() as g:\n"
        "        teacher_out = critic(x + 0.1)\n"
        "        loss = tf.reduce_mean(tf.square(critic(x) - teacher_out))\n"
        "    grads = g.gradient(loss, critic.trainable_weights)\n"
        "    opt.apply_gradients(zip(grads, critic.trainable_weights))\n"
        "    return grads\n"
    )
    [text] = notes_with(cell, kernel, "stop its gradient")
    assert "(line 4 of this cell, in `distil_step`)" in text
    fix = fix_in(text)
    assert fix == "teacher_out = tf.stop_gradient(critic(x + 0.1))"
    fixed = cell.replace("teacher_out = critic(x + 0.1)", fix)
    assert notes_with(fixed, kernel, "stop its gradient") == []
    run(
        kernel,
        "want = critic(obs + 0.1)\n"
        "with tf.GradientTape() as g3:\n"
        "    l3 = tf.reduce_mean(tf.square(critic(obs) - want))\n"
        "want_grads = g3.gradient(l3, critic.trainable_weights)\n"
        "fixed_grads = distil_step(obs)",
    )
    same = "max(float(tf.reduce_max(tf.abs(a - b))) for a, b in zip(fixed_grads, want_grads))"
    assert value_of(kernel, same) < 1e-6


def test_targets_held_constant_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    fine = (
        "td_target = rewards + discount * critic(next_obs)\n"
        "with tf.GradientTape() as tape:\n"
        "    target_b = tf.stop_gradient(rewards + discount * critic(next_obs))\n"
        "    target_c = rewards + discount * frozen_critic(next_obs)\n"
        "    target = rewards\n"
        "    target_d = rewards + critic(next_obs)\n"
        "    err = tf.reduce_mean(tf.square(td_target - critic(obs)))\n"
        "    err += tf.reduce_mean(tf.square(tf.stop_gradient(target_d) - critic(obs)))\n"
        "g = tape.gradient(err, critic.trainable_variables)\n"
    )
    assert notes_with(fine, kernel, "stop its gradient") == []


def test_moving_average_written_on_weight_copies(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(
        kernel,
        "shadow = keras.models.clone_model(critic)\nshadow.set_weights(critic.get_weights())",
    )
    run(kernel, "critic.set_weights([w + 1.0 for w in critic.get_weights()])")
    cell = (
        "def ema_update(avg, live, decay=0.9):\n"
        "    for a_w, l_w in zip(avg.get_weights(), live.get_weights()):\n"
        "        a_w = decay * a_w + (1 - decay) * l_w\n"
    )
    [text] = notes_with(cell, kernel, "get_weights()")
    assert text.startswith(
        "`a_w = decay * a_w + (1 - decay) * l_w` (line 3 of this cell, in `ema_update`) "
        "gives the loop name `a_w` a new value"
    )
    assert "the weights of `avg` never change" in text
    fix = fix_in(text)
    assert fix == (
        "for a_w, l_w in zip(avg.weights, live.weights): "
        "a_w.assign(decay * a_w + (1 - decay) * l_w)"
    )
    fixed = cell.replace(
        "    for a_w, l_w in zip(avg.get_weights(), live.get_weights()):\n"
        "        a_w = decay * a_w + (1 - decay) * l_w\n",
        f"    {fix}\n",
    )
    assert notes_with(fixed, kernel, "get_weights()") == []
    run(kernel, "before = shadow.get_weights()[1].copy()\nema_update(shadow, critic)")
    assert value_of(kernel, "bool(np.allclose(shadow.get_weights()[1], before + 0.1))") is True


def test_in_place_decay_on_copies_and_written_back_copies(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "for w in frozen_critic.get_weights():\n    w *= 0.5\n"
    [text] = notes_with(cell, kernel, "get_weights()")
    fix = fix_in(text)
    assert fix == "for w in frozen_critic.weights: w.assign(w * (0.5))"
    run(kernel, "kernel_before = frozen_critic.get_weights()[0].copy()")
    assert notes_with(fix, kernel, "get_weights()") == []
    assert value_of(
        kernel, "bool(np.allclose(frozen_critic.get_weights()[0], kernel_before * 0.5))"
    )
    fine = (
        "halved = []\n"
        "for w in frozen_critic.get_weights():\n"
        "    w = w * 0.5\n"
        "    halved.append(w)\n"
        "frozen_critic.set_weights(halved)\n"
    )
    assert notes_with(fine, kernel, "get_weights()") == []


# The name rebound walks a list the user keeps (a Polyak average kept beside the model);
# the copies of get_weights() are only read. Another spelling than a callback's.
KEPT_AVERAGE = """polyak_avg = [np.zeros_like(v) for v in frozen_critic.get_weights()]


def polyak_step(tau=0.5):
    for slot, cur in zip(polyak_avg, frozen_critic.get_weights()):
        slot = tau * slot + (1 - tau) * cur
"""


def test_moving_average_kept_in_a_list_of_its_own(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = notes_with(KEPT_AVERAGE, kernel, "gives the loop name")
    assert text.startswith(
        "`slot = tau * slot + (1 - tau) * cur` (line 6 of this cell, in `polyak_step`) "
        "gives the loop name `slot` a new value, but `slot` only walks the entries of "
        "`polyak_avg`: rebinding it leaves `polyak_avg` as it was"
    ), text
    assert "(`frozen_critic.get_weights()` is only read here)" in text
    assert "the weights of" not in text  # the model is not what this loop means to change
    run(kernel, "polyak_step()")
    assert value_of(kernel, "all(not a.any() for a in polyak_avg)") is True
    fix = fix_in(text)
    assert fix == (
        "for i, (slot, cur) in enumerate(zip(polyak_avg, frozen_critic.get_weights())): "
        "polyak_avg[i] = tau * slot + (1 - tau) * cur"
    )
    fixed = KEPT_AVERAGE.replace(
        "    for slot, cur in zip(polyak_avg, frozen_critic.get_weights()):\n"
        "        slot = tau * slot + (1 - tau) * cur\n",
        f"    {fix}\n",
    )
    assert notes_with(fixed, kernel, "gives the loop name") == []
    run(kernel, "polyak_step()")
    assert value_of(
        kernel,
        "bool(np.allclose(polyak_avg[0], 0.5 * frozen_critic.get_weights()[0]))",
    )
    # An in-place update changes each kept array itself: silent.
    in_place = KEPT_AVERAGE.replace(
        "slot = tau * slot + (1 - tau) * cur", "slot *= tau\n        slot += (1 - tau) * cur"
    )
    assert notes_with(in_place, kernel, "gives the loop name") == []
