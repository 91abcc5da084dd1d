"""One Keras 3 optimizer object given to several models (issue #25).

A Keras 3 optimizer is built for the variables of the first model it trains and raises
"Unknown variable" for any other model's. The entry names the optimizer and the models in
the learner's names, and rewrites the compile call with a new optimizer
(``errors/families_keras_lifecycle.py``, ``explain_shared_optimizer``); the fix runs. The
other cause of the same message (a model making new variables at each call) keeps its
own entry, and a new optimizer per model runs without one."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """readings = np.random.rand(30, 4).astype("float32")
levels = readings.mean(axis=1, keepdims=True)

def small_net():
    inputs = keras.Input(shape=(4,))
    return keras.Model(inputs, keras.layers.Dense(1)(keras.layers.Dense(3)(inputs)))
"""


def test_a_second_named_model_compiled_with_the_first_ones_optimizer(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        DATA
        + """tuner = keras.optimizers.Adam(0.01)
teacher = small_net()
teacher.compile(optimizer=tuner, loss="mse")
teacher.fit(readings, levels, epochs=1, verbose=0)
""",
    )
    error = failing(
        kernel,
        'student = small_net()\nstudent.compile(optimizer=tuner, loss="mae")\n'
        "student.fit(readings, levels, epochs=1, verbose=0)",
    )
    text = error["explanation"]
    assert "`tuner` (one Adam optimizer) is shared by several models" in text, text
    assert "here `teacher`, and refuses any other model's; `student` is another model" in text
    assert "Usually the model creates its variables again" not in text
    fix = fix_of(text)
    assert fix == 'student.compile(optimizer=keras.optimizers.Adam(0.01), loss="mae")'
    runs_cleanly(kernel, f"{fix}\nstudent.fit(readings, levels, epochs=1, verbose=0)")
    # The same in a custom loop: the optimizer steps the second model's variables.
    cell = """with tf.GradientTape() as tape:
    gap = tf.reduce_mean((student(readings) - levels) ** 2)
tuner.apply_gradients(zip(tape.gradient(gap, student.trainable_variables),
                          student.trainable_variables))"""
    text = failing(kernel, cell)["explanation"]
    assert "`tuner` (one Adam optimizer) is shared by several models" in text, text
    assert "here `teacher`" in text


def test_models_made_in_a_loop_share_one_optimizer(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = """stepper = keras.optimizers.RMSprop(learning_rate=0.02)
ensemble = []
for member_seed in range(3):
    member = small_net()
    member.compile(optimizer=stepper, loss="mse")
    member.fit(readings, levels, epochs=1, verbose=0)
    ensemble.append(member)"""
    text = failing(kernel, cell)["explanation"]
    assert "`stepper` (one RMSprop optimizer) is shared by several models" in text, text
    assert "here a model made earlier that no name holds now, and refuses" in text
    assert 'given the same `stepper` by `member.compile(optimizer=stepper, loss="mse")`' in text
    fix = fix_of(text)
    assert (
        fix == 'member.compile(optimizer=keras.optimizers.RMSprop(learning_rate=0.02), loss="mse")'
    )
    runs_cleanly(kernel, cell.replace('member.compile(optimizer=stepper, loss="mse")', fix))
    assert value_of(kernel, "len(ensemble)") == 3


def test_the_other_cause_keeps_its_entry(kernel: KernelSession) -> None:
    """A module making a new variable at each call: one model, the optimizer shared by
    nobody; the entry tells that cause, not sharing."""
    cell = """class Slope(tf.Module):
    def __call__(self, x):
        self.w = tf.Variable(1.0)
        return self.w * x

slope = Slope()
walker = keras.optimizers.SGD(learning_rate=0.1)
for turn in range(2):
    with tf.GradientTape() as tape:
        miss = (slope(3.0) - 1.0) ** 2
    walker.apply_gradients(zip(tape.gradient(miss, slope.trainable_variables),
                               slope.trainable_variables))"""
    text = failing(kernel, cell)["explanation"]
    assert "shared by several models" not in text
    assert "creates its variables again" in text
