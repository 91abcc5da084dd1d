"""A History figure read after fit that is 0.0 at every epoch (issue #25, Keras 3 custom
``train_step``): Keras's own 'loss' tracker, which a train_step updating its own tracker
never touches. The cell that reads it (to print or plot it) is told, in its names, with the
key the step logs its loss under; that read, applied, gets the real figures and no entry.
A model with Keras's own train_step reading the same key stays silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

MODEL = """class Fitter(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.head = keras.layers.Dense(1)
        self.cost_tracker = keras.metrics.Mean(name="cost")

    def call(self, inputs):
        return self.head(inputs)

    def train_step(self, data):
        feats, goal = data
        with tf.GradientTape() as tape:
            cost = tf.reduce_mean(tf.square(self(feats, training=True) - goal))
        grads = tape.gradient(cost, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.cost_tracker.update_state(cost)
        return {m.name: m.result() for m in self.metrics}

feats = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
goal = feats.sum(axis=1, keepdims=True)
fitter = Fitter()
fitter.compile(optimizer="sgd")
run_log = fitter.fit(feats, goal, epochs=3, batch_size=16, verbose=0)
"""


def step_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "custom-train-step"
    ]


def test_zero_loss_read_after_fit(kernel: KernelSession) -> None:
    run(kernel, MODEL)
    cell = 'curve = run_log.history["loss"]\nprint(curve)\n'
    notes = step_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`curve = run_log.history['loss']` (line 1 of this cell) reads 0.0 at all 3 epochs"
    ), text
    assert "`Fitter.train_step` logs its loss as 'cost'" in text
    fix = "curve = run_log.history['cost']"
    assert f"read `{fix}` instead" in text
    assert value_of(kernel, "curve") == [0.0, 0.0, 0.0]
    report = checked_report(run(kernel, fix + "\nprint(curve)\n"))
    assert step_notes(report) == []
    curve = value_of(kernel, "curve")
    assert len(curve) == 3 and all(v > 0.0 for v in curve)


def test_default_train_step_stays_silent(kernel: KernelSession) -> None:
    setup = """plain = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
plain.compile(optimizer="sgd", loss="mse")
feats = np.ones((32, 3), "float32")
plain_log = plain.fit(feats, feats.sum(axis=1), epochs=2, verbose=0)
"""
    run(kernel, setup)
    report = checked_report(run(kernel, 'curve = plain_log.history["loss"]\n'))
    assert step_notes(report) == []
