"""A clip whose bounds are built from the clipped value itself (issue #25, silent bugs):
``clip(v, v - r, v + r)`` changes nothing, so a projected update drifts past the radius it
was meant to keep. Told from the cell's code; the printed fix (the bounds around the value
it started from) is run in the kernel and the drift stays within the radius, with no note.
Look-alikes stay silent: bounds around a reference, a clip to constants."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "tensors-immutable"

DRIFT = """start = tf.constant(np.linspace(0.0, 1.0, 8, dtype="float32"))
radius = 0.05
moved = start + 0.0
for k in range(20):
    moved = moved + 0.01 * tf.ones_like(moved)
    moved = tf.clip_by_value(moved, moved - radius, moved + radius)
drift = float(tf.reduce_max(tf.abs(moved - start)))
"""
WRONG_CALL = "tf.clip_by_value(moved, moved - radius, moved + radius)"

IN_A_FUNCTION = """def projected_walk(anchor, bound, steps=30):
    theta = anchor.copy()
    for _ in range(steps):
        theta = theta - 0.02 * np.sign(theta - 3.0)
        theta = np.clip(theta, theta - bound, theta + bound)
    return theta

walked = projected_walk(np.zeros(5), 0.1)
"""


def clip_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "changes nothing" in n["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_a_clip_around_itself_in_a_loop(kernel: KernelSession) -> None:
    notes = clip_notes(checked_report(run(kernel, DRIFT)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(f"`{WRONG_CALL}` (line 6 of this cell) keeps `moved` between")
    assert "`moved` started from `start`; clip around it" in notes[0]
    assert shown(kernel, "drift > 0.15") == "True"
    fix = codes(notes[0])[-1]
    assert fix == "tf.clip_by_value(moved, start - radius, start + radius)"
    assert clip_notes(checked_report(run(kernel, DRIFT.replace(WRONG_CALL, fix)))) == []
    assert shown(kernel, "drift <= 0.0501") == "True"


def test_a_clip_around_itself_in_a_function(kernel: KernelSession) -> None:
    notes = clip_notes(checked_report(run(kernel, IN_A_FUNCTION)))
    assert len(notes) == 1, notes
    assert "(line 5 of this cell, in `projected_walk`)" in notes[0]
    fix = codes(notes[0])[-1]
    assert fix == "np.clip(theta, anchor - bound, anchor + bound)"
    assert shown(kernel, "float(np.max(np.abs(walked))) > 0.5") == "True"
    fixed = IN_A_FUNCTION.replace("np.clip(theta, theta - bound, theta + bound)", fix)
    assert clip_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "float(np.max(np.abs(walked))) <= 0.1 + 1e-9") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    report = checked_report(
        run(
            kernel,
            """grad_like = tf.random.normal((4, 3))
capped = tf.clip_by_value(grad_like, -1.0, 1.0)
low = tf.zeros((4, 3))
kept = tf.clip_by_value(capped, low - 0.5, low + 0.5)
pixels = np.clip(np.random.default_rng(0).normal(size=10), 0.0, 1.0)
""",
        )
    )
    assert clip_notes(report) == []
