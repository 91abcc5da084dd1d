"""A spectrogram's bins met by a matrix made for another number (issue #25,
``errors/families_spectrum_bins.py``): an FFT of length N gives N // 2 + 1 bins, and a mel
matrix built for N // 2 (or N) cannot multiply it. The entry names the length and its
bins and writes the corrected ``num_spectrogram_bins`` in the learner's expression; the
printed fix runs. A matmul of other sizes keeps the plain matmul entry, and the right
number of bins gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SPECTRA = """RATE = 8000
WINDOW = 512
chirps = np.sin(np.linspace(0, 900, 3 * 6000)).reshape(3, 6000).astype(np.float32)
power = tf.abs(tf.signal.stft(chirps, frame_length=400, frame_step=160, fft_length=WINDOW))
"""


def test_without_spectral_code_the_sizes_are_only_sizes(kernel: KernelSession) -> None:
    # First in the module: no cell has computed a spectrum yet, so 33 against 32 is a
    # plain matmul mismatch.
    text = failing(kernel, "out = tf.ones((4, 33)) @ tf.ones((32, 5))")["explanation"]
    assert "FFT" not in text and "33 vs 32" in text


def test_a_mel_matrix_for_half_the_length_gets_the_plus_one(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SPECTRA)
    cell = """bank = tf.signal.linear_to_mel_weight_matrix(
    num_mel_bins=24, num_spectrogram_bins=WINDOW // 2, sample_rate=RATE)
mels = power @ bank
"""
    text = failing(kernel, cell)["explanation"]
    assert (
        "A real FFT of length 512 gives 512 // 2 + 1 = 257 frequency bins (from 0 to the "
        "Nyquist frequency, both included): `power`'s 257 is that axis, and the other "
        "operand was made for 256 (`num_spectrogram_bins=WINDOW // 2` in this cell)"
    ) in text
    fix = fix_of(text)
    assert fix == (
        "bank = tf.signal.linear_to_mel_weight_matrix(num_mel_bins=24, "
        "num_spectrogram_bins=WINDOW // 2 + 1, sample_rate=RATE)"
    )
    runs_cleanly(kernel, fix + "\nmels = power @ bank")
    assert value_of(kernel, "mels.shape.as_list()") == [3, 36, 24]


def test_the_length_itself_given_as_the_bins(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SPECTRA)
    runs_cleanly(
        kernel,
        "bank = tf.signal.linear_to_mel_weight_matrix(24, num_spectrogram_bins=WINDOW, "
        "sample_rate=RATE)",
    )
    text = failing(kernel, "mels = tf.matmul(power, bank)")["explanation"]
    assert "`num_spectrogram_bins=WINDOW` in cell In[" in text
    fix = fix_of(text)
    assert fix == (
        "bank = tf.signal.linear_to_mel_weight_matrix(24, "
        "num_spectrogram_bins=WINDOW // 2 + 1, sample_rate=RATE)"
    )
    runs_cleanly(kernel, fix + "\nmels = tf.matmul(power, bank)")
    assert value_of(kernel, "mels.shape.as_list()") == [3, 36, 24]


def test_look_alikes_keep_their_own_entries(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SPECTRA)
    # Sizes that are not N // 2 + 1 against N // 2: the plain matmul entry.
    text = failing(kernel, "mixed = power @ tf.ones((200, 8))")["explanation"]
    assert "FFT" not in text and "257 vs 200" in text
    # The right number of bins: no entry.
    runs_cleanly(kernel, "right = tf.signal.linear_to_mel_weight_matrix(24, WINDOW // 2 + 1, RATE)")
    runs_cleanly(kernel, "mels = power @ right")
