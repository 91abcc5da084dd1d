"""A float16 variable updated by hand with steps smaller than float16's spacing near its
values (issue #25, silent bugs, ``symptoms/float16_updates.py``): the updates round away
and the variable does not learn. Told with the sizes involved; the printed fix (float32
master weights, a float16 cast where the computation reads them, the name made to say
32) runs, trains, and is silent. Look-alikes stay silent: the same loop on a float32
variable, float16 steps large enough to move the variable, and a float16 variable
updated inside a ``tf.function`` (symbolic values)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf

rng = np.random.default_rng(3)
sensors = rng.normal(size=(400, 6)).astype("float32")
calib_true = rng.normal(loc=-3.0, scale=0.3, size=(6,)).astype("float32")
readout = sensors @ calib_true
calib_guess = calib_true + 0.03
"""
KERNEL = KernelSetup(after_load=SETUP)

# Near 3, float16 numbers are about 0.002 apart; each step here is below 0.001.
ROUNDED = """sensors16 = tf.cast(sensors, tf.float16)
calib_f16 = tf.Variable(tf.constant(calib_guess, dtype=tf.float16))
step_size = 0.01
for it in range(200):
    with tf.GradientTape() as tape:
        err = tf.linalg.matvec(sensors16, calib_f16) - tf.cast(readout, tf.float16)
        mse = tf.reduce_mean(err * err)
    grad = tape.gradient(mse, calib_f16)
    calib_f16.assign_sub(step_size * grad)
"""


def update_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "is a float16 variable" in n["text"]]


def fixed_lines(text: str) -> dict[int, str]:
    fix = text.split("Fix: ", 1)[1]
    return {int(n): line for n, line in re.findall(r"line (\d+) as `([^`]+)`", fix)}


def test_float16_updates_that_round_away_are_told_and_the_fix_trains(
    kernel: KernelSession,
) -> None:
    report = checked_report(run(kernel, ROUNDED))
    [text] = update_notes(report)
    assert text.startswith("`calib_f16.assign_sub(step_size * grad)` (line 9 of this cell)")
    assert "`calib_f16` is a float16 variable" in text
    assert "float16 numbers are 0.002 apart" in text
    # The loop's "nothing trained" symptom named no cause: this note, which does, replaces it.
    assert not any(n["text"].startswith("Nothing trained") for n in report["notes"])
    assert report["notes"][0]["course"]["section"] == "mixed-precision" or any(
        n["course"] and n["course"]["section"] == "mixed-precision" for n in report["notes"]
    )
    assert value_of(kernel, "bool(np.all(calib_f16.numpy() == np.float16(calib_guess)))")
    lines = fixed_lines(text)
    assert lines == {
        2: "calib_f32 = tf.Variable(tf.constant(calib_guess, dtype=tf.float32))",
        6: "err = tf.linalg.matvec(sensors16, tf.cast(calib_f32, tf.float16)) - "
        "tf.cast(readout, tf.float16)",
        8: "grad = tape.gradient(mse, calib_f32)",
        9: "calib_f32.assign_sub(step_size * grad)",
    }, text
    cell = ROUNDED.splitlines()
    for number, line in lines.items():
        indent = cell[number - 1][: len(cell[number - 1]) - len(cell[number - 1].lstrip())]
        cell[number - 1] = indent + line
    fixed = checked_report(run(kernel, "\n".join(cell) + "\n"))
    assert update_notes(fixed) == []
    assert not any("float32" in n["text"] and "whatever" in n["text"] for n in fixed["notes"])
    start = value_of(kernel, "float(np.abs(calib_guess - calib_true).max())")
    end = value_of(kernel, "float(np.abs(calib_f32.numpy() - calib_true).max())")
    assert end < start / 5, (start, end)


def test_float32_weights_and_large_float16_steps_stay_silent(kernel: KernelSession) -> None:
    full = (
        ROUNDED.replace("calib_f16", "calib_w")
        .replace(
            "tf.constant(calib_guess, dtype=tf.float16)",
            "tf.constant(calib_guess, dtype=tf.float32)",
        )
        .replace(
            "tf.linalg.matvec(sensors16, calib_w) - tf.cast(readout, tf.float16)",
            "tf.linalg.matvec(sensors, calib_w) - readout",
        )
    )
    assert update_notes(checked_report(run(kernel, full))) == []
    # Far from the answer with a large step: every update is many float16 spacings.
    large = (
        ROUNDED.replace("calib_guess", "calib_guess + 1.0")
        .replace("step_size = 0.01", "step_size = 0.05")
        .replace("range(200)", "range(25)")
    )
    assert update_notes(checked_report(run(kernel, large))) == []
    moved = value_of(kernel, "float(np.abs(calib_f16.numpy() - calib_true).max())")
    assert moved < 0.5


def test_a_float16_update_inside_a_tf_function_is_left_alone(kernel: KernelSession) -> None:
    cell = """offset16 = tf.Variable(tf.fill([4], tf.constant(3.0, tf.float16)))

@tf.function
def nudge(amount):
    offset16.assign_sub(amount)
    return offset16.read_value()

for _ in range(10):
    nudge(tf.fill([4], tf.constant(1e-4, tf.float16)))
"""
    report = checked_report(run(kernel, cell))
    assert update_notes(report) == []
    assert value_of(kernel, "offset16.numpy().tolist()") == [3.0, 3.0, 3.0, 3.0]
