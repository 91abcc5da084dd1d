"""Predictions on a centred or standardised scale compared with raw targets (issue #25,
silent bugs): a model fitted to ``y - mean`` (or ``(y - mean) / std``) predicts on that
scale, so an error computed against the raw targets mostly measures the missing offset.
Told from the cell's comparison and the namespace's statistics; the printed fix (the
statistics given back) is run in the kernel and the error falls, with no note. Look-alikes
stay silent: predictions compared with the centred targets, a prediction given its mean
back."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "preprocessing-adapt"

LSTSQ_SETUP = """rng = np.random.default_rng(5)
features = rng.normal(size=(200, 3))
heights = features @ np.array([[0.5], [-1.0], [2.0]]) + 170.0 + rng.normal(0, 0.3, (200, 1))
height_mean = float(heights[:150].mean())
coef = tf.linalg.lstsq(tf.constant(features[:150]), tf.constant(heights[:150] - height_mean))
features_val, heights_val = features[150:], heights[150:]
"""
LSTSQ = """fitted = tf.matmul(features_val, coef)
err = float(tf.reduce_mean(tf.square(fitted - heights_val)))
"""

POLY_SETUP = """hours = np.linspace(0.0, 1.0, 300)
load = 40.0 + 12.0 * np.sin(6.0 * hours) + np.random.default_rng(2).normal(0, 0.5, 300)
load_mu, load_sd = load[::2].mean(), load[::2].std()
coeffs = np.polyfit(hours[::2], (load[::2] - load_mu) / load_sd, 5)
z_pred = np.polyval(coeffs, hours[1::2])
load_val = load[1::2]
"""
POLY = "score = float(keras.losses.mean_absolute_error(load_val, z_pred))\n"


def scale_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "before comparing" in n["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_centred_predictions_against_raw_targets(kernel: KernelSession) -> None:
    assert scale_notes(checked_report(run(kernel, LSTSQ_SETUP))) == []
    notes = scale_notes(checked_report(run(kernel, LSTSQ)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`fitted - heights_val` (line 2 of this cell) compares `fitted`")
    assert "given `height_mean` back" in notes[0]
    assert shown(kernel, "err > 1000") == "True"
    fix = codes(notes[0])[-1]
    assert fix == "fitted = tf.matmul(features_val, coef) + height_mean"
    fixed = LSTSQ.replace("fitted = tf.matmul(features_val, coef)", fix)
    assert scale_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "err < 1.0") == "True"


def test_standardised_predictions_in_a_metric(kernel: KernelSession) -> None:
    run(kernel, POLY_SETUP)
    notes = scale_notes(checked_report(run(kernel, POLY)))
    assert len(notes) == 1, notes
    assert "given `load_sd` and `load_mu` back" in notes[0]
    assert shown(kernel, "score > 20") == "True"
    fix = codes(notes[0])[-1]
    assert fix == "keras.losses.mean_absolute_error(load_val, (z_pred * load_sd + load_mu))"
    assert scale_notes(checked_report(run(kernel, f"score = float({fix})\n"))) == []
    assert shown(kernel, "score < 2.0") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, LSTSQ_SETUP)
    report = checked_report(
        run(
            kernel,
            """centred_val = heights_val - height_mean
fitted = tf.matmul(features_val, coef)
err_centred = float(tf.reduce_mean(tf.square(fitted - centred_val)))
restored = tf.matmul(features_val, coef) + height_mean
err_raw = float(tf.reduce_mean(tf.abs(restored - heights_val)))
""",
        )
    )
    assert scale_notes(report) == []
