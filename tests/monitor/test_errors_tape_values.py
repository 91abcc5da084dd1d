"""Values a tape or an optimizer cannot work with (issue #25: raising cells judges saw
explained only by the generic entry). A loss that left TensorFlow inside the tape
(``.numpy()``, a NumPy function, ``float(...)``) given to ``tape.gradient``; tensors
copied from variables given to ``apply_gradients`` as the variables to update. Each entry
names the call, the value and where it was made; each printed fix runs in the kernel and
gives the right result; the correct cell beside it gets no entry
(``errors/families_tape_values.py``)."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

SURVEY = """gen = np.random.default_rng(2)
feats = gen.normal(size=(40, 3)).astype("float32")
heights = (feats @ np.array([[1.0], [-2.0], [0.5]], dtype="float32")).astype("float32")
slope = tf.Variable(tf.zeros((3, 1)))
"""

NUMPY_LOSS = """with tf.GradientTape() as tape:
    guess = (feats @ slope).numpy()
    cost = np.sum(np.abs(guess - heights)) / len(feats)
grad_slope = tape.gradient(cost, slope)
slope.assign_sub(0.1 * grad_slope)"""


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_loss_computed_in_numpy_inside_the_tape(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SURVEY)
    error = failing(kernel, NUMPY_LOSS)
    assert error["course"]["section"] == "gradient-tape"
    text = error["explanation"]
    assert text.startswith("Line 4 of this cell: `tape.gradient(cost, slope)`"), text
    assert "`cost`, the target given to `tape.gradient`, is a NumPy float32, not a tensor" in text
    assert "`.numpy()` in `guess = (feats @ slope).numpy()`" in text, text
    assert "`np.sum`, `np.abs` in `cost = np.sum(np.abs(guess - heights)) / len(feats)`" in text
    fixes = spans(text.split("Fix: ", 1)[1])
    assert fixes == [
        "guess = (feats @ slope)",
        "cost = tf.reduce_sum(tf.abs(guess - heights)) / len(feats)",
    ], text
    fixed = NUMPY_LOSS.replace("guess = (feats @ slope).numpy()", fixes[0]).replace(
        "cost = np.sum(np.abs(guess - heights)) / len(feats)", fixes[1]
    )
    runs_cleanly(kernel, SURVEY + fixed)
    # The gradient exists and the step lowered the cost.
    after = "float(tf.reduce_sum(tf.abs(feats @ slope - heights))) / len(feats)"
    assert value_of(kernel, f"{after} < float(cost)") is True
    # The correct look-alike: NumPy used after the tape, for printing only.
    runs_cleanly(kernel, fixed + "\nprint(np.round(guess.numpy()[:2], 2), float(cost))")


def test_a_python_float_loss_inside_a_step_function(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SURVEY)
    define = """def descend(rate):
    with tf.GradientTape() as tape:
        spread = float(tf.reduce_mean(tf.square(feats @ slope - heights)))
    pull = tape.gradient(spread, slope)
    slope.assign_sub(rate * pull)
    return spread
"""
    runs_cleanly(kernel, define)
    error = failing(kernel, "for _ in range(50):\n    last = descend(0.1)")
    text = error["explanation"]
    assert "`spread`, the target given to `tape.gradient`, is a Python number" in text, text
    assert "`float(...)` in `spread = float(tf.reduce_mean(" in text, text
    fix = fix_of(text)
    assert fix == "spread = tf.reduce_mean(tf.square(feats @ slope - heights))", text
    runs_cleanly(
        kernel,
        define.replace("spread = float(tf.reduce_mean(tf.square(feats @ slope - heights)))", fix),
    )
    runs_cleanly(kernel, "for _ in range(50):\n    last = descend(0.1)")
    assert value_of(kernel, "float(last) < 0.5") is True


ANCHORS = """gen = np.random.default_rng(4)
pts = tf.constant(gen.normal(size=(16, 2)).astype("float32"))
anchors = [tf.Variable(tf.ones((2, 2))), tf.Variable(tf.zeros((2,)))]
mover = keras.optimizers.SGD(learning_rate=0.05)
"""

COPIED = """trial = [tf.convert_to_tensor(a) for a in anchors]
with tf.GradientTape() as tape:
    tape.watch(trial)
    energy = tf.reduce_mean(tf.square(pts @ trial[0] + trial[1]))
deltas = tape.gradient(energy, trial)
mover.apply_gradients(zip(deltas, trial))
after = tf.reduce_mean(tf.square(pts @ trial[0] + trial[1]))"""


def test_tensor_copies_given_to_an_optimizer(kernel: KernelSession) -> None:
    runs_cleanly(kernel, ANCHORS)
    error = failing(kernel, COPIED)
    assert error["course"]["section"] == "training-loop"
    text = error["explanation"]
    assert text.startswith("Line 6 of this cell: `mover.apply_gradients(zip(deltas, trial))`")
    assert "`mover.apply_gradients` updates each variable in place" in text, text
    assert "`trial` holds plain tensors (its 2 items are not variables)" in text, text
    assert "`trial = [tf.convert_to_tensor(a) for a in anchors]` made them" in text, text
    step = "trial = [w - 0.05 * g for w, g in zip(trial, deltas)]"
    assert step in spans(text), text
    fix = fix_of(text)
    assert fix == "trial = [tf.Variable(a) for a in anchors]", text
    runs_cleanly(kernel, COPIED.replace("trial = [tf.convert_to_tensor(a) for a in anchors]", fix))
    assert value_of(kernel, "bool(after < energy)") is True
    # The anchors the copies came from are left as they were.
    assert value_of(kernel, "float(tf.reduce_sum(anchors[0]))") == 4.0
    # The step written as new tensors (differentiable by an outer tape) runs too.
    runs_cleanly(kernel, COPIED.replace("mover.apply_gradients(zip(deltas, trial))", step))
    assert value_of(kernel, "bool(after < energy)") is True
    # The correct look-alike: the optimizer given the variables themselves.
    runs_cleanly(kernel, ANCHORS)
    runs_cleanly(
        kernel,
        COPIED.replace("trial = [tf.convert_to_tensor(a) for a in anchors]", "trial = anchors"),
    )


def test_an_adam_given_one_tensor_gets_no_hand_written_step(kernel: KernelSession) -> None:
    runs_cleanly(kernel, ANCHORS + "tuner = keras.optimizers.Adam(0.01)\n")
    cell = """offset = tf.zeros((2,))
with tf.GradientTape() as tape:
    tape.watch(offset)
    energy = tf.reduce_mean(tf.square(pts + offset))
grads = [tape.gradient(energy, offset)]
tuner.apply_gradients(zip(grads, [offset]))"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`[offset]` holds plain tensors (its item is not a variable)" in text, text
    assert "make them with `tf.Variable`" in text, text
    assert "for w, g in zip" not in text
