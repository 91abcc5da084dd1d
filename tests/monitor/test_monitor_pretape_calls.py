"""None gradients because a value the loss uses was computed before the tape by a call of
the learner's own function that reads the trained variables (issue #25).

``a, b = transform()`` (the function returns ``tf.exp`` / ``softplus`` of the variables)
written above ``with tf.GradientTape() as tape:``: the assignment names no variable, but
the function reads them, so the tape never sees how they made ``a``. The error entry names
the assignment, its line, the function and the variables it reads, and says to move the
line inside the block; the test moves it and the cell trains. Followed two calls deep
(a helper calling the model). Look-alikes: a pre-tape value from a function that does not
read the variables stays out of the entry, and a cell computing it that way trains cleanly.
"""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(2)
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")

DECAY = """log_rate = tf.Variable(-1.0)
raw_level = tf.Variable(0.3)
times = tf.linspace(0.0, 4.0, 40)
seen = 2.0 * tf.exp(-0.7 * times)

def positive_params():
    return tf.exp(log_rate), tf.nn.softplus(raw_level)
"""


def test_parameters_from_a_helper_called_before_the_tape(kernel: KernelSession) -> None:
    run(kernel, DECAY)
    cell = """k, level = positive_params()
with tf.GradientTape() as recorder:
    misfit = tf.reduce_mean((level * tf.exp(-k * times) - seen) ** 2)
steps = recorder.gradient(misfit, [log_rate, raw_level])
adam = keras.optimizers.Adam(0.05)
adam.apply_gradients(zip(steps, [log_rate, raw_level]))
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "gradient-tape"
    assert (
        "but `level` was computed before the block (line 1: `k, level = positive_params()`, and "
        "`positive_params` reads `log_rate`, `raw_level`)"
    ) in text, text
    assert "the tape `recorder` never recorded" in text
    fix = "Fix: move `k, level = positive_params()` inside the `with ... as recorder:` block"
    assert fix in text
    moved = cell.replace("k, level = positive_params()\n", "").replace(
        "    misfit =", "    k, level = positive_params()\n    misfit ="
    )
    runs_cleanly(kernel, moved)


def test_model_output_from_a_two_level_helper_before_the_tape(kernel: KernelSession) -> None:
    run(
        kernel,
        """net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)])
inputs = np.random.randn(64, 3).astype("float32")
answers = inputs.sum(axis=1, keepdims=True)

def hidden(batch):
    return net(batch)

def predict_scores(batch):
    return hidden(batch) * 1.0
""",
    )
    cell = """guesses = predict_scores(inputs)
with tf.GradientTape() as t:
    error_sq = tf.reduce_mean(tf.square(guesses - answers))
delta = t.gradient(error_sq, net.trainable_variables)
step_rule = keras.optimizers.SGD(0.01)
step_rule.apply_gradients(zip(delta, net.trainable_variables))
"""
    text = failing(kernel, cell)["explanation"]
    assert (
        "`guesses` was computed before the block (line 1: `guesses = predict_scores(inputs)`, "
        "and `predict_scores` reads `net`)"
    ) in text, text
    moved = cell.replace("guesses = predict_scores(inputs)\n", "").replace(
        "    error_sq =", "    guesses = predict_scores(inputs)\n    error_sq ="
    )
    runs_cleanly(kernel, moved)


def test_a_constant_from_a_helper_stays_out_of_the_entry(kernel: KernelSession) -> None:
    run(
        kernel,
        """slope = tf.Variable([[0.2], [0.1]])
pts = np.random.randn(30, 2).astype("float32")
def standardise(a):
    return (a - a.mean(axis=0)) / a.std(axis=0)
""",
    )
    # The pre-tape value does not depend on the variable: the real cause (the loss goes
    # through NumPy) is elsewhere, and `standardise` must not be blamed.
    cell = """scaled = standardise(pts)
with tf.GradientTape() as tp:
    fitted = np.asarray(scaled @ slope.numpy())
    cost = tf.reduce_mean(tf.constant(fitted) ** 2)
g = tp.gradient(cost, [slope])
keras.optimizers.SGD(0.1).apply_gradients(zip(g, [slope]))
"""
    text = failing(kernel, cell)["explanation"]
    assert "standardise" not in text and "before the block" not in text, text
    # A constant computed by a helper before the tape, with the loss computed inside it,
    # trains: no entry, no None-gradient note.
    report = checked_report(
        run(
            kernel,
            """scaled = standardise(pts)
with tf.GradientTape() as tp:
    cost = tf.reduce_mean((scaled @ slope) ** 2)
g = tp.gradient(cost, [slope])
keras.optimizers.SGD(0.1).apply_gradients(zip(g, [slope]))
""",
        )
    )
    assert report["error"] is None
    assert not [n for n in report["notes"] if "returned None" in n["text"]], report["notes"]


def test_a_none_gradient_note_names_the_helper_call_before_the_tape(
    kernel: KernelSession,
) -> None:
    # Nothing raises: one variable still gets its gradient, the other gets None.
    run(
        kernel,
        """gain_v = tf.Variable(0.5)
bias_v = tf.Variable(0.0)
xs = tf.random.normal((50,))
ys = 3.0 * xs + 1.0

def doubled_gain():
    return 2.0 * gain_v
""",
    )
    cell = """g2 = doubled_gain()
with tf.GradientTape() as tp:
    fit_err = tf.reduce_mean((g2 * xs + bias_v - ys) ** 2)
pair = tp.gradient(fit_err, [gain_v, bias_v])
"""
    report = checked_report(run(kernel, cell))
    notes = [n["text"] for n in report["notes"] if "returned None" in n["text"]]
    assert len(notes) == 1, report["notes"]
    text = notes[0]
    assert "returned None for `gain_v`:" in text, text
    assert (
        "`fit_err` is computed inside the block from `g2`, but `g2` is computed at line 1 "
        "(`g2 = doubled_gain()`, and `doubled_gain` reads `gain_v`), before the block began"
    ) in text, text
    assert "Move that line inside the `with` block of `tp`" in text
    moved = cell.replace("g2 = doubled_gain()\n", "").replace(
        "    fit_err =", "    g2 = doubled_gain()\n    fit_err ="
    )
    report = checked_report(run(kernel, moved))
    assert not [n for n in report["notes"] if "returned None" in n["text"]], report["notes"]
