"""Calls Keras 3 removed with no new name (``errors/families_keras3_calls.py``):
``keras.backend.set_value``/``get_value``/``variable``/``set_learning_phase`` and an
optimizer's ``minimize``. The entry says what replaced each and writes the failing call that
way in the learner's names; every printed fix runs; a name Keras 3 still has, and the
Keras 3 way itself, get no entry."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

COMPILED = """scorer = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(2)])
scorer.compile(optimizer=keras.optimizers.RMSprop(0.01), loss="mse")
scorer.fit(np.ones((16, 6), "float32"), np.zeros((16, 2), "float32"), epochs=1, verbose=0)
"""


def _fixes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])


def test_set_and_get_value_of_an_optimizers_rate(kernel: KernelSession) -> None:
    runs_cleanly(kernel, COMPILED)
    error = failing(kernel, "keras.backend.set_value(scorer.optimizer.learning_rate, 0.002)")
    text = error["explanation"]
    assert "Keras 3's `keras.backend` has no `set_value`" in text
    assert "a variable sets its own value with `.assign(...)`" in text
    assert _fixes(text) == ["scorer.optimizer.learning_rate.assign(0.002)"]
    # In place of the failing line (not a call to run before it).
    assert "Fix: on line 1 `scorer.optimizer.learning_rate.assign(0.002)`" in text
    runs_cleanly(kernel, _fixes(text)[0])
    assert abs(value_of(kernel, "float(scorer.optimizer.learning_rate)") - 0.002) < 1e-7
    text = failing(kernel, "rate_now = keras.backend.get_value(scorer.optimizer.learning_rate)")[
        "explanation"
    ]
    assert "`.numpy()`" in text
    assert _fixes(text) == ["rate_now = scorer.optimizer.learning_rate.numpy()"]
    runs_cleanly(kernel, _fixes(text)[0])
    assert abs(value_of(kernel, "float(rate_now)") - 0.002) < 1e-7
    # A value the monitor cannot show to be a variable: the rule, no fix.
    text = failing(kernel, "keras.backend.set_value(scorer.optimizer.lr, 0.001)")["explanation"]
    assert "Fix:" not in text


def test_a_keras_variable_and_the_learning_phase(kernel: KernelSession) -> None:
    text = failing(kernel, "bias_v = keras.backend.variable(np.full((3,), 0.5))")["explanation"]
    assert "a Keras variable is made with `keras.Variable(...)`" in text
    fix = _fixes(text)[-1]
    assert fix == "bias_v = keras.Variable(np.full((3,), 0.5))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(bias_v.numpy().sum())") == 1.5
    error = failing(kernel, "keras.backend.set_learning_phase(0)")
    assert "`model(x, training=True)` in a training step" in error["explanation"]
    assert error["course"]["section"] == "training-argument"


def test_minimize_becomes_a_tape_step(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """centre = tf.Variable([4.0, -2.0])
def distance():
    return tf.reduce_sum(centre ** 2)
stepper = keras.optimizers.SGD(learning_rate=0.1)""",
    )
    error = failing(kernel, "for _ in range(5):\n    stepper.minimize(distance, var_list=[centre])")
    text = error["explanation"]
    assert "Keras 3 optimizers have no `minimize`" in text
    assert "Write in place of line 2, at its indentation, the three lines" in text
    assert error["course"]["section"] == "training-loop"
    recorded, taken, applied = _fixes(text)
    assert recorded == "with tf.GradientTape() as tape: loss = distance()"
    assert taken == "grads = tape.gradient(loss, [centre])"
    assert applied == "stepper.apply_gradients(zip(grads, [centre]))"
    runs_cleanly(kernel, f"for _ in range(5):\n    {recorded}\n    {taken}\n    {applied}")
    assert value_of(kernel, "float(distance())") < 20.0 * 0.5
    # A lambda of no arguments: its body is the loss; the names an earlier step left
    # holding tensors are used again, a name of the learner's is not.
    runs_cleanly(kernel, 'grads = "kept"')
    text = failing(kernel, "stepper.minimize(lambda: tf.reduce_sum(centre), [centre])")[
        "explanation"
    ]
    assert _fixes(text)[0] == "with tf.GradientTape() as tape: loss = tf.reduce_sum(centre)"
    assert _fixes(text)[1] == "gradients = tape.gradient(loss, [centre])"
    # The Keras 3 way, and names Keras 3 still has, get no entry.
    runs_cleanly(kernel, "stepper.learning_rate.assign(0.05)\nkeras.backend.clear_session()")
    runs_cleanly(kernel, f"{recorded}\n{taken}\n{applied}")
