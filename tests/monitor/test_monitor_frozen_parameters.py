"""A parameter made with ``trainable=False`` in a ``tf.Module`` (issue #25, variables that
never train): told in the cell that defines the class, with the statement and the fix
(the same statement, trainable). The fix applied lets a training loop learn the offset;
non-trainable state a method updates itself (a counter, a running mean) stays silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(before_load="import numpy as np\nimport tensorflow as tf\n", after_load="")

CELL = """class Line(tf.Module):
    def __init__(self):
        super().__init__()
        self.slope = tf.Variable([[0.0]])
        self.offset = tf.Variable([0.0], trainable=False)

    def __call__(self, x):
        return x @ self.slope + self.offset

line = Line()
"""

TRAIN = """xs = np.linspace(-1, 1, 64).astype("float32").reshape(-1, 1)
ys = 2.0 * xs + 3.0
opt = tf.keras.optimizers.SGD(0.2)
for _ in range(300):
    with tf.GradientTape() as tape:
        cost = tf.reduce_mean(tf.square(line(xs) - ys))
    grads = tape.gradient(cost, line.trainable_variables)
    opt.apply_gradients(zip(grads, line.trainable_variables))
learned = float(line.offset[0])
"""


def trainable_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "trainable-weights"
    ]


def test_frozen_bias_in_a_module(kernel: KernelSession) -> None:
    notes = trainable_notes(checked_report(run(kernel, CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`Line` makes `self.offset` with `trainable=False` (line 5: "
        "`self.offset = tf.Variable([0.0], trainable=False)`) and uses it in `__call__`"
    ), text
    fix = "self.offset = tf.Variable([0.0])"
    assert f"make it trainable: `{fix}`." in text
    run(kernel, TRAIN)
    assert value_of(kernel, "learned") == 0.0
    fixed = CELL.replace("self.offset = tf.Variable([0.0], trainable=False)", fix)
    assert trainable_notes(checked_report(run(kernel, fixed))) == []
    run(kernel, TRAIN)
    assert abs(value_of(kernel, "learned") - 3.0) < 0.05


def test_state_the_class_updates_stays_silent(kernel: KernelSession) -> None:
    cell = """class Counted(tf.Module):
    def __init__(self):
        super().__init__()
        self.scale = tf.Variable([[1.0]])
        self.seen = tf.Variable(0.0, trainable=False)
        self.mean = tf.Variable(0.0, trainable=False)

    def __call__(self, x):
        self.seen.assign_add(1.0)
        self.mean.assign(0.9 * self.mean + 0.1 * tf.reduce_mean(x))
        return (x - self.mean) @ self.scale * self.seen

counted = Counted()
"""
    assert trainable_notes(checked_report(run(kernel, cell))) == []
