"""A quantity to maximise handed to an optimizer as it is (issue #25, silent bugs): Keras
optimizers minimise, so a log-density or a reward differentiated in the tape and given to
``apply_gradients`` unchanged falls step after step. Told at the ``tape.gradient`` site,
not as a divergence of the learning rate; the fix (the negative in the tape) is run in the
kernel and the quantity then grows with no note. Look-alikes stay silent: ascent written
by hand with ``assign_add``, gradients negated before ``apply_gradients``, a negated
objective named as a loss."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "gradient-tape"

HELPERS = """keras.utils.set_random_seed(1)
readings = tf.constant(np.random.default_rng(3).normal(2.0, 0.5, size=200).astype("float32"))

def gaussian_log_density(values, centre, log_spread):
    z = (values - centre) / tf.exp(log_spread)
    return tf.reduce_sum(-0.5 * z * z - log_spread - 0.9189385)

def current_fit():
    return gaussian_log_density(readings, centre, log_spread)
"""

DENSITY_LOOP = """centre = tf.Variable(0.0)
log_spread = tf.Variable(0.0)
adam = keras.optimizers.Adam(0.05)
first_fit = float(current_fit())
for it in range(64):
    with tf.GradientTape() as g:
        fit_value = current_fit()
    d = g.gradient(fit_value, [centre, log_spread])
    adam.apply_gradients(zip(d, [centre, log_spread]))
"""
DENSITY_TARGET = "        fit_value = current_fit()"
DENSITY_GRADIENT = "    d = g.gradient(fit_value, [centre, log_spread])"

REWARD_LOOP = """goal = tf.constant([[0.5], [-1.0], [2.0]])
policy = tf.Variable(tf.zeros((3, 1)))
sgd = keras.optimizers.SGD(0.1)
for episode in range(40):
    with tf.GradientTape() as tape:
        reward = -tf.reduce_sum(tf.square(policy - goal))
    step_grads = tape.gradient(reward, [policy])
    sgd.apply_gradients(zip(step_grads, [policy]))
"""
REWARD_TARGET = "        reward = -tf.reduce_sum(tf.square(policy - goal))"
REWARD_GRADIENT = "    step_grads = tape.gradient(reward, [policy])"


def maximised_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "always minimise" in n["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_a_log_density_returned_by_a_helper(kernel: KernelSession) -> None:
    run(kernel, HELPERS)
    report = checked_report(run(kernel, DENSITY_LOOP))
    notes = maximised_notes(report)
    assert len(notes) == 1, report["notes"]
    assert notes[0].startswith("`fit_value` is computed by `gaussian_log_density` (line 8)")
    assert "`adam.apply_gradients` steps against the gradient" in notes[0]
    assert "made `fit_value` smaller (it went from " in notes[0]
    # No second note blaming the learning rate for the fall.
    assert len(report["notes"]) == 1, report["notes"]
    fix, gradient_fix = codes(notes[0])[-2:]
    assert fix == "loss = -current_fit()"
    assert gradient_fix == "d = g.gradient(loss, [centre, log_spread])"
    fixed = DENSITY_LOOP.replace(DENSITY_TARGET, "        " + fix).replace(
        DENSITY_GRADIENT, "    " + gradient_fix
    )
    assert checked_report(run(kernel, fixed))["notes"] == []
    assert shown(kernel, "float(current_fit()) > first_fit + 50") == "True"
    assert shown(kernel, "float(centre) > 1.0") == "True"


def test_a_reward_named_as_such(kernel: KernelSession) -> None:
    notes = maximised_notes(checked_report(run(kernel, REWARD_LOOP)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`reward` (line 7): a quantity to make larger")
    assert "`sgd.apply_gradients`" in notes[0]
    fix, gradient_fix = codes(notes[0])[-2:]
    assert fix == "loss = tf.reduce_sum(tf.square(policy - goal))"
    assert gradient_fix == "step_grads = tape.gradient(loss, [policy])"
    fixed = REWARD_LOOP.replace(REWARD_TARGET, "        " + fix).replace(
        REWARD_GRADIENT, "    " + gradient_fix
    )
    assert checked_report(run(kernel, fixed))["notes"] == []
    assert shown(kernel, "float(tf.reduce_max(tf.abs(policy - goal))) < 0.05") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, HELPERS)
    # Ascent written by hand: the sign is right.
    by_hand = DENSITY_LOOP.replace(
        "    adam.apply_gradients(zip(d, [centre, log_spread]))",
        "    for v, dv in zip([centre, log_spread], d):\n        v.assign_add(0.002 * dv)",
    )
    assert maximised_notes(checked_report(run(kernel, by_hand))) == []
    assert shown(kernel, "float(current_fit()) > first_fit") == "True"
    # Gradients negated before the optimizer.
    negated = REWARD_LOOP.replace(
        "zip(step_grads, [policy])", "zip([-s for s in step_grads], [policy])"
    )
    assert checked_report(run(kernel, negated))["notes"] == []
    assert shown(kernel, "float(tf.reduce_max(tf.abs(policy - goal))) < 0.05") == "True"
    # The negative written in the tape under a loss's name.
    named_loss = DENSITY_LOOP.replace(DENSITY_TARGET, "        neg_fit = -current_fit()").replace(
        "g.gradient(fit_value,", "g.gradient(neg_fit,"
    )
    assert checked_report(run(kernel, named_loss))["notes"] == []
