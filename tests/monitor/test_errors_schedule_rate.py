"""A learning rate set on an optimizer built on a LearningRateSchedule (issue #25,
``errors/families_schedule_rate.py``): the entry names the callback that sets the rate and
the two ways out, and its fix (the fit without that callback) runs in the kernel. The same
callback on an optimizer with a float rate gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """rows = np.random.rand(64, 3).astype("float32")
aim = rows @ np.array([1.0, -2.0, 0.5], dtype="float32")
decay = keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=10, decay_rate=0.9)
lin = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
lin.compile(optimizer=keras.optimizers.RMSprop(decay), loss="mse")
"""


def test_a_scheduler_callback_on_a_scheduled_optimizer(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "halve = keras.callbacks.LearningRateScheduler(lambda e, rate: rate / 2)\n"
        "log = lin.fit(rows, aim, epochs=2, verbose=0, callbacks=[halve])"
    )
    error = failing(kernel, cell)
    assert error["course"]["section"] == "callback-mode"
    text = error["explanation"]
    assert "`halve` sets the learning rate of `lin`'s optimizer" in text
    fix = fix_of(text)
    assert fix == "log = lin.fit(rows, aim, epochs=2, verbose=0)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "len(log.history['loss'])") == 2


def test_a_plateau_callback_beside_another(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "lin.fit(rows, aim, epochs=2, verbose=0, validation_split=0.25, callbacks=["
        "keras.callbacks.ReduceLROnPlateau(patience=0, min_delta=10.0), "
        "keras.callbacks.TerminateOnNaN()])"
    )
    error = failing(kernel, cell)
    fix = fix_of(error["explanation"])
    assert fix == (
        "lin.fit(rows, aim, epochs=2, verbose=0, validation_split=0.25, "
        "callbacks=[keras.callbacks.TerminateOnNaN()])"
    )
    runs_cleanly(kernel, fix)
    # A float rate: the callback may set it, no entry.
    runs_cleanly(
        kernel,
        'lin.compile(optimizer=keras.optimizers.RMSprop(0.05), loss="mse")\n'
        "lin.fit(rows, aim, epochs=2, verbose=0, callbacks=["
        "keras.callbacks.LearningRateScheduler(lambda e, rate: rate / 2)])",
    )
