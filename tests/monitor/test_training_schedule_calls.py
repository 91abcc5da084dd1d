"""A learning-rate schedule called with the epoch counter to log "the rate" while its
optimizer reads it at its own step count: the note names the call, the counter and the
optimizer's steps; its fix logs the optimizer's current rate. Look-alikes (the schedule
read at the optimizer's step, one update per pass) stay silent (issue #25)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

_MADE = (
    "decay = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=5, decay_rate=0.5)\n"
    "mover = keras.optimizers.SGD(learning_rate=decay)\n"
    "knob = tf.Variable(3.0)\n"
    "def update():\n"
    "    with tf.GradientTape() as tape:\n"
    "        cost = knob ** 2\n"
    "    mover.apply_gradients([(tape.gradient(cost, knob), knob)])\n"
)

_LOGGED = (
    "rates = []\n"
    "for rnd in range(3):\n"
    "    for _ in range(10):\n"
    "        update()\n"
    "    rates.append(float(decay(rnd)))\n"
)


def _schedule_notes(kernel: KernelSession, cell: str) -> list[str]:
    texts = note_texts(checked_report(run(kernel, cell)))
    return [t for t in texts if "evaluates the schedule" in t]


def test_a_schedule_logged_at_the_epoch_counter_is_named(kernel: KernelSession) -> None:
    run(kernel, _MADE)
    told = _schedule_notes(kernel, _LOGGED)
    assert len(told) == 1
    text = told[0]
    assert "`decay(rnd)` (line 5) evaluates the schedule `decay` at step `rnd`" in text
    assert "(0 to 2 here)" in text
    assert "`mover.iterations`, one per update (30 now)" in text
    fixed = "rates.append(float(mover.learning_rate))"
    assert f"write line 5 as `{fixed}`" in text
    # As written the log holds the schedule's first steps, far above the rate used.
    assert value_of(kernel, "rates[-1] > 10 * float(mover.learning_rate)") is True
    assert _schedule_notes(kernel, _LOGGED.replace("rates.append(float(decay(rnd)))", fixed)) == []
    assert value_of(kernel, "len(rates)") == 3
    assert value_of(kernel, "abs(rates[-1] - float(decay(mover.iterations))) < 1e-9") is True


def test_look_alikes_are_quiet(kernel: KernelSession) -> None:
    run(kernel, _MADE)
    # Read at the optimizer's own step.
    read_at_step = _LOGGED.replace("decay(rnd)", "decay(mover.iterations)")
    assert _schedule_notes(kernel, read_at_step) == []
    # One update per pass: the counter is the step count.
    run(kernel, "mover2 = keras.optimizers.SGD(learning_rate=decay)")
    per_pass = (
        "log2 = []\n"
        "for k in range(4):\n"
        "    with tf.GradientTape() as tape:\n"
        "        cost = knob ** 2\n"
        "    log2.append(float(decay(k)))\n"
        "    mover2.apply_gradients([(tape.gradient(cost, knob), knob)])\n"
    )
    assert _schedule_notes(kernel, per_pass) == []
    # A loop that only tabulates the schedule's shape.
    tabulated = "curve = []\nfor s in range(40):\n    curve.append(float(decay(s)))\n"
    assert _schedule_notes(kernel, tabulated) == []
