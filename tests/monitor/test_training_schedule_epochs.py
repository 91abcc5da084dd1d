"""A decay schedule whose step count is written as a number of epochs, followed by an
optimizer that steps once per batch (issue #25, ``training/schedule_calls.py``,
``epoch_length_notes``): the note names the schedule, the epoch name and the optimizer; its
fix multiplies the count by the batches of one epoch, and the fixed schedule still decays at
the end of training. Look-alikes stay silent: a step count already in steps, a schedule no
optimizer follows, and a per-epoch ``LearningRateScheduler`` that calls the schedule with
the epoch index."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

_DATA = (
    "rows = np.random.default_rng(3).normal(size=(640, 4)).astype('float32')\n"
    "targets = rows @ np.array([1.0, -2.0, 0.5, 3.0], dtype='float32')\n"
    "batches = tf.data.Dataset.from_tensor_slices((rows, targets)).batch(32)\n"
)

_WRITTEN = (
    "num_epochs = 8\n"
    "shrink = keras.optimizers.schedules.ExponentialDecay(0.05, num_epochs, 0.1)\n"
    "stepper = keras.optimizers.SGD(learning_rate=shrink)\n"
)


def _epoch_notes(kernel: KernelSession, cell: str) -> list[str]:
    texts = note_texts(checked_report(run(kernel, cell)))
    return [t for t in texts if "a number of epochs" in t]


def test_a_decay_counted_in_epochs_is_named_and_fixed(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    told = _epoch_notes(kernel, _WRITTEN)
    assert len(told) == 1
    text = told[0]
    assert "`shrink = ExponentialDecay(...)` (line 2)" in text
    assert "its step count is `num_epochs` (8), a number of epochs" in text
    assert "`stepper` follows `shrink`" in text
    assert "`num_epochs * steps_per_epoch` in place of `num_epochs` in line 2" in text
    assert "stopped-learning" in str(checked_report(run(kernel, _WRITTEN)))
    # As written: after the 8 epochs (160 steps) the rate is 0.05 * 0.1**20, nothing.
    assert value_of(kernel, "float(shrink(8 * len(batches)))") < 1e-15
    fixed = (
        "num_epochs = 8\n"
        "steps_per_epoch = len(batches)\n"
        "shrink = keras.optimizers.schedules.ExponentialDecay(\n"
        "    0.05, num_epochs * steps_per_epoch, 0.1)\n"
        "stepper = keras.optimizers.SGD(learning_rate=shrink)\n"
    )
    assert _epoch_notes(kernel, fixed) == []
    # Fixed: the rate at the last step of the last epoch is a tenth of the first.
    assert abs(value_of(kernel, "float(shrink(8 * len(batches)))") - 0.005) < 1e-6


def test_look_alikes_are_quiet(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    # Already in steps.
    in_steps = (
        "total_steps = 8 * len(batches)\n"
        "fade = keras.optimizers.schedules.CosineDecay(0.01, decay_steps=total_steps)\n"
        "mover = keras.optimizers.Adam(learning_rate=fade)\n"
    )
    assert _epoch_notes(kernel, in_steps) == []
    # Tabulated only: no optimizer follows it.
    alone = "n_epochs = 6\ncurve = keras.optimizers.schedules.CosineDecay(0.01, n_epochs)\n"
    assert _epoch_notes(kernel, alone) == []
    # Called once per epoch by a callback: epochs are the right unit.
    per_epoch = (
        "n_epochs = 6\n"
        "per_pass = keras.optimizers.schedules.CosineDecay(0.01, n_epochs)\n"
        "tuned = keras.optimizers.Adam(learning_rate=per_pass)\n"
        "tick = keras.callbacks.LearningRateScheduler(lambda e, lr: float(per_pass(e)))\n"
    )
    assert _epoch_notes(kernel, per_epoch) == []
