"""An in-place step toward a target written with the difference reversed (issue #25,
``training/interpolation_signs.py``): ``w.assign_add(c * (w - t))`` widens the gap to
``t`` at every step. Told in the cell that runs it (its own code, or a function defined
earlier and called), naming the statement and the fix; the fix is run and the gap closes
with no note. Look-alikes stay silent: the right sign, an extrapolation from the previous
value (momentum), a step along an error that is not the variable's own gap."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
anchor = tf.constant([1.0, -2.0, 0.5])
"""
KERNEL = KernelSetup(after_load=SETUP)

# A running average of a target, written away from it.
AVERAGE = """center = tf.Variable(tf.zeros(3))
gaps = []
for _ in range(8):
    center.assign_add(0.2 * (center - anchor))
    gaps.append(float(tf.norm(center - anchor)))
"""


def away_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if n["text"].startswith("A step away")]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("the other way:", 1)[1])[0]


def test_an_average_written_away_from_its_target(kernel: KernelSession) -> None:
    # Starting exactly at zero the gap would stay put only at the target: start elsewhere.
    cell = AVERAGE.replace("tf.zeros(3)", "tf.constant([0.9, -1.9, 0.4])")
    [text] = away_notes(checked_report(run(kernel, cell)))
    assert text.startswith(
        "A step away from its target: `center.assign_add(0.2 * (center - anchor))` moves `center`"
    )
    gaps = value_of(kernel, "gaps")
    assert gaps[-1] > gaps[0]
    fix = fix_of(text)
    assert fix == "center.assign_add(0.2 * (anchor - center))"
    fixed = cell.replace("center.assign_add(0.2 * (center - anchor))", fix)
    assert away_notes(checked_report(run(kernel, fixed))) == []
    gaps = value_of(kernel, "gaps")
    assert gaps[-1] < gaps[0]


def test_a_meta_step_defined_earlier_and_called(kernel: KernelSession) -> None:
    definition = """slow = [tf.Variable(tf.ones(2)), tf.Variable(tf.zeros(2))]

def pull(adapted, rate=0.3):
    for s, a in zip(slow, adapted):
        s.assign_sub(rate * (a - s))
"""
    assert away_notes(checked_report(run(kernel, definition))) == []
    calls = """goal = [tf.constant([2.0, 2.0]), tf.constant([1.0, 1.0])]
gap0 = float(tf.norm(slow[0] - goal[0]))
for _ in range(4):
    pull(goal)
gap1 = float(tf.norm(slow[0] - goal[0]))
"""
    [text] = away_notes(checked_report(run(kernel, calls)))
    assert "`s.assign_sub(rate * (a - s))` in `pull`" in text
    assert value_of(kernel, "gap1 > gap0") is True
    fix = fix_of(text)
    assert fix == "s.assign_sub(rate * (s - a))"
    run(kernel, definition.replace("s.assign_sub(rate * (a - s))", fix))
    checked_report(run(kernel, calls))
    assert value_of(kernel, "gap1 < gap0") is True


LOOK_ALIKES = [
    AVERAGE.replace("(center - anchor))", "(anchor - center))").replace("center", "mid"),
    # Nesterov-style extrapolation from the previous value: meant.
    """pos = tf.Variable([0.0, 0.0])
prev_pos = tf.constant([0.0, 0.0])
for _ in range(3):
    here = tf.identity(pos)
    pos.assign_add(0.5 * (pos - prev_pos) + 0.1)
    prev_pos = here
""",
    # An error that is not the variable's own gap.
    """bias = tf.Variable(0.0)
y_t, p_t = tf.constant(3.0), tf.constant(1.0)
bias.assign_add(0.1 * (y_t - p_t))
""",
]


@pytest.mark.parametrize("cell", LOOK_ALIKES, ids=["toward", "extrapolation", "error"])
def test_look_alikes_stay_silent(kernel: KernelSession, cell: str) -> None:
    assert away_notes(checked_report(run(kernel, cell))) == []
