"""A NaN result from ``a * log(a / b)`` where ``a`` holds zeros (issue #25,
``symptoms/zero_log_terms.py``): 0 times log(0) is 0 times minus infinity, NaN, and the
sum it belongs to is NaN. A KL divergence of empirical frequencies written with
``tf.math.log`` and an entropy written with ``keras.ops.log`` are told with the
statement rewritten with ``xlogy``; each fix, applied, gives a finite value and no note.
Look-alikes stay silent: a log kept finite by ``+ eps``, and a NaN that comes from the
log of negative values (no zero to blame)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "nan-inf"
FREQS = """tally = np.array([4.0, 0.0, 9.0, 7.0, 0.0], dtype="float32")
p_emp = tally / tally.sum()
q_model = tf.fill([5], 0.2)
"""
KL = """kl = tf.reduce_sum(p_emp * tf.math.log(p_emp / q_model))
"""
ENTROPY = """probs_row = keras.ops.convert_to_tensor(p_emp)
ent = -keras.ops.sum(probs_row * keras.ops.log(probs_row))
"""


def nan_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n.get("course") or {}).get("section") == SECTION]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_kl_divergence_of_frequencies_with_zeros(kernel: KernelSession) -> None:
    run(kernel, FREQS)
    [text] = nan_notes(KL, kernel)
    assert text.startswith(
        "`kl` is NaN: `p_emp * tf.math.log(p_emp / q_model)` computes `log` of 0 where "
        "`p_emp` is 0 (2 values)"
    ), text
    assert value_of(kernel, "bool(np.isnan(kl))") is True
    fix = fix_of(text)
    assert fix == "kl = tf.reduce_sum(tf.math.xlogy(p_emp, p_emp / q_model))"
    assert nan_notes(fix, kernel) == []
    assert value_of(kernel, "bool(np.isfinite(kl)) and float(kl) > 0") is True


def test_entropy_with_keras_ops_and_numpy(kernel: KernelSession) -> None:
    run(kernel, FREQS)
    [text] = nan_notes(ENTROPY, kernel)
    assert "`ent` is NaN: `probs_row * keras.ops.log(probs_row)`" in text, text
    fix = fix_of(text)
    assert fix == (
        "ent = -keras.ops.sum(keras.ops.where(probs_row > 0, probs_row * keras.ops.log("
        "keras.ops.where(probs_row > 0, probs_row, 1.0)), 0.0))"
    )
    fixed = ENTROPY.replace("ent = -keras.ops.sum(probs_row * keras.ops.log(probs_row))", fix)
    assert nan_notes(fixed, kernel) == []
    expected = "float(-(p_emp[p_emp > 0] * np.log(p_emp[p_emp > 0])).sum())"
    assert value_of(kernel, f"abs(float(ent) - {expected}) < 1e-5") is True
    # NumPy's spelling, the zeros in an integer histogram.
    numpy_cell = """hist = np.bincount([0, 0, 2, 3, 3, 3], minlength=5)
shares = hist / hist.sum()
gini_log = float(-(shares * np.log(shares)).sum())
"""
    [numpy_text] = nan_notes(numpy_cell, kernel)
    numpy_fix = fix_of(numpy_text)
    assert numpy_fix == (
        "gini_log = float(-(np.where(shares > 0, shares * np.log(np.where(shares > 0, "
        "shares, 1.0)), 0.0)).sum())"
    )
    fixed_numpy = numpy_cell.replace(
        "gini_log = float(-(shares * np.log(shares)).sum())", numpy_fix
    )
    assert nan_notes(fixed_numpy, kernel) == []
    assert value_of(kernel, "abs(gini_log - 1.0114042647073518) < 1e-9") is True


def test_finite_logs_and_other_nans_stay_silent(kernel: KernelSession) -> None:
    run(kernel, FREQS)
    smoothed = "kl_eps = tf.reduce_sum(p_emp * tf.math.log(p_emp / q_model + 1e-9))\n"
    assert nan_notes(smoothed, kernel) == []
    # NaN from the log of negative values: no zero in the factor, nothing to rewrite.
    negative = """signed = np.array([0.5, -0.2, 0.7], dtype="float32")
odd = tf.reduce_sum(signed * tf.math.log(signed))
"""
    assert nan_notes(negative, kernel) == []
    assert value_of(kernel, "bool(np.isnan(odd))") is True
