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


# ------------------------------------------------------------------ a cell's shallow copy
SHALLOW = """start = float(err(shared, xs, ys))
trial = COPY
for _ in range(20):
    with tf.GradientTape() as tape:
        e = err(trial, xs, ys)
    for w, g in zip(trial, tape.gradient(e, trial)):
        w.assign_sub(0.1 * g)
end = float(err(trial, xs, ys))
"""
RESET = "for v in shared:\n    v.assign(tf.zeros_like(v))\n"


def copy_notes(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in report["notes"] if "copies the list, not the variables" in n["text"]]


@pytest.mark.parametrize("copy", ["list(shared)", "shared[:]", "[v for v in shared]"])
def test_a_list_copy_of_variables_trained_in_place(kernel: KernelSession, copy: str) -> None:
    run(kernel, RESET)
    [found] = copy_notes(checked_report(run(kernel, SHALLOW.replace("COPY", copy))))
    text = found["text"]
    assert found["course"]["section"] == "variable-references"
    assert text.startswith(f"`trial = {copy}` copies the list, not the variables in it"), text
    assert "`w.assign_sub(0.1 * g)` (line 7) changed `shared` too" in text, text
    # As written, the weights the copy came from were trained too.
    assert value_of(kernel, "float(err(shared, xs, ys)) < start / 10") is True
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "trial = [tf.Variable(w) for w in shared]"
    run(kernel, RESET)
    fixed = checked_report(run(kernel, SHALLOW.replace("trial = COPY", fix)))
    assert copy_notes(fixed) == []
    # Fixed: the copy trains, the weights it came from stay as they were.
    assert value_of(kernel, "[end < start / 10, float(err(shared, xs, ys)) == start]") == [
        True,
        True,
    ]


COPY_LOOK_ALIKES = [
    # Lists of variables gathered to train them all together: in place is meant.
    """gathered = list(shared)
gathered += [tf.Variable(0.0)]
with tf.GradientTape() as tape:
    e = err(gathered, xs, ys) + gathered[2] ** 2
sgd2 = keras.optimizers.SGD(0.1)
sgd2.apply_gradients(zip(tape.gradient(e, gathered), gathered))
""",
    # A second list of the same variables, the original never used as weights of its own.
    """vs = list(shared)
with tf.GradientTape() as tape:
    e = err(vs, xs, ys)
for w, g in zip(vs, tape.gradient(e, vs)):
    w.assign_sub(0.01 * g)
""",
    # A snapshot of the values, then the variables trained.
    """snap = [w.numpy().copy() for w in shared]
with tf.GradientTape() as tape:
    e = err(shared, xs, ys)
for w, g in zip(shared, tape.gradient(e, shared)):
    w.assign_sub(0.01 * g)
moved = [float(np.abs(w.numpy() - s).max()) for w, s in zip(shared, snap)]
""",
]


@pytest.mark.parametrize("cell", COPY_LOOK_ALIKES, ids=["gathered", "unused-original", "snapshot"])
def test_copy_look_alikes_stay_silent(kernel: KernelSession, cell: str) -> None:
    assert copy_notes(checked_report(run(kernel, cell))) == []
