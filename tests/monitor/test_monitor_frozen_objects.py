"""A tf.function keeps the TensorFlow and Keras objects it read while tracing (issue #25,
silent bugs): a later cell that rebinds the name (a new optimizer for a new learning rate,
the model cell run again, a new variable) leaves the trace with the old object, and the
calls that reuse the trace train or read the old one without an error. The entry names the
function, the name and both objects' types; each fix it gives is run and makes the change
take effect with no entry. Look-alikes stay silent: the same object under the name, a
function defined again after the rebinding, an object passed as an argument, a changed
learning rate set in place.
"""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, run_quiet, trace_for, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """
import numpy as np
import tensorflow as tf
import keras

tf.get_logger().setLevel("ERROR")
x = tf.ones((4, 2))
"""

KERNEL = KernelSetup(before_load=SETUP, after_load="")

MODEL = """model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
"""

STEP = """@tf.function
def train_step(batch):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(batch) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""


def _frozen(report: dict) -> list[dict]:
    return [
        reason
        for trace in report["traces"]
        for reason in trace["reasons"]
        if reason["kind"] == "stale_value" and str(reason["before"]).startswith("a ")
    ]


def _moved(kernel: KernelSession, cell: str) -> bool:
    """Whether ``cell`` changed the weights of the model now named ``model``."""
    run_quiet(kernel, "before = [v.numpy().copy() for v in model.trainable_variables]")
    run_quiet(kernel, cell)
    return bool(
        value_of(
            kernel,
            "any(bool((v.numpy() != b).any()) for v, b in zip(model.trainable_variables, before))",
        )
    )


def test_a_new_optimizer_for_a_new_learning_rate(kernel: KernelSession) -> None:
    run_quiet(kernel, MODEL + "opt = keras.optimizers.SGD(0.1)\n" + STEP + "train_step(x)")
    report = run_quiet(kernel, "opt = keras.optimizers.SGD(learning_rate=0.0)\ntrain_step(x)")
    trace = trace_for(report, "train_step")
    assert trace["new_traces"] == 0
    [reason] = _frozen(report)
    assert (reason["argument"], reason["before"], reason["after"]) == (
        "opt",
        "a SGD",
        "another SGD",
    )
    text = reason["text"]
    assert text.startswith(
        "`train_step` still uses the SGD that `opt` held when it traced; `opt` is now another SGD."
    )
    assert "the new one never steps" in text and "`opt.learning_rate.assign(0.001)`" in text
    assert trace["course"]["section"] == "frozen-python-values"
    # The symptom: the new optimizer has not stepped, the old one (learning rate 0.1) has.
    assert value_of(kernel, "int(opt.iterations)") == 0
    assert _moved(kernel, "train_step(x)")  # a learning rate of 0 would not move them
    # Said once for this object.
    assert _frozen(run_quiet(kernel, "train_step(x)")) == []

    # The fix: one optimizer, its learning rate changed in place.
    fixed = MODEL + "opt = keras.optimizers.SGD(0.1)\n" + STEP + "train_step(x)"
    run_quiet(kernel, fixed)
    report = run_quiet(kernel, "opt.learning_rate.assign(0.0)\ntrain_step(x)")
    assert _frozen(report) == []
    assert not _moved(kernel, "train_step(x)")  # the new learning rate is used
    assert value_of(kernel, "int(opt.iterations)") == 3


def test_the_model_cell_run_again(kernel: KernelSession) -> None:
    start = MODEL + "opt = keras.optimizers.SGD(0.1)\n"
    run_quiet(kernel, start + STEP + "train_step(x)")
    run_quiet(kernel, start)  # the learner starts over with a fresh model and optimizer
    report = run_quiet(kernel, "for _ in range(3):\n    train_step(x)")
    reasons = {reason["argument"]: reason["text"] for reason in _frozen(report)}
    assert sorted(reasons) == ["model", "opt"]
    assert "still uses the Sequential that `model` held when it traced" in reasons["model"]
    assert "Run the cell that defines `train_step` again" in reasons["model"]
    assert not _moved(kernel, "train_step(x)")  # the new model never trains
    # The fix: define the step again; it traces with the new model and trains it.
    report = run_quiet(kernel, STEP + "train_step(x)")
    assert _frozen(report) == []
    assert _moved(kernel, "train_step(x)")


def test_a_variable_rebound(kernel: KernelSession) -> None:
    define = """scale = tf.Variable(1.0)

@tf.function
def scaled(t):
    return t * scale

scaled(tf.constant(2.0))"""
    run_quiet(kernel, define)
    report = run_quiet(kernel, "scale = tf.Variable(10.0)\nout = scaled(tf.constant(2.0))")
    [reason] = _frozen(report)
    assert reason["argument"] == "scale" and "`scale.assign(new_value)`" in reason["text"]
    assert value_of(kernel, "float(out)") == 2.0  # the old variable's 1.0
    # The fix: change the value in place.
    run_quiet(kernel, define)
    report = run_quiet(kernel, "scale.assign(10.0)\nout = scaled(tf.constant(2.0))")
    assert _frozen(report) == []
    assert value_of(kernel, "float(out)") == 20.0


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run_quiet(kernel, MODEL + "opt = keras.optimizers.SGD(0.1)\n" + STEP + "train_step(x)")
    # The same object under the name again.
    assert _frozen(run_quiet(kernel, "same = opt\nopt = same\ntrain_step(x)")) == []
    # Rebound, then the function defined again: it traces with the new object.
    report = run_quiet(kernel, "opt = keras.optimizers.Adam(0.01)\n" + STEP + "train_step(x)")
    assert _frozen(report) == []
    # The model passed as an argument: each call uses the object it is given.
    passed = """@tf.function
def predict_with(net, batch):
    return net(batch)

predict_with(model, x)"""
    run_quiet(kernel, passed)
    report = run_quiet(kernel, MODEL + "predict_with(model, x)")
    assert _frozen(report) == []
    # A name the body reads that holds no TF object (a NumPy array) is not this entry.
    run_quiet(kernel, "offset = np.float32(1.0)\n@tf.function\ndef shift(t):\n    return t + 1\n")
    assert _frozen(run_quiet(kernel, "shift(x)\nopt_again = opt\nshift(x)")) == []
