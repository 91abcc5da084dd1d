"""A least-squares fit by hand without a column of ones on data with an offset (issue
#25, silent bugs): the note names the fit, the design matrix, how much a column of ones
would cut the residual sum of squares, and the design matrix with the column; the test
applies it and finds the offset as the last weight. Look-alikes stay silent: data through
the origin, a design that has its column of ones, one-hot groups that span a constant."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(before_load="import numpy as np\nimport tensorflow as tf\n", after_load="")
SECTION = "reducing-tensors"

DATA = """rng2 = np.random.default_rng(11)
temps = rng2.uniform(10, 30, size=(120, 2))
sales = temps @ np.array([0.8, -0.3]) + 12.0 + rng2.normal(0, 0.5, size=120)
feats = tf.constant(rng2.normal(2.0, 1.0, size=(80, 4)))
level = tf.linalg.matvec(feats, tf.constant([1.0, 0.5, -1.0, 2.0], dtype=tf.float64)) - 5.0
"""


def fit_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "least-squares" in note["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])[0]


def test_numpy_lstsq_without_a_column_of_ones(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "design = temps\ncoef = np.linalg.lstsq(design, sales, rcond=None)[0]\n"
    notes = fit_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`coef` (line 2 of this cell) is a least-squares fit, "
        "`np.linalg.lstsq(design, sales, rcond=None)`, of `sales` on the 2 columns of "
        "`design` (120, 2), none of them a column of ones"
    ), text
    again = "coef_again = np.linalg.lstsq(design, sales, rcond=None)[0]\n"
    assert fit_notes(checked_report(run(kernel, again))) == []  # told once per matrix
    fix = fix_of(text)
    assert fix == "design = np.column_stack([temps, np.ones(120)])"
    fixed = checked_report(run(kernel, cell.replace("design = temps", fix)))
    assert fit_notes(fixed) == []
    assert abs(value_of(kernel, "float(coef[-1])") - 12.0) < 1.0


def test_normal_equations_with_matmul(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "Z = feats\n"
        "beta = tf.linalg.solve(tf.matmul(Z, Z, transpose_a=True), "
        "tf.matmul(Z, tf.expand_dims(level, 1), transpose_a=True))\n"
    )
    notes = fit_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "of `level` on the 4 columns of `Z` (80, 4)" in notes[0], notes[0]
    fix = fix_of(notes[0])
    assert fix == "Z = tf.concat([feats, tf.ones((80, 1), dtype=tf.float64)], axis=1)"
    assert fit_notes(checked_report(run(kernel, cell.replace("Z = feats", fix)))) == []
    assert abs(value_of(kernel, "float(beta[-1, 0])") + 5.0) < 1e-6


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "through = temps @ np.array([0.8, -0.3]) + rng2.normal(0, 0.5, size=120)\n"
        "c1 = np.linalg.lstsq(temps, through, rcond=None)[0]\n"
        "with_ones = np.column_stack([temps, np.ones(120)])\n"
        "c2 = np.linalg.lstsq(with_ones, sales, rcond=None)[0]\n"
        "groups = np.eye(3)[rng2.integers(0, 3, size=120)]\n"
        "grouped = np.column_stack([groups, temps])\n"
        "c3 = np.linalg.solve(grouped.T @ grouped, grouped.T @ sales)\n"
    )
    assert fit_notes(checked_report(run(kernel, cell))) == []
