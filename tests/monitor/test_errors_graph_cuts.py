"""Gradients all None because the loss left TensorFlow inside the tape (issue #25,
``errors/graph_cuts.py``): a model's ``predict``, ``.numpy()`` or a NumPy function on the
variables' path. The entry names the statement and the call that cut the graph; the fix
(the model called directly, ``.numpy()`` dropped) is applied and trains. A ``predict`` of
data alone inside the tape, next to a loss computed in TensorFlow, raises nothing."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, checked_report, note_texts, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

MODELS = """rows = np.random.default_rng(6).random((12, 5)).astype("float32")
scorer = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])
judge = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
sgd = keras.optimizers.SGD(0.1)
"""


def _fixes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])


def test_a_models_predict_inside_the_tape_is_named_and_called_directly(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, MODELS)
    body = """with tf.GradientTape() as rec:
    guesses = scorer(rows)
    marks = judge.predict(guesses, verbose=0)
    fixed_marks = judge.predict(rows[:, :3], verbose=0)
    objective = tf.reduce_mean(tf.square(marks - fixed_marks))
steps = rec.gradient(objective, scorer.trainable_variables)
sgd.apply_gradients(zip(steps, scorer.trainable_variables))"""
    report = checked_report(run(kernel, body, ok=False))
    error = report["error"]
    text = error["explanation"]
    assert error["course"]["section"] == "gradient-tape"
    # The note of ``rec.gradient``'s None results says the same cause.
    assert any("went through a model's `predict`" in note for note in note_texts(report))
    assert "line 3, `marks = judge.predict(guesses, verbose=0)`, runs `judge` through" in text
    assert "from `scorer.trainable_variables` to the loss" in text
    # The predict of data alone (line 4) is not on the variables' path.
    assert "fixed_marks = judge.predict" not in text.split("Fix:")[0]
    assert _fixes(text) == ["marks = judge(guesses, training=False)"]
    before = value_of(kernel, "float(tf.reduce_sum(scorer.layers[0].kernel))")
    runs_cleanly(kernel, body.replace(body.splitlines()[2].strip(), _fixes(text)[0]))
    assert value_of(kernel, "[s is None for s in steps]") == [False, False]
    assert value_of(kernel, "float(tf.reduce_sum(scorer.layers[0].kernel))") != before


def test_numpy_on_the_variables_path_is_named(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "gain = tf.Variable([0.5, -1.0])\nplain = tf.constant([2.0, 3.0])\n"
        "step_opt = keras.optimizers.SGD(0.01)",
    )
    body = """with tf.GradientTape() as rec2:
    scaled = gain * plain
    cost = tf.reduce_sum(scaled.numpy() ** 2)
deltas = rec2.gradient(cost, [gain])
step_opt.apply_gradients(zip(deltas, [gain]))"""
    text = failing(kernel, body)["explanation"]
    assert "line 3, `cost = tf.reduce_sum(scaled.numpy() ** 2)`, turns a tensor into" in text
    assert _fixes(text) == ["cost = tf.reduce_sum(scaled ** 2)"]
    runs_cleanly(kernel, body.replace(body.splitlines()[2].strip(), _fixes(text)[0]))
    assert value_of(kernel, "[round(float(v), 4) for v in deltas[0]]") == [4.0, -18.0]
    # A NumPy function: named, its TensorFlow counterpart left to the learner.
    body = """with tf.GradientTape() as rec3:
    cost = tf.reduce_sum(np.square(gain * plain))
deltas = rec3.gradient(cost, [gain])
step_opt.apply_gradients(zip(deltas, [gain]))"""
    text = failing(kernel, body)["explanation"]
    assert (
        "line 2, `cost = tf.reduce_sum(np.square(gain * plain))`, computes with NumPy's "
        "`np.square`" in text
    )
    assert "Fix:" not in text


def test_predict_of_data_beside_a_loss_in_tensorflow_is_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODELS)
    runs_cleanly(
        kernel,
        """with tf.GradientTape() as rec4:
    anchors = judge.predict(rows[:, :3], verbose=0)
    objective = tf.reduce_mean(tf.square(judge(scorer(rows)) - anchors))
steps = rec4.gradient(objective, scorer.trainable_variables)
sgd.apply_gradients(zip(steps, scorer.trainable_variables))""",
    )
