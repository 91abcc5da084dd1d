"""A function that names its weights parameter again, steps it in place and returns it
(issue #25, ``training/parameter_aliases.py``): ``adapted = params`` copies nothing, so
the caller's variables change and each call starts from the previous one's result. Told
in the cell that defines the function, with the statement, the update and the copy to make;
the fix is run and the caller's weights stay as they were while the copy trains.
Look-alikes stay silent: a function that trains its parameter in place under its own name,
a real copy, an alias never returned, and a tf.function."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
rng = np.random.default_rng(4)
xs = rng.normal(size=(20, 2)).astype("float32")
ys = (xs @ np.array([[2.0], [1.0]], "float32")).astype("float32")
shared = [tf.Variable(tf.zeros((2, 1))), tf.Variable(tf.zeros((1,)))]
sgd = keras.optimizers.SGD(learning_rate=0.1)

def err(params, x, y):
    return tf.reduce_mean((x @ params[0] + params[1] - y) ** 2)
"""
KERNEL = KernelSetup(after_load=SETUP)

ALIASED = """def specialise(params, x, y, n=5):
    adapted = params
    opt = keras.optimizers.SGD(learning_rate=0.1)
    for _ in range(n):
        with tf.GradientTape() as tape:
            e = err(adapted, x, y)
        grads = tape.gradient(e, adapted)
        opt.apply_gradients(zip(grads, adapted))
    return adapted
"""
USE = """before = [v.numpy().copy() for v in shared]
tuned = specialise(shared, xs, ys)
kept = all(np.array_equal(v.numpy(), b) for v, b in zip(shared, before))
better = float(err(tuned, xs, ys)) < float(err(shared, xs, ys))
"""


def alias_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "copies nothing" in n["text"]]


def test_an_aliased_parameter_stepped_in_place_and_returned(kernel: KernelSession) -> None:
    report = checked_report(run(kernel, ALIASED))
    [found] = [n for n in report["notes"] if "copies nothing" in n["text"]]
    text = found["text"]
    assert found["course"]["section"] == "variable-references"
    assert text.startswith("`adapted = params` in `specialise` copies nothing")
    assert "`opt.apply_gradients(zip(grads, adapted))` (line 8)" in text
    fix = re.findall(r"`([^`]+)`", text.split("Copy the variables first:", 1)[1])[0]
    assert fix == "adapted = [tf.Variable(w) for w in params]"
    # As written, the caller's weights move with the "copy".
    run(kernel, USE)
    assert value_of(kernel, "[kept, better]") == [False, False]
    # Fixed: the caller's weights are kept and the copy trains.
    fixed = ALIASED.replace("adapted = params", fix)
    assert alias_notes(checked_report(run(kernel, fixed))) == []
    run(kernel, "for v in shared:\n    v.assign(tf.zeros_like(v))\n" + USE)
    assert value_of(kernel, "[kept, better]") == [True, True]


def test_an_assign_loop_through_the_alias(kernel: KernelSession) -> None:
    cell = """def nudged(weights, lr=0.05):
    work = weights
    with tf.GradientTape() as tp:
        e = err(work, xs, ys)
    for w, g in zip(work, tp.gradient(e, work)):
        w.assign_sub(lr * g)
    return work
"""
    [text] = alias_notes(checked_report(run(kernel, cell)))
    assert "`w.assign_sub(lr * g)` (line 6)" in text
    assert "`work = [tf.Variable(w) for w in weights]`" in text


LOOK_ALIKES = [
    # Trains its parameter in place under its own name: meant.
    """def train_in_place(params, n=3):
    for _ in range(n):
        with tf.GradientTape() as tape:
            e = err(params, xs, ys)
        sgd.apply_gradients(zip(tape.gradient(e, params), params))
    return params
""",
    # A real copy.
    """def copied(params):
    mine = [tf.Variable(p) for p in params]
    with tf.GradientTape() as tape:
        e = err(mine, xs, ys)
    sgd.apply_gradients(zip(tape.gradient(e, mine), mine))
    return mine
""",
    # A second name, stepped in place but not returned: a training helper.
    """def step_all(params):
    vs = params
    with tf.GradientTape() as tape:
        e = err(vs, xs, ys)
    sgd.apply_gradients(zip(tape.gradient(e, vs), vs))
""",
    # Functional: the alias is rebound to new tensors, nothing changes in place.
    """def functional(params, lr=0.1):
    cur = params
    with tf.GradientTape() as tape:
        tape.watch(cur)
        e = err(cur, xs, ys)
    cur = [c - lr * g for c, g in zip(cur, tape.gradient(e, cur))]
    return cur
""",
]


@pytest.mark.parametrize("cell", LOOK_ALIKES, ids=["in-place", "copy", "unreturned", "functional"])
def test_look_alikes_stay_silent(kernel: KernelSession, cell: str) -> None:
    assert alias_notes(checked_report(run(kernel, cell))) == []
