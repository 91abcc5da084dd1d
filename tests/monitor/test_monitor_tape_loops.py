"""A tape recorded once before a loop that takes a gradient at every step and changes the
weights (issue #25, ``monitor/errors/tape_loops.py``): the second step raises "A
non-persistent GradientTape can only be used to compute one set of gradients". The entry
says to move the tape's ``with`` block into the loop, not ``persistent=True`` (which would
keep differentiating the first step's loss, and gives None gradients for rebound tensors).
The fix is applied as told (the block moved into the loop) and the loop runs and learns.
Look-alike: one recording differentiated per item of a loop (``for v in ws``) keeps the
``persistent=True`` fix, which works."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, error_of_failing_cell, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
gen = np.random.default_rng(5)
grid = np.linspace(-1, 1, 40).astype("float32").reshape(-1, 1)
wave = (0.8 * grid - 0.3).astype("float32")
"""
KERNEL = KernelSetup(after_load=SETUP)

TAPE_BLOCK = """with tf.GradientTape() as rec:
    rec.watch(coeffs)
    fit_err = tf.reduce_mean((grid * coeffs[0] + coeffs[1] - wave) ** 2)
"""
LOOP_HEAD = "for it in range(6):\n"
LOOP_BODY = """    d_coeffs = rec.gradient(fit_err, coeffs)
    coeffs = [c - 0.3 * d for c, d in zip(coeffs, d_coeffs)]
    errs.append(float(fit_err))
"""
REBOUND = (
    "coeffs = [tf.constant(0.0), tf.constant(0.0)]\nerrs = []\n"
    + TAPE_BLOCK
    + LOOP_HEAD
    + LOOP_BODY
)
MOVED = (
    "coeffs = [tf.constant(0.0), tf.constant(0.0)]\nerrs = []\n"
    + LOOP_HEAD
    + "".join("    " + line + "\n" for line in TAPE_BLOCK.splitlines())
    + LOOP_BODY
)

OPTIMIZED = """lin = keras.layers.Dense(1)
lin.build((None, 1))
sgd = keras.optimizers.SGD(learning_rate=0.2)
with tf.GradientTape() as tp:
    cost = tf.reduce_mean((lin(grid) - wave) ** 2)
for step in range(4):
    grads = tp.gradient(cost, lin.trainable_variables)
    sgd.apply_gradients(zip(grads, lin.trainable_variables))
"""


def test_a_tape_before_a_loop_that_rebinds_its_sources(kernel: KernelSession) -> None:
    error = error_of_failing_cell(kernel, REBOUND)
    text = error["explanation"]
    assert error["type"] == "RuntimeError"
    assert "`rec` recorded the forward pass once, before `for it in range(6):` (lines 3-5)" in text
    assert "the loop rebinds `coeffs`" in text
    fix = text.split("Fix: ", 1)[1]
    assert "persistent=True" not in fix
    assert "move the `with tf.GradientTape() as rec:` block (lines 3-5) into the loop" in fix
    assert error["course"]["section"] == "gradient-tape"
    # The fix as told: the block moved into the loop, first in its body.
    run(kernel, MOVED)
    errs = value_of(kernel, "errs")
    assert len(errs) == 6 and errs[-1] < errs[0]
    # persistent=True (the old advice) does not repair it: the rebound tensors have no
    # recorded path to the loss, so their gradients are None.
    persistent = REBOUND.replace("tf.GradientTape()", "tf.GradientTape(persistent=True)")
    assert run(kernel, persistent, ok=False).reply["status"] == "error"


def test_a_tape_before_a_loop_that_applies_gradients(kernel: KernelSession) -> None:
    error = error_of_failing_cell(kernel, OPTIMIZED)
    text = error["explanation"]
    assert "`tp` recorded the forward pass once, before `for step in range(4):` (lines 4-5)" in text
    assert "the loop updates the weights (`.apply_gradients(...)`)" in text
    assert "persistent=True" not in text.split("Fix: ", 1)[1]
    head, rest = OPTIMIZED.split("with tf.GradientTape() as tp:\n")
    block, loop = rest.split("for step in range(4):\n")
    moved = head + "before = float(tf.reduce_mean((lin(grid) - wave) ** 2))\n"
    moved += "for step in range(4):\n    with tf.GradientTape() as tp:\n    " + block + loop
    moved += "after = float(tf.reduce_mean((lin(grid) - wave) ** 2))\n"
    run(kernel, moved)
    assert value_of(kernel, "after < before") is True


def test_one_recording_per_item_keeps_the_persistent_fix(kernel: KernelSession) -> None:
    cell = """pa, pb = tf.Variable(1.0), tf.Variable(-1.0)
with tf.GradientTape() as once:
    prod = pa * pb + pa
slopes = []
for v in (pa, pb):
    slope = once.gradient(prod, v)
    slopes.append(float(slope))
"""
    text = error_of_failing_cell(kernel, cell)["explanation"]
    assert "recorded the forward pass once" not in text
    assert "`with tf.GradientTape(persistent=True) as once:`" in text
    run(kernel, cell.replace("GradientTape()", "GradientTape(persistent=True)"))
    assert value_of(kernel, "slopes") == [0.0, 1.0]
