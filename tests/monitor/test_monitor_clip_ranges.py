"""A clip whose upper bound is far outside the data's range (issue #25, silent bugs):
``clip(v, lo, 255)`` on data living in [0, 1] (or [-1, 1]) never binds, so values pushed past
the valid range stay there. Told from the cell's code and the arrays the clipped value comes
from; the printed fix (the data's own range) is run in the kernel and the values stay within
it, with no note. Look-alikes stay silent: a clip to [0, 1] of unit data with noise added,
raw pixels clipped to [0, 255]."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "tf-data"

WAVE = """rng = np.random.default_rng(3)
waveform = np.sin(np.linspace(0.0, 12.0, 400)).astype("float32")
jittered = waveform + 0.3 * rng.standard_normal(400).astype("float32")
jittered = np.clip(jittered, -128, 127)
peak = float(np.max(np.abs(jittered)))
"""
WAVE_CALL = "np.clip(jittered, -128, 127)"

SCORES = """import keras
scores = tf.random.uniform((64, 5), seed=1)
brightened = keras.ops.clip(scores + 0.4, 0.0, 100.0)
top = float(keras.ops.max(brightened))
"""
SCORES_CALL = "keras.ops.clip(scores + 0.4, 0.0, 100.0)"


def range_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "never binds" in n["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_a_clip_of_signed_unit_data_to_byte_bounds(kernel: KernelSession) -> None:
    notes = range_notes(checked_report(run(kernel, WAVE)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(f"`{WAVE_CALL}` (line 4 of this cell) clips `jittered` to")
    assert "`waveform` in [-1" in notes[0]
    assert shown(kernel, "peak > 1.0") == "True"
    fix = codes(notes[0])[-1]
    assert fix == "np.clip(jittered, -1.0, 1.0)"
    assert range_notes(checked_report(run(kernel, WAVE.replace(WAVE_CALL, fix)))) == []
    assert shown(kernel, "peak <= 1.0") == "True"


def test_a_keras_clip_of_an_expression(kernel: KernelSession) -> None:
    notes = range_notes(checked_report(run(kernel, SCORES)))
    assert len(notes) == 1, notes
    assert "`scores` in [0" in notes[0]
    assert shown(kernel, "top > 1.0") == "True"
    fix = codes(notes[0])[-1]
    assert fix == "keras.ops.clip(scores + 0.4, 0.0, 1.0)"
    assert range_notes(checked_report(run(kernel, SCORES.replace(SCORES_CALL, fix)))) == []
    assert shown(kernel, "top <= 1.0") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    report = checked_report(
        run(
            kernel,
            """unit = np.random.default_rng(0).random((30, 8)).astype("float32")
noisy_unit = np.clip(unit + 0.1 * np.random.default_rng(1).standard_normal((30, 8)), 0.0, 1.0)
raw_pixels = np.random.default_rng(2).integers(0, 256, (30, 8)).astype("float32")
shifted_pixels = np.clip(raw_pixels + 20.0, 0, 255)
as_tensor = tf.clip_by_value(tf.constant(raw_pixels) - 10.0, 0.0, 255.0)
""",
        )
    )
    assert range_notes(report) == []
