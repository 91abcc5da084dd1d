"""Weights copied into new tf.Variables on every call of a tf.function (issue #25,
``monitor/errors/variable_copies.py``): the trace raises "tf.function only supports
singleton tf.Variables created on the first call". The entry says the per-call copy is
plain tensors (``list(weights)``) stepped functionally, not variables created once outside
(which would keep the previous call's updates). The printed fix is applied as told: the
function runs, the original weights are untouched, and an outer tape differentiates
through the step. Look-alikes keep their advice: an accumulator made from a constant is
moved out of the function; a copy stepped by an optimizer gets no line to paste."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, error_of_failing_cell, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
gen = np.random.default_rng(2)
xa = gen.normal(size=(16, 2)).astype("float32")
ya = (xa @ np.array([[1.5], [-0.5]], "float32")).astype("float32")
xb = gen.normal(size=(16, 2)).astype("float32")
yb = (xb @ np.array([[1.5], [-0.5]], "float32")).astype("float32")
base = [tf.Variable(gen.normal(size=(2, 1)).astype("float32")), tf.Variable(tf.zeros((1,)))]
RATE = 0.1
"""
KERNEL = KernelSetup(after_load=SETUP)

COPIED = """@tf.function
def inner_eval(xa, ya, xb, yb):
    # scratch weights for one task
    scratch = [tf.Variable(p) for p in base]
    with tf.GradientTape() as gt:
        e = tf.reduce_mean((xa @ scratch[0] + scratch[1] - ya) ** 2)
    ds = gt.gradient(e, scratch)
    for s, d in zip(scratch, ds):
        s.assign_sub(RATE * d)
    return tf.reduce_mean((xb @ scratch[0] + scratch[1] - yb) ** 2)

start = [w.numpy().copy() for w in base]
query = float(inner_eval(xa, ya, xb, yb))
"""


def apply(cell: str, text: str) -> str:
    """The fix applied as the entry words it: "on line N `A`, and in place of lines
    I-J `B`"."""
    on_line = re.search(r"on line (\d+) `([^`]+)`", text)
    in_place = re.search(r"in place of lines (\d+)-(\d+) `([^`]+)`", text)
    assert on_line and in_place, text
    lines = cell.split("\n")
    number = int(on_line.group(1))
    indent = re.match(r"\s*", lines[number - 1]).group(0)  # type: ignore[union-attr]
    lines[number - 1] = indent + on_line.group(2)
    first, last = int(in_place.group(1)), int(in_place.group(2))
    indent = re.match(r"\s*", lines[first - 1]).group(0)  # type: ignore[union-attr]
    lines[first - 1 : last] = [indent + in_place.group(3)]
    return "\n".join(lines)


def test_weights_copied_into_new_variables_on_every_call(kernel: KernelSession) -> None:
    error = error_of_failing_cell(kernel, COPIED)
    text = error["explanation"]
    assert error["course"]["section"] == "variables-in-functions"
    assert (
        "`inner_eval` makes `scratch` with `scratch = [tf.Variable(p) for p in base]`: new "
        "tf.Variables copying `base` on every call" in text
    )
    assert "would keep the previous call's updates" in text
    assert "Fix: on line 4 `scratch = list(base)`" in text
    assert "in place of lines 8-9 `scratch = [s - RATE * d for s, d in zip(scratch, ds)]`" in text
    assert "outside, and only update" not in text
    fixed = apply(COPIED, text)
    run(kernel, fixed)
    assert value_of(kernel, "np.isfinite(query).item()") is True
    # The original weights are untouched, and a second call starts from them again.
    assert value_of(kernel, "all(np.array_equal(w.numpy(), s) for w, s in zip(base, start))")
    check = """with tf.GradientTape() as outer_t:
    q = inner_eval(xa, ya, xb, yb)
reach = [g is not None for g in outer_t.gradient(q, base)]
same = float(inner_eval(xa, ya, xb, yb)) == float(q)
"""
    run(kernel, check)
    assert value_of(kernel, "reach + [same]") == [True, True, True]


def test_an_accumulator_keeps_the_move_out_fix(kernel: KernelSession) -> None:
    cell = """@tf.function
def running(x):
    seen = tf.Variable(0.0)
    seen.assign_add(tf.reduce_sum(x))
    return seen

running(tf.ones((3,)))
"""
    text = error_of_failing_cell(kernel, cell)["explanation"]
    assert "copying" not in text and "put it before line 1" in text


def test_a_copy_stepped_by_an_optimizer_gets_no_line(kernel: KernelSession) -> None:
    cell = """net = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
tuner = keras.optimizers.SGD(0.1)
@tf.function
def tuned_loss(xq, yq):
    fresh = [tf.Variable(v) for v in net.trainable_variables]
    with tf.GradientTape() as t2:
        l2 = tf.reduce_mean((xq @ fresh[0] + fresh[1] - yq) ** 2)
    tuner.apply_gradients(zip(t2.gradient(l2, fresh), fresh))
    return l2

tuned_loss(xa, ya)
"""
    text = error_of_failing_cell(kernel, cell)["explanation"]
    assert "new tf.Variables copying `net.trainable_variables`" in text
    assert "Fix:" not in text
    assert "an optimizer would change `net.trainable_variables` in place" in text
