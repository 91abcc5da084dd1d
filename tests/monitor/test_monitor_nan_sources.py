"""A value the cell made holds NaN or infinity (issue #25, silent bugs): the first such
name whose inputs are finite is where it was made, and its statement says why. A
Cholesky factor of a matrix that is not numerically positive definite, the log of a
name holding zeros, a division by a name holding zeros: the note names the value, the
line, the op and the values behind it, and the fix, which the test runs and shows
finite. Look-alikes stay silent: the factor with jitter, a deliberate minus-infinity
mask, a NaN carried in from an earlier cell, and a ``p * log(p)`` product (told by
``zero_log_terms``)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

SECTION = "nan-inf"
DATA = """grid = tf.linspace(0.0, 2.0, 80)
def smooth(a, b):
    return tf.exp(-tf.square(a[:, None] - b[None, :]) / 0.5)
"""


def nan_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])[0]


def test_cholesky_of_a_singular_kernel_matrix(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "gram = smooth(grid, grid)\n"
        "chol = tf.linalg.cholesky(gram)\n"
        "draws = tf.matmul(chol, tf.random.normal((80, 4)))\n"
        "bad = int(tf.reduce_sum(tf.cast(tf.math.is_nan(draws), tf.int32)))\n"
    )
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert value_of(kernel, "bad") > 0  # the symptom
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`chol` (line 2 of this cell) is not finite: "), text
    assert "`tf.linalg.cholesky(gram)` returns NaN when `gram` is not positive definite" in text
    assert "`draws`, computed from it, is not finite either" in text
    fix = fix_of(text)
    assert fix == "chol = tf.linalg.cholesky(gram + 1e-4 * tf.eye(80, dtype=tf.float32))"
    fixed = checked_report(run(kernel, cell.replace(cell.splitlines()[1], fix)))
    assert nan_notes(fixed) == []
    assert value_of(kernel, "bad") == 0


def test_log_of_zeros_and_a_division_by_zeros(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "counts = np.array([3.0, 0.0, 5.0, 0.0])\nlog_counts = np.log(counts)\n"
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "`np.log(counts)` is minus infinity where `counts` is 0 (2 values)" in notes[0]
    fix = fix_of(notes[0])
    assert fix == "log_counts = np.log(np.maximum(counts, 1e-12))"
    assert nan_notes(checked_report(run(kernel, cell.replace(cell.splitlines()[1], fix)))) == []
    assert value_of(kernel, "bool(np.isfinite(log_counts).all())") is True

    cell = (
        "hits = tf.constant([2.0, 0.0, 1.0])\n"
        "tries = tf.constant([4.0, 0.0, 2.0])\n"
        "rate = hits / tries\n"
    )
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "`hits / tries` divides by `tries`, which is 0 in 1 place:" in notes[0]
    fix = fix_of(notes[0])
    assert fix == "rate = tf.math.divide_no_nan(hits, tries)"
    assert nan_notes(checked_report(run(kernel, cell.replace("rate = hits / tries", fix)))) == []
    assert value_of(kernel, "rate.numpy().tolist()") == [0.5, 0.0, 0.5]


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "gram = smooth(grid, grid)\n"
        "chol = tf.linalg.cholesky(gram + 1e-4 * tf.eye(80))\n"
        "causal = tf.where(tf.range(5)[:, None] >= tf.range(5)[None, :], 0.0, -np.inf)\n"
        "attn = tf.nn.softmax(tf.ones((5, 5)) / 2.0 + causal)\n"
        "probs = np.array([0.5, 0.5, 0.0])\n"
        "entropy = -np.sum(probs * np.log(probs))\n"
    )
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert all("is not finite" not in n for n in notes), notes
    run(kernel, "broken = tf.constant([1.0, float('nan')])\n")
    carried = checked_report(run(kernel, "halved = broken / 2.0\nlogged = tf.math.log(broken)\n"))
    assert nan_notes(carried) == []


def test_sqrt_of_a_variance_rounded_below_zero(kernel: KernelSession) -> None:
    """A variance computed as a difference: the constant column comes out a hair below 0,
    its square root NaN; the negatives are rounding against the other column's scale, so
    the fix clamps at 0."""
    cell = (
        "cols = np.stack([np.linspace(0, 4, 50), np.full(50, 0.7)], axis=1).astype('float32')\n"
        "second = np.mean(cols * cols, axis=0)\n"
        "first = np.mean(cols, axis=0)\n"
        "var_est = second - first * first\n"
        "sd_est = np.sqrt(var_est)\n"
    )
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`sd_est` (line 5 of this cell) is not finite: 1 of its 2 values")
    assert "`np.sqrt(var_est)` is NaN where `var_est` is negative (1 value," in notes[0]
    fix = fix_of(notes[0])
    assert fix == "sd_est = np.sqrt(np.maximum(var_est, 0.0))"
    assert nan_notes(checked_report(run(kernel, cell.replace(cell.splitlines()[4], fix)))) == []
    assert value_of(kernel, "bool(np.isfinite(sd_est).all())") is True


def test_exp_overflow_in_a_hand_written_softmax(kernel: KernelSession) -> None:
    """No rewrite of a bare exp keeps its value: the remedy is said in words, and the
    library's softmax it names is finite on the same scores."""
    cell = (
        "raw = tf.constant([[10.0, 120.0, 3.0], [1.0, 2.0, 3.0]])\n"
        "weights = tf.exp(raw) / tf.reduce_sum(tf.exp(raw), axis=-1, keepdims=True)\n"
    )
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`weights` (line 2 of this cell) is not finite"), text
    assert "`tf.exp(raw)` overflows to infinity where `raw` is above 88.72 (1 value," in text
    assert "`tf.nn.softmax`" in text and "Fix:" not in text
    fixed = "weights = tf.nn.softmax(raw, axis=-1)\n"
    assert nan_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "bool(tf.reduce_all(tf.math.is_finite(weights)))") is True


