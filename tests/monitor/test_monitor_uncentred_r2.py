"""An R^2 whose total sum of squares is taken around 0, not around the mean (issue #25,
silent bugs): the note names the R^2, the total, both values and the centred total; the
test applies the fix and gets the R^2 a library computes. Look-alikes stay silent: the
centred total, a target whose mean is near 0, a name that does not say R^2."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(before_load="import numpy as np\nimport tensorflow as tf\n", after_load="")
SECTION = "reducing-tensors"

DATA = """gen = np.random.default_rng(21)
heights = gen.normal(170.0, 8.0, size=300)
guess = heights + gen.normal(0.0, 6.0, size=300)
obs = tf.constant(gen.normal(50.0, 4.0, size=90), dtype=tf.float32)
fitted = obs + tf.random.normal((90,), stddev=2.0, seed=3)
"""


def r2_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "R^2" in note["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])[0]


def test_numpy_r_squared_around_zero(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "resid_ss = np.sum((heights - guess) ** 2)\n"
        "total_ss = (heights ** 2).sum()\n"
        "r_squared = 1.0 - resid_ss / total_ss\n"
    )
    notes = r2_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`r_squared` (line 3 of this cell) is an R^2 whose total sum of squares, "
        "`total_ss`, `(heights ** 2).sum()`, is taken around 0, not around the mean of "
        "`heights`"
    ), text
    fix = fix_of(text)
    assert fix == "total_ss = ((heights - heights.mean()) ** 2).sum()"
    fixed = checked_report(run(kernel, cell.replace("total_ss = (heights ** 2).sum()", fix)))
    assert r2_notes(fixed) == []
    expected = "1 - np.var(heights - guess) * 300 / (np.var(heights) * 300)"
    gap = value_of(kernel, f"abs(float(r_squared) - ({expected}))")
    assert gap < 0.02  # the residual mean is near 0 here: the two agree closely


def test_tensorflow_inline_total(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "err = tf.reduce_sum(tf.square(obs - fitted))\n"
        "val_r2 = 1 - err / tf.reduce_sum(tf.square(obs))\n"
    )
    notes = r2_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix == "val_r2 = 1 - err / tf.reduce_sum(tf.square((obs - tf.reduce_mean(obs))))"
    assert r2_notes(checked_report(run(kernel, cell.replace(cell.splitlines()[1], fix)))) == []
    assert value_of(kernel, "float(val_r2) < 0.95")


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "centred = heights - heights.mean()\n"
        "good_r2 = 1 - np.sum((heights - guess) ** 2) / np.sum(centred ** 2)\n"
        "noise = gen.normal(0.0, 1.0, size=300)\n"
        "noise_r2 = 1 - np.sum((noise - 0.9 * noise) ** 2) / np.sum(noise ** 2)\n"
        "energy_ratio = 1 - np.sum((heights - guess) ** 2) / np.sum(heights ** 2)\n"
    )
    assert r2_notes(checked_report(run(kernel, cell))) == []
