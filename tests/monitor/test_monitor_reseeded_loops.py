"""A loop of repetitions that sets the global seed to a constant in every pass (issue #25,
``symptoms/reseeded_loops.py``): every pass draws the same numbers, so a list of results
holds equal values. Told with the list, the seeding line and the loop; the fix (the seeding
moved above the loop) is run and the values differ, with no note. Look-alikes stay silent:
a sweep that re-seeds per setting (its loop name read), seeding once before the loop."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import random
def noisy_trial():
    return float(tf.reduce_mean(tf.random.normal((50,))))
"""
KERNEL = KernelSetup(after_load=SETUP)

TRIALS = """def run_trials(k=6):
    scores = []
    for _ in range(k):
        tf.random.set_seed(42)  # same trials on every run
        scores.append(noisy_trial())
    return scores, float(np.mean(scores))

trial_scores, mean_score = run_trials()
"""
SEEDING = "        tf.random.set_seed(42)  # same trials on every run\n"


def seed_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "equal values" in n["text"]]


def test_a_constant_seed_in_every_pass(kernel: KernelSession) -> None:
    [text] = seed_notes(checked_report(run(kernel, TRIALS)))
    assert text.startswith(
        "`trial_scores` holds 6 equal values: `tf.random.set_seed(42)` in `run_trials` runs "
        "at the start of every pass of `for _ in range(k):` (line 4 of this cell)"
    )
    assert len(set(value_of(kernel, "trial_scores"))) == 1
    moved = re.search(r"Fix: move `([^`]+)` above the loop \(before line (\d+)\)", text)
    assert moved and moved.group(1) == "tf.random.set_seed(42)" and moved.group(2) == "3"
    fixed = TRIALS.replace(SEEDING, "").replace(
        "    for _ in range(k):\n", "    tf.random.set_seed(42)\n    for _ in range(k):\n"
    )
    assert seed_notes(checked_report(run(kernel, fixed))) == []
    assert len(set(value_of(kernel, "trial_scores"))) == 6


def test_a_top_level_loop_appending(kernel: KernelSession) -> None:
    cell = """draws = []
for rep in range(4):
    np.random.seed(7)
    draws.append(float(np.random.rand()))
"""
    [text] = seed_notes(checked_report(run(kernel, cell)))
    assert "`draws` holds 4 equal values: `np.random.seed(7)` runs" in text


LOOK_ALIKES = [
    # A sweep re-seeding per setting: each setting sees the same draws, on purpose.
    """per_width = []
for width in (10, 20, 30):
    np.random.seed(0)
    per_width.append(float(np.random.rand()) + 0 * width)
""",
    # Seeded once, before the loop.
    """random.seed(3)
picks = []
for _ in range(5):
    picks.append(random.random())
""",
]


@pytest.mark.parametrize("cell", LOOK_ALIKES, ids=["sweep", "once"])
def test_look_alikes_stay_silent(kernel: KernelSession, cell: str) -> None:
    assert seed_notes(checked_report(run(kernel, cell))) == []