BANDS = """bands = tf.concat(
    [tf.random.uniform((240, 30, 24), 0.1, 2.0), tf.zeros((240, 6, 24))], axis=1
)
"""


def test_log_of_a_large_tensor_with_silent_frames(kernel: KernelSession) -> None:
    # 207,360 values: above the old reading cap, a batch of padded spectrograms.
    run(kernel, BANDS)
    cell = (
        "decibels = 10.0 * tf.experimental.numpy.log10(bands)\nlevel = tf.reduce_mean(decibels)\n"
    )
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`decibels` (line 1 of this cell) is not finite: 34560 of its 207360 values are infinite"
    ), text
    assert (
        "`tf.experimental.numpy.log10(bands)` is minus infinity where `bands` is 0 (34560 values)"
        in text
    )
    fix = fix_of(text)
    assert fix == "decibels = 10.0 * tf.experimental.numpy.log10(tf.maximum(bands, 1e-12))"
    fixed = cell.replace(cell.splitlines()[0], fix)
    assert nan_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "bool(tf.reduce_all(tf.math.is_finite(decibels)))") is True
    # Reading an earlier cell's infinite values (a mean of them) is not where they were made.
    run(kernel, "decibels = 10.0 * tf.experimental.numpy.log10(bands)\n")
    carried = checked_report(run(kernel, "spread = tf.math.reduce_std(decibels)\n"))
    assert nan_notes(carried) == []


def test_division_by_a_sum_that_is_zero_for_a_row(kernel: KernelSession) -> None:
    run(kernel, "votes = tf.constant([[2.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 3.0, 1.0]])\n")
    cell = "shares = tf.cast(votes, tf.float32) / tf.reduce_sum(votes, axis=1, keepdims=True)\n"
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`shares` (line 1 of this cell) is not finite: 3 of its 9 values are NaN"
    ), text
    assert "`tf.reduce_sum(votes, axis=1, keepdims=True)` is 0 for some values" in text
    fix = fix_of(text)
    assert fix == (
        "shares = tf.math.divide_no_nan(tf.cast(votes, tf.float32), "
        "tf.reduce_sum(votes, axis=1, keepdims=True))"
    )
    assert nan_notes(checked_report(run(kernel, fix + "\n"))) == []
    assert value_of(kernel, "shares.numpy()[1].tolist()") == [0.0, 0.0, 0.0]
    # Look-alikes: a deliberate minus-infinity fill and NaN sentinel stay silent.
    cell = (
        "blocked = tf.fill((4, 4), -np.inf)\n"
        "gaps = np.full(5, float('nan')) / 2.0\n"
        "means = tf.reduce_sum(votes, axis=1) / 3.0\n"
    )
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert notes == [], notes


