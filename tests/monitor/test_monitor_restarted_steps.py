"""A loop of steps each taken from the starting values (issue #25,
``training/restarted_steps.py``): the gradient taken at the carried values, the step
subtracted from the ones they started from, so every pass starts again and many steps are
one. Told in the cell that writes the loop, with the step from the carried values; the fix
is run and more steps then fit better. Look-alikes stay silent: the right step, one step
per task from the start on purpose, a step bound to another name."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
gen = np.random.default_rng(9)
pts = gen.normal(size=(30, 2)).astype("float32")
vals = (pts @ np.array([[1.5], [-0.5]], "float32") + 0.3).astype("float32")
base = [tf.Variable(tf.zeros((2, 1))), tf.Variable(tf.zeros((1,)))]

def sq_err(ws, x, y):
    return tf.reduce_mean((x @ ws[0] + ws[1] - y) ** 2)
"""
KERNEL = KernelSetup(after_load=SETUP)

REFINE = """def refine(start, x, y, rounds=1, rate=0.1):
    current = list(start)
    for _ in range(rounds):
        with tf.GradientTape() as tape:
            tape.watch(current)
            e = sq_err(current, x, y)
        deltas = tape.gradient(e, current)
        current = [w - rate * d for w, d in zip(start, deltas)]
    return current

one = float(sq_err(refine(base, pts, vals, rounds=1), pts, vals))
many = float(sq_err(refine(base, pts, vals, rounds=20), pts, vals))
"""
WRONG_STEP = "current = [w - rate * d for w, d in zip(start, deltas)]"


def restart_notes(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in report["notes"] if "every pass of the loop starts again" in n["text"]]


def test_steps_taken_from_the_start_in_every_pass(kernel: KernelSession) -> None:
    [found] = restart_notes(checked_report(run(kernel, REFINE)))
    text = found["text"]
    assert found["course"]["section"] == "training-loop"
    assert text.startswith(f"`{WRONG_STEP}` (line 8, in `refine`) steps from `start`"), text
    assert "taken at `current` (`deltas = tape.gradient(e, current)`, line 7)" in text, text
    # As written, twenty steps fit no better than one.
    assert value_of(kernel, "many > 0.5 * one") is True
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "current = [w - rate * d for w, d in zip(current, deltas)]"
    assert restart_notes(checked_report(run(kernel, REFINE.replace(WRONG_STEP, fix)))) == []
    # Fixed: each step goes on from the last, and twenty fit far better than one.
    assert value_of(kernel, "many < 0.1 * one") is True
    # Told once: the same definition run again says nothing new.
    assert restart_notes(checked_report(run(kernel, REFINE))) == []


def test_one_tensor_stepped_from_its_start(kernel: KernelSession) -> None:
    cell = """w0 = tf.constant([[0.0], [0.0]])
w_now = tf.identity(w0)
for k in range(5):
    with tf.GradientTape() as g_tape:
        g_tape.watch(w_now)
        e = tf.reduce_mean((pts @ w_now - vals) ** 2)
    slope_g = g_tape.gradient(e, w_now)
    w_now = w0 - 0.1 * slope_g
"""
    [found] = restart_notes(checked_report(run(kernel, cell)))
    assert found["text"].startswith("`w_now = w0 - 0.1 * slope_g` (line 8) steps from `w0`")
    assert re.findall(r"`([^`]+)`", found["text"])[-1] == "w_now = w_now - 0.1 * slope_g"


LOOK_ALIKES = [
    # The right step.
    REFINE.replace("def refine", "def refine_ok").replace(
        WRONG_STEP, "current = [w - rate * d for w, d in zip(current, deltas)]"
    ),
    # One step per task, each from the start on purpose: bound afresh in every pass.
    """def per_task(start, tasks, rate=0.1):
    adapted = []
    for x, y in tasks:
        current = list(start)
        with tf.GradientTape() as tape:
            e = sq_err(current, x, y)
        deltas = tape.gradient(e, current)
        current = [w - rate * d for w, d in zip(start, deltas)]
        adapted.append(current)
    return adapted

out = per_task(base, [(pts, vals), (pts[:10], vals[:10])])
""",
    # A look-ahead point made from the start under another name.
    """def look_ahead(start, rate=0.1, rounds=3):
    current = list(start)
    for _ in range(rounds):
        with tf.GradientTape() as tape:
            tape.watch(current)
            e = sq_err(current, pts, vals)
        deltas = tape.gradient(e, current)
        probe = [w - rate * d for w, d in zip(start, deltas)]
        current = [c - rate * d for c, d in zip(current, deltas)]
    return current, probe

ahead = look_ahead(base)
""",
]


@pytest.mark.parametrize("cell", LOOK_ALIKES, ids=["right-step", "per-task", "look-ahead"])
def test_look_alikes_stay_silent(kernel: KernelSession, cell: str) -> None:
    assert restart_notes(checked_report(run(kernel, cell))) == []
