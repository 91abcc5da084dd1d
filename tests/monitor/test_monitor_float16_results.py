"""float16 values made inf or NaN by the learner's own statements from finite inputs
(issue #25, silent bugs, ``symptoms/float16_results.py``): a guard constant too small for
float16 that rounds to 0 (named, or written in the statement), a count above 65504 cast to
float16, a float16 sum past 65504. Each printed fix runs and gives finite values equal to
the float64 computation. Look-alikes stay silent: the same statements in float32, float16
values small enough, an input that already held inf, a tiny float16 constant only
printed."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf

rng = np.random.default_rng(11)
temps = rng.uniform(10.0, 30.0, size=(50, 4)).astype("float32")
temps[:, 2] = 21.5  # a sensor stuck at one value
frames = rng.uniform(0.0, 1.0, size=(4, 128, 160)).astype("float32")
signal = rng.normal(30.0, 2.0, size=(300,)).astype("float32")
"""
KERNEL = KernelSetup(after_load=SETUP)


def float16_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "from finite values" in n["text"]]


def fix_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Fix:", 1)[1])


SCALING = """t16 = tf.cast(temps, tf.float16)
lo = tf.reduce_min(t16, axis=0)
hi = tf.reduce_max(t16, axis=0)
floor = tf.constant(5e-9, dtype=tf.float16)
scaled = (t16 - lo) / (hi - lo + floor)
"""


def test_a_guard_constant_that_rounds_to_zero(kernel: KernelSession) -> None:
    [text] = float16_notes(checked_report(run(kernel, SCALING)))
    assert text.startswith(
        "`scaled = (t16 - lo) / (hi - lo + floor)` (line 5 of this cell) holds NaN, from "
        "finite values. `floor` is 0: `floor = tf.constant(5e-9, dtype=tf.float16)` (line 4) "
        "asks float16 for 5e-9, below float16's smallest positive number"
    ), text
    assert "so `hi - lo + floor` is 0 wherever the rest of it is 0" in text
    [fix] = fix_spans(text)
    assert fix == "floor = tf.constant(1e-3, dtype=tf.float16)"
    fixed = SCALING.replace("floor = tf.constant(5e-9, dtype=tf.float16)", fix)
    assert float16_notes(checked_report(run(kernel, fixed))) == []
    run(
        kernel,
        "expected = (temps - temps.min(0)) / np.where(np.ptp(temps, 0) > 0, np.ptp(temps, 0), 1)",
    )
    assert value_of(kernel, "bool(np.all(np.isfinite(scaled.numpy())))") is True
    assert value_of(kernel, "float(np.abs(scaled.numpy() - expected).max())") < 0.01


def test_a_tiny_literal_in_the_statement(kernel: KernelSession) -> None:
    cell = "t16 = tf.cast(temps, tf.float16)\nlow = tf.reduce_min(t16, axis=0)\n"
    cell += "width = tf.reduce_max(t16, axis=0) - low\nratio = (t16 - low) / (width + 1e-9)\n"
    [text] = float16_notes(checked_report(run(kernel, cell)))
    assert "the literal 1e-9 becomes 0 in float16 arithmetic" in text, text
    [fix] = fix_spans(text)
    assert fix == "ratio = (t16 - low) / (width + 1e-3)"
    assert float16_notes(checked_report(run(kernel, cell.replace("1e-9", "1e-3")))) == []
    assert value_of(kernel, "bool(np.all(np.isfinite(ratio.numpy())))") is True


COUNTING = """frames16 = tf.cast(frames, tf.float16)
count = tf.cast(tf.size(frames16), tf.float16)
brightness = tf.reduce_sum(frames16) / count
"""


def test_a_count_cast_to_float16(kernel: KernelSession) -> None:
    [text] = float16_notes(checked_report(run(kernel, COUNTING)))
    assert text.startswith(
        "`count = tf.cast(tf.size(frames16), tf.float16)` (line 2 of this cell) holds inf, "
        "from finite values: it casts to float16 a count, `tf.size(frames16)` = 81920 "
        "entries of `frames16`, and float16's largest number is 65504"
    ), text
    assert "computed from it, `brightness` (line 3, 0) is broken too" in text
    spans = fix_spans(text)
    assert spans[:3] == [
        "frames32 = tf.cast(frames16, tf.float32)",
        "count = tf.cast(tf.size(frames32), tf.float32)",
        "brightness = tf.reduce_sum(frames32) / count",
    ], spans
    fixed = COUNTING.replace(
        "count = tf.cast(tf.size(frames16), tf.float16)\n"
        "brightness = tf.reduce_sum(frames16) / count\n",
        "\n".join(spans[:3]) + "\n",
    )
    assert float16_notes(checked_report(run(kernel, fixed))) == []
    # The mean of the float16-rounded frames, computed in float32: right to 1e-3.
    assert (
        abs(value_of(kernel, "float(brightness)") - value_of(kernel, "float(frames.mean())")) < 1e-3
    )


def test_a_float16_sum_past_its_range(kernel: KernelSession) -> None:
    cell = "wave16 = tf.cast(signal, tf.float16)\nenergy = tf.reduce_sum(tf.square(wave16))\n"
    [text] = float16_notes(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`energy = tf.reduce_sum(tf.square(wave16))` (line 2 of this cell) holds inf, from "
        "finite values: `tf.reduce_sum(tf.square(wave16))` adds up float16 values, and the "
        "total passes 65504"
    ), text
    spans = fix_spans(text)
    assert spans[:2] == [
        "wave32 = tf.cast(wave16, tf.float32)",
        "energy = tf.reduce_sum(tf.square(wave32))",
    ], spans
    run(kernel, "wave16 = tf.cast(signal, tf.float16)\n" + "\n".join(spans[:2]))
    expected = value_of(kernel, "float(np.sum(signal.astype('float16').astype('float64') ** 2))")
    assert abs(value_of(kernel, "float(energy)") / expected - 1) < 1e-5


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    in_float32 = SCALING.replace("tf.float16", "tf.float32").replace("t16", "t32")
    assert float16_notes(checked_report(run(kernel, in_float32))) == []
    small = "few16 = tf.cast(signal[:20] / 30.0, tf.float16)\n"
    small += (
        "n_few = tf.cast(tf.size(few16), tf.float16)\npower = tf.reduce_sum(few16 ** 2) / n_few\n"
    )
    assert float16_notes(checked_report(run(kernel, small))) == []
    already = "broken = tf.constant([1.0, np.inf], tf.float16)\ndoubled = broken * 2\n"
    assert float16_notes(checked_report(run(kernel, already))) == []
    shown = 'print("1e-8 in float16:", float(tf.constant(1e-8, tf.float16)))\n'
    assert checked_report(run(kernel, shown))["notes"] == []