def test_a_bound_result_of_a_helper_dividing_by_a_zero_row_sum(kernel: KernelSession) -> None:
    helper = "def row_shares(table):\n    return table / table.sum(axis=1, keepdims=True)\n"
    run(kernel, "tally = np.array([[1.0, 3.0], [0.0, 0.0], [2.0, 2.0]])\n" + helper)
    notes = nan_notes(checked_report(run(kernel, "mix = row_shares(tally)\n")))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`mix` (line 1 of this cell) is not finite: 2 of its 6 values are NaN"
    ), text
    assert (
        "`row_shares`, line 2 of its definition, computes "
        "`table / table.sum(axis=1, keepdims=True)`: the sum is 0 for a row" in text
    ), text
    fix = fix_of(text)
    assert fix == (
        "np.divide(table, table.sum(axis=1, keepdims=True), out=np.zeros_like(table), "
        "where=table.sum(axis=1, keepdims=True) != 0)"
    ), fix
    run(kernel, helper.replace("table / table.sum(axis=1, keepdims=True)", fix))
    assert nan_notes(checked_report(run(kernel, "mix = row_shares(tally)\n"))) == []
    assert value_of(kernel, "mix.tolist()") == [[0.25, 0.75], [0.0, 0.0], [0.5, 0.5]]
    # A helper normalising exps (a softmax by hand) is not blamed for an overflow's NaN.
    run(kernel, "def by_hand(z):\n    e = np.exp(z)\n    return e / e.sum(axis=1, keepdims=True)\n")
    notes = nan_notes(checked_report(run(kernel, "odds = by_hand(tally * 400.0)\n")))
    assert all("by_hand" not in n for n in notes), notes


def test_negatives_under_a_log_followed_to_a_complex_cast(kernel: KernelSession) -> None:
    run(
        kernel,
        "tones = tf.random.normal((12, 512))\n"
        "spectrum = tf.signal.rfft(tones)\n"
        "amplitude = tf.cast(spectrum, tf.float32)\n",
    )
    run(kernel, "banded = tf.matmul(amplitude, tf.ones((257, 16)) / 257.0)\n")
    cell = "log_banded = tf.math.log(banded)\n"
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert (
        "`tf.math.log(banded)` is NaN (and minus infinity at its zeros) where `banded` is negative"
        in text
    )
    assert (
        "`amplitude` was made by `amplitude = tf.cast(spectrum, tf.float32)`: a cast of the "
        "complex `spectrum` to a float keeps only its real part"
    ) in text, text
    fix = fix_of(text)
    assert fix == "amplitude = tf.abs(spectrum)"
    run(kernel, fix + "\nbanded = tf.matmul(amplitude, tf.ones((257, 16)) / 257.0)\n")
    assert nan_notes(checked_report(run(kernel, cell))) == []
    assert value_of(kernel, "bool(tf.reduce_all(tf.math.is_finite(log_banded)))") is True


