"""A complex value cast to a real dtype (issue #25, silent bugs): the cast keeps the real
part, not the magnitude. An FFT cast in a function and a NumPy spectrum turned real with
``astype`` are told with the magnitude in the cast's place; the fixes run and give
non-negative magnitudes that peak at the signal's frequency. The magnitude taken first,
the real part asked for by name and a real tensor cast stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(before_load="import numpy as np\nimport tensorflow as tf\n", after_load="")

DATA = """t_axis = np.arange(64, dtype="float32")
tones = np.stack([np.sin(2 * np.pi * 5 * t_axis / 64 + ph) for ph in (0.0, 1.3, 2.1)])
"""


def complex_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "keeps only the real part" in note["text"]]


def magnitude_fix(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("Take the magnitude: ", 1)[1])[0]


def test_an_fft_cast_in_a_function(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """def amplitudes(batch):
    spectrum = tf.signal.rfft(tf.constant(batch))
    return tf.cast(spectrum, tf.float32)

amp = amplitudes(tones)
"""
    notes = complex_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`return tf.cast(spectrum, tf.float32)` (line 3 in `amplitudes`) casts a complex "
        "value to float32: `spectrum` is complex (made by `tf.signal.rfft`)"
    )
    assert "`tf.math.real(spectrum)`" in notes[0]
    fix = magnitude_fix(notes[0])
    assert fix == "return tf.cast(tf.abs(spectrum), tf.float32)"
    fixed = cell.replace("return tf.cast(spectrum, tf.float32)", fix)
    assert complex_notes(checked_report(run(kernel, fixed))) == []
    check = """a = amp.numpy()
assert (a >= 0).all()
assert (a.argmax(axis=1) == 5).all()
assert np.allclose(a[:, 5], 32.0, atol=1e-2)
"""
    checked_report(run(kernel, check))


def test_a_numpy_spectrum_made_real_with_astype(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """bins = np.fft.fft(tones, axis=1)
energy = bins.astype(np.float64) ** 2
"""
    notes = complex_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`energy = bins.astype(np.float64) ** 2` (line 2) casts a complex value to float64: "
        "`bins` is a (3, 64) complex64 NumPy array (made by `np.fft.fft`)"
    )
    fix = magnitude_fix(notes[0])
    assert fix == "energy = np.abs(bins).astype(np.float64) ** 2"
    fixed = cell.replace("energy = bins.astype(np.float64) ** 2", fix)
    assert complex_notes(checked_report(run(kernel, fixed))) == []
    check = """assert (energy >= 0).all()
assert np.allclose(energy[:, 5], 32.0 ** 2, rtol=1e-3)
"""
    checked_report(run(kernel, check))


def test_a_complex_value_held_from_an_earlier_cell(kernel: KernelSession) -> None:
    run(kernel, DATA + "frames = tf.signal.stft(tf.constant(tones), 16, 8)\n")
    cell = "feat = tf.cast(frames, 'float32')\n"
    notes = complex_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "`frames` is a (3, 7, 9) complex64 tensor" in notes[0]
    assert magnitude_fix(notes[0]) == "feat = tf.abs(frames)"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """spec = tf.signal.stft(tf.constant(tones), 16, 8)
mag = tf.abs(spec)
real_part = tf.math.real(spec)
mag64 = tf.cast(tf.abs(spec), tf.float64)
halves = tf.cast(tf.constant(tones), tf.float16)
levels = np.abs(np.fft.rfft(tones)).astype(np.float32)
"""
    assert complex_notes(checked_report(run(kernel, cell))) == []
