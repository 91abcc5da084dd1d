"""An argument whose dtype the op fixes (issue #25, ``errors/families_dtype_contract.py``):
a ``tf.where`` condition given as numbers (a 0/1 float or int mask) is named as the
condition that must be bool, with the comparison that makes it one; integer audio samples
given to ``tf.signal.stft`` are named as a signal that must be float, cast and scaled by
the integer dtype's range. Each printed fix runs in the kernel; the correct calls get no
entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """readings = tf.constant([[0.5, -2.0, 3.0], [1.5, 4.0, -1.0]])
present = tf.constant([[1, 0, 1], [0, 1, 1]])
weights_f = tf.cast(readings > 0, tf.float32)
tones = (np.sin(np.linspace(0, 60, 2048)) * 30000).astype(np.int16)
"""


def test_an_int_mask_as_a_where_condition_is_compared(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "kept = tf.where(present, readings, tf.zeros_like(readings))")
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert (
        "The condition `present` of `tf.where` (its `condition`) must be bool, one True or "
        "False per element" in text
    )
    assert "`present` is a (2, 3) int32 tensor" in text
    assert "It holds only 0s and 1s" in text
    assert "the dtype of input" not in text and "same dtype" not in text
    fix = fix_of(text)
    assert fix == "kept = tf.where(present > 0, readings, tf.zeros_like(readings))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "kept.numpy().tolist()") == [[0.5, 0.0, 3.0], [0.0, 4.0, -1.0]]


def test_a_float_mask_condition_inside_a_function(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = """@tf.function
def clip_masked(vals, keep):
    return tf.where(keep, vals, -1.0)

clipped = clip_masked(readings, weights_f)
"""
    text = failing(kernel, cell)["explanation"]
    assert "The condition `keep` of `tf.where` (its `condition`) must be bool" in text
    # Traced, its values are unknown: the comparison is offered, not printed as the fix.
    assert "if nonzero means take, that is `keep > 0`" in text and "Fix:" not in text
    runs_cleanly(kernel, cell.replace("tf.where(keep,", "tf.where(keep > 0,"))
    assert value_of(kernel, "clipped.numpy().tolist()") == [[0.5, -1.0, 3.0], [1.5, 4.0, -1.0]]


def test_a_score_condition_gets_no_guessed_threshold(kernel: KernelSession) -> None:
    # Not 0/1: which elements to take is the learner's choice, so no fix line is printed.
    runs_cleanly(kernel, DATA)
    text = failing(kernel, "picked = tf.where(readings, readings, 0.0)")["explanation"]
    assert "The condition `readings` of `tf.where` (its `condition`) must be bool" in text
    assert "if nonzero means take, that is `readings > 0`" in text
    assert "Fix:" not in text


def test_int16_samples_given_to_stft_are_scaled_floats(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "spectrum = tf.signal.stft(tones, frame_length=512, frame_step=256)")
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert "`tf.signal.stft` computes a Fourier transform of windowed frames" in text
    assert "the signal must be a float tensor, and `tones` is a (2048,) int16 NumPy array" in text
    fix = fix_of(text)
    assert fix == (
        "spectrum = tf.signal.stft(tf.cast(tones, tf.float32) / 32768.0, frame_length=512, "
        "frame_step=256)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "spectrum.shape.as_list()") == [7, 257]
    assert value_of(kernel, "bool(tf.reduce_max(tf.abs(spectrum)) < 512)")


def test_correct_look_alikes_get_no_entry(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    runs_cleanly(kernel, "kept = tf.where(present > 0, readings, 0.0)")
    runs_cleanly(kernel, "spots = tf.where(weights_f)")  # one argument: positions of nonzeros
    runs_cleanly(kernel, "spectrum = tf.signal.stft(tones.astype(np.float32), 512, 256)")
