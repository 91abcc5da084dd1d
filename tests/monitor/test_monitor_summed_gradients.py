"""Gradients of several losses taken one ``tape.gradient`` call each on a non-persistent
tape, then only added up item by item as a weighted sum (``monitor/errors/
summed_gradients.py``): the second call raises. ``persistent=True`` lets it run, but a loss
that does not reach a variable gives None there and the weighted sum raises next; the entry
says to record the weighted total in the tape and take one gradient of it. The fix is
applied as printed and gives the same gradients as the per-loss ones with zeros for the
unreached variables. Look-alikes keep the ``persistent=True`` fix: gradients of two losses
for different sources, and results combined otherwise than by a weighted sum."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, error_of_failing_cell, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
rng = np.random.default_rng(11)
pts = tf.constant(rng.normal(size=(32, 3)).astype("float32"))
temps = tf.constant(rng.normal(size=(32, 1)).astype("float32"))
flags = tf.constant((rng.random(size=(32, 1)) > 0.5).astype("float32"))
base = tf.Variable(tf.ones((3, 5)) * 0.1, name="base")
reg_w = tf.Variable(tf.ones((5, 1)) * 0.2, name="reg_w")
cls_w = tf.Variable(tf.ones((5, 1)) * -0.2, name="cls_w")
params = [base, reg_w, cls_w]
alpha = 0.7
"""
KERNEL = KernelSetup(after_load=SETUP)

STEP = """def joint_step(a, t, f):
    with tf.GradientTape() as rec:
        hid = tf.tanh(a @ base)
        err_reg = tf.reduce_mean((hid @ reg_w - t) ** 2)
        err_cls = tf.reduce_mean(
            tf.nn.sigmoid_cross_entropy_with_logits(labels=f, logits=hid @ cls_w)
        )
    d_reg = rec.gradient(err_reg, params)
    d_cls = rec.gradient(err_cls, params)
    mixed = [alpha * u + (1 - alpha) * v for u, v in zip(d_reg, d_cls)]
    return mixed

got = joint_step(pts, temps, flags)
"""


def _applied(cell: str, text: str) -> str:
    """The printed fix applied: the total after the tape block's last line, and the
    gradient lines replaced by the one call."""
    total = re.search(r"`(total_loss = [^`]+)`", text)
    one = re.search(r"in place of lines (\d+)-(\d+) write `([^`]+)`", text)
    after = re.search(r"\(after line (\d+)\)", text)
    assert total and one and after, text
    lines = cell.splitlines()
    first, last, block_end = int(one[1]), int(one[2]), int(after[1])
    indent = re.match(r"\s*", lines[block_end - 1])[0]  # type: ignore[index]
    outer = re.match(r"\s*", lines[first - 1])[0]  # type: ignore[index]
    fixed = [*lines[:block_end], indent + total[1], *lines[block_end : first - 1]]
    fixed += [outer + one[3], *lines[last:]]
    return "\n".join(fixed) + "\n"


def test_weighted_sum_of_two_gradients_becomes_one_gradient(kernel: KernelSession) -> None:
    error = error_of_failing_cell(kernel, STEP)
    text = error["explanation"]
    assert error["type"] == "RuntimeError"
    assert "`d_reg` and `d_cls` are gradients of different losses" in text
    assert "same `params`" in text
    assert "`total_loss = alpha * err_reg + (1 - alpha) * err_cls`" in text
    assert "`mixed = rec.gradient(total_loss, params)`" in text
    assert "persistent=True" not in text
    assert error["course"]["section"] == "gradient-tape"
    # The old advice does not repair it: err_reg never reaches cls_w, so d_reg holds None.
    persistent = STEP.replace("GradientTape()", "GradientTape(persistent=True)")
    assert run(kernel, persistent, ok=False).reply["status"] == "error"
    # The printed fix runs and gives the weighted gradients, zeros where unreached.
    run(kernel, _applied(STEP, text))
    expected = """
with tf.GradientTape(persistent=True) as ref:
    hid = tf.tanh(pts @ base)
    e_r = tf.reduce_mean((hid @ reg_w - temps) ** 2)
    e_c = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=flags, logits=hid @ cls_w))
zero = tf.UnconnectedGradients.ZERO
want = [alpha * u + (1 - alpha) * v for u, v in zip(
    ref.gradient(e_r, params, unconnected_gradients=zero),
    ref.gradient(e_c, params, unconnected_gradients=zero))]
same = all(np.allclose(g.numpy(), w.numpy(), atol=1e-6) for g, w in zip(got, want))
"""
    run(kernel, expected)
    assert value_of(kernel, "same") is True


def test_gradients_for_different_sources_keep_the_persistent_fix(
    kernel: KernelSession,
) -> None:
    # Two losses, each for its own variables (a generator and a critic): nothing is summed.
    cell = """with tf.GradientTape() as both:
    hid2 = tf.tanh(pts @ base)
    gen_cost = tf.reduce_mean(hid2 @ reg_w)
    critic_cost = tf.reduce_mean((hid2 @ cls_w) ** 2)
g_gen = both.gradient(gen_cost, [base, reg_w])
g_crit = both.gradient(critic_cost, [cls_w])
norms = [float(tf.norm(g)) for g in g_gen + g_crit]
"""
    text = error_of_failing_cell(kernel, cell)["explanation"]
    assert "are gradients of different losses" not in text
    assert "`with tf.GradientTape(persistent=True) as both:`" in text
    run(kernel, cell.replace("GradientTape()", "GradientTape(persistent=True)"))
    assert len(value_of(kernel, "norms")) == 3


def test_results_multiplied_together_keep_the_persistent_fix(kernel: KernelSession) -> None:
    # An item-by-item product of two gradients is no gradient of one loss.
    cell = """with tf.GradientTape() as tp2:
    hid3 = tf.tanh(pts @ base)
    c1 = tf.reduce_mean(hid3 ** 2)
    c2 = tf.reduce_mean(tf.abs(hid3))
q1 = tp2.gradient(c1, base)
q2 = tp2.gradient(c2, base)
agree = [a * b for a, b in zip(q1, q2)]
"""
    text = error_of_failing_cell(kernel, cell)["explanation"]
    assert "are gradients of different losses" not in text
    assert "persistent=True" in text