def test_number_added_to_every_entry_instead_of_the_diagonal(kernel: KernelSession) -> None:
    """A noise level added to a whole kernel matrix (a broadcast add) instead of its
    diagonal: the matrix stays singular, its factor NaN. The note says so and its fix puts
    the noise on the diagonal, not a jitter that would hide the bug; the same inline, and
    with a vector of per-point noise."""
    setup = (
        "pts = tf.linspace(0.0, 3.0, 40)[:, None]\n"
        "def sqexp(a, b):\n"
        "    return tf.exp(-0.5 * tf.square(a - tf.transpose(b)) / 0.3 ** 2)\n"
    )
    run(kernel, setup)
    cell = (
        "obs_noise = 0.05\n"
        "cov = sqexp(pts, pts) + obs_noise\n"
        "chol = tf.linalg.cholesky(cov)\n"
        "coef = tf.linalg.cholesky_solve(chol, tf.sin(pts))\n"
    )
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`chol` (line 3 of this cell) is not finite: "), text
    assert "`cov` is made (line 2 of this cell) by `sqexp(pts, pts) + obs_noise`" in text
    assert "adds it to every entry" in text and "1e-" not in text, text
    fix = fix_of(text)
    assert fix == "cov = sqexp(pts, pts) + obs_noise * tf.eye(40, dtype=tf.float32)"
    fixed = checked_report(run(kernel, cell.replace(cell.splitlines()[1], fix)))
    assert nan_notes(fixed) == []
    assert value_of(kernel, "bool(tf.reduce_all(tf.math.is_finite(coef)))") is True
    # The noise on the diagonal is what the model meant: the fit follows the data.
    assert value_of(kernel, "float(tf.reduce_max(tf.abs(cov @ coef - tf.sin(pts))))") < 1e-2

    inline = "chol2 = tf.linalg.cholesky(sqexp(pts, pts) + 1e-3)\n"
    notes = nan_notes(checked_report(run(kernel, inline)))
    assert len(notes) == 1, notes
    assert "`sqexp(pts, pts) + 1e-3`: adding the number `1e-3`" in notes[0]
    fix = fix_of(notes[0])
    assert (
        fix == "chol2 = tf.linalg.cholesky(sqexp(pts, pts) + 1e-3 * tf.eye(40, dtype=tf.float32))"
    )
    assert nan_notes(checked_report(run(kernel, fix + "\n"))) == []
    assert value_of(kernel, "bool(tf.reduce_all(tf.math.is_finite(chol2)))") is True

    per_point = (
        "spread = tf.fill([40], 0.02)\n"
        "cov3 = sqexp(pts, pts) + spread\n"
        "chol3 = tf.linalg.cholesky(cov3)\n"
    )
    notes = nan_notes(checked_report(run(kernel, per_point)))
    assert len(notes) == 1, notes
    assert "adding the vector `spread` of 40 values" in notes[0]
    fix = fix_of(notes[0])
    assert fix == "cov3 = sqexp(pts, pts) + tf.linalg.diag(spread)"
    assert (
        nan_notes(
            checked_report(run(kernel, per_point.replace("cov3 = sqexp(pts, pts) + spread", fix)))
        )
        == []
    )
    assert value_of(kernel, "bool(tf.reduce_all(tf.math.is_finite(chol3)))") is True

    # The matrix under the number is far from a covariance: no fix that would hide it.
    worse = (
        "cov6 = sqexp(pts, pts) - 0.5 * tf.eye(40) + obs_noise\nchol6 = tf.linalg.cholesky(cov6)\n"
    )
    notes = nan_notes(checked_report(run(kernel, worse)))
    assert len(notes) == 1, notes
    assert "the matrix without it is not a covariance either" in notes[0], notes[0]
    assert "Fix:" not in notes[0], notes[0]

    # Look-alikes: the noise on the diagonal; a constant added to a matrix that is
    # positive definite anyway (nothing NaN, nothing said).
    quiet = (
        "cov4 = sqexp(pts, pts) + obs_noise * tf.eye(40)\n"
        "chol4 = tf.linalg.cholesky(cov4)\n"
        "spd = tf.eye(5) * 3.0 + 0.5\n"
        "chol5 = tf.linalg.cholesky(spd)\n"
    )
    assert nan_notes(checked_report(run(kernel, quiet))) == []


def test_matrix_far_from_positive_definite_gets_no_jitter(kernel: KernelSession) -> None:
    """A symmetric matrix with a clearly negative eigenvalue, and one that is not
    symmetric: a jitter would not make them covariances, so none is printed; the note
    gives the eigenvalue or the asymmetry and says to read how the matrix is built."""
    run(kernel, DATA)
    cell = "shifted = smooth(grid, grid) - 2.0 * tf.eye(80)\nfactor = tf.linalg.cholesky(shifted)\n"
    notes = nan_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "its smallest eigenvalue is -2" in notes[0], notes[0]
    assert "far beyond rounding" in notes[0] and "Fix:" not in notes[0], notes[0]
    skew = "lopsided = tf.constant([[1.0, 5.0], [2.0, 1.0]])\nfac2 = tf.linalg.cholesky(lopsided)\n"
    notes = nan_notes(checked_report(run(kernel, skew)))
    assert len(notes) == 1, notes
    assert "`lopsided` is not even symmetric" in notes[0] and "Fix:" not in notes[0], notes[0]
