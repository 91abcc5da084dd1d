"""Functional weight updates (issue #25): ``new = [w - c * g for w, g in zip(ws, grads)]``
fed back to the tape, or returned to an outer tape, is a differentiable inner loop (MAML),
not a loop that "trained nothing": the rebinding note stays quiet and never prints an
``assign`` fix (``variables/training_symptoms.py``, ``variables/training_causes.py``).
Written with the ascent sign (``w + c * g`` of a loss), the ascent note tells it and its fix
keeps the functional form (``training/ascent_updates.py``); the fix is run and the loss
falls. Look-alikes stay silent: a correct functional inner loop under an outer tape, a
one-step helper called twice, an adversarial step on an input."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
rng = np.random.default_rng(11)
inputs_a = rng.normal(size=(24, 3)).astype("float32")
targets_a = (inputs_a @ np.array([[0.5], [-1.0], [2.0]], "float32")).astype("float32")
inputs_b = rng.normal(size=(24, 3)).astype("float32")
targets_b = (inputs_b @ np.array([[0.5], [-1.0], [2.0]], "float32")).astype("float32")
theta = [tf.Variable(rng.normal(size=(3, 1)).astype("float32") * 0.1),
         tf.Variable(tf.zeros((1,)))]

def predict(params, feats):
    return feats @ params[0] + params[1]

def sq_err(pred, truth):
    return tf.reduce_mean(tf.square(pred - truth))
"""
KERNEL = KernelSetup(after_load=SETUP)

# A differentiable inner loop with the ascent sign; the step size is a parameter whose
# default is a notebook constant.
INNER = """STEP = 0.05

def inner_steps(params, feats, truth, n=4, step=STEP):
    current = list(params)
    for _ in range(n):
        with tf.GradientTape() as rec:
            rec.watch(current)
            err = sq_err(predict(current, feats), truth)
        d_params = rec.gradient(err, current)
        current = [p + step * d for p, d in zip(current, d_params)]
    return current

adapted = inner_steps(theta, inputs_a, targets_a)
before_after = [float(sq_err(predict(theta, inputs_a), targets_a)),
                float(sq_err(predict(adapted, inputs_a), targets_a))]
"""
ASCENT_LINE = "current = [p + step * d for p, d in zip(current, d_params)]"


def notes_of(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"]]


def ascent_notes(report: dict[str, Any]) -> list[str]:
    return [t for t in notes_of(report) if t.startswith("Gradient ascent")]


def rebinding_notes(report: dict[str, Any]) -> list[str]:
    return [t for t in notes_of(report) if t.startswith("Nothing trained") or "assign_" in t]


def test_a_functional_inner_loop_that_adds_the_gradient(kernel: KernelSession) -> None:
    report = checked_report(run(kernel, INNER))
    assert rebinding_notes(report) == [], notes_of(report)
    [text] = ascent_notes(report)
    assert text.startswith(f"Gradient ascent: `{ASCENT_LINE}` in `inner_steps` adds `step`")
    assert "`d_params` from `tape.gradient(err, current)`" in text
    assert "Keep this functional form" in text
    rose = value_of(kernel, "before_after")
    assert rose[1] > rose[0]
    fix = re.findall(r"`([^`]+)`", text.split("against the gradient:", 1)[1])[0]
    assert fix == "current = [p - step * d for p, d in zip(current, d_params)]"
    assert "assign" not in fix
    fixed = checked_report(run(kernel, INNER.replace(ASCENT_LINE, fix)))
    assert ascent_notes(fixed) == [] and rebinding_notes(fixed) == [], notes_of(fixed)
    fell = value_of(kernel, "before_after")
    assert fell[1] < fell[0]
    # The fixed form stays differentiable: an outer tape reaches every variable.
    outer = """with tf.GradientTape() as meta:
    query_err = sq_err(predict(inner_steps(theta, inputs_a, targets_a, n=2), inputs_b), targets_b)
meta_grads = meta.gradient(query_err, theta)
reached = [g is not None for g in meta_grads]
"""
    report = checked_report(run(kernel, outer))
    assert ascent_notes(report) == [] and rebinding_notes(report) == [], notes_of(report)
    assert value_of(kernel, "reached") == [True, True]


def test_a_single_tensor_updated_functionally(kernel: KernelSession) -> None:
    cell = """scale = tf.Variable(3.0)
pts = np.linspace(0, 1, 30).astype("float32")
def fitted(s):
    return tf.reduce_mean((s * pts - 1.0) ** 2)
s_now = scale
trace_loss = []
for _ in range(5):
    with tf.GradientTape() as tp:
        tp.watch(s_now)
        mse_now = fitted(s_now)
    g_s = tp.gradient(mse_now, s_now)
    s_now = s_now + 0.5 * g_s
    trace_loss.append(float(mse_now))
"""
    report = checked_report(run(kernel, cell))
    assert rebinding_notes(report) == [], notes_of(report)
    [text] = ascent_notes(report)
    assert "`s_now = s_now + 0.5 * g_s`" in text and "`trace_loss` rose from" in text
    fix = re.findall(r"`([^`]+)`", text.split("against the gradient:", 1)[1])[0]
    assert fix == "s_now = s_now - 0.5 * g_s"
    report = checked_report(run(kernel, cell.replace("s_now = s_now + 0.5 * g_s", fix)))
    assert ascent_notes(report) == [] and rebinding_notes(report) == [], notes_of(report)
    fell = value_of(kernel, "trace_loss")
    assert fell[-1] < fell[0]


LOOK_ALIKES = [
    # MAML with a correct inner step, under an outer tape, in one cell.
    """outer_opt = keras.optimizers.SGD(learning_rate=0.01)
def one_step(params, feats, truth, rate=0.02):
    with tf.GradientTape() as t_in:
        t_in.watch(params)
        e_in = sq_err(predict(params, feats), truth)
    gs = t_in.gradient(e_in, params)
    stepped = [p - rate * g for p, g in zip(params, gs)]
    return stepped
meta_losses = []
for _ in range(3):
    with tf.GradientTape() as t_out:
        quick = one_step(theta, inputs_a, targets_a)
        quick = one_step(quick, inputs_a, targets_a)
        e_out = sq_err(predict(quick, inputs_b), targets_b)
    outer_opt.apply_gradients(zip(t_out.gradient(e_out, theta), theta))
    meta_losses.append(float(e_out))
""",
    # A one-step helper called on two tasks to evaluate, no outer update: the variables
    # are meant to stay as they are.
    """def tuned(params, feats, truth, rate=0.02):
    with tf.GradientTape() as tt:
        e_t = sq_err(predict(params, feats), truth)
    g_t = tt.gradient(e_t, params)
    moved = [p - rate * g for p, g in zip(params, g_t)]
    return moved
scores = [float(sq_err(predict(tuned(theta, f, t), f), t))
          for f, t in [(inputs_a, targets_a), (inputs_b, targets_b)]]
""",
    # An adversarial step on an input, written functionally: meant to raise the loss.
    """x_pert = tf.constant(inputs_a)
for _ in range(3):
    with tf.GradientTape() as ta:
        ta.watch(x_pert)
        miss_loss = sq_err(predict(theta, x_pert), targets_a)
    gx = ta.gradient(miss_loss, x_pert)
    x_pert = x_pert + 0.1 * gx
""",
]


@pytest.mark.parametrize("cell", LOOK_ALIKES, ids=["maml", "evaluate", "adversarial"])
def test_look_alikes_stay_silent(kernel: KernelSession, cell: str) -> None:
    report = checked_report(run(kernel, cell))
    assert ascent_notes(report) == [] and rebinding_notes(report) == [], notes_of(report)
