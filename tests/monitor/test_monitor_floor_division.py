"""Pixels scaled with ``//`` where ``/`` was meant (issue #25, our own probe cell):
``imgs // 255`` keeps only the whole part, so the images come out as 0 and 1, nearly all
0. Told from the result after the cell; the fix (``/``) is run in the kernel: the values
span [0, 1] with fractions, and no note. Look-alikes stay silent: a true division, a
count of batches, group numbers."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """rng = np.random.default_rng(1)
shots = rng.integers(0, 256, size=(100, 8, 8)).astype("uint8")
"""


def floor_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "floor-divides" in n["text"]]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_pixels_floor_divided(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = floor_notes(checked_report(run(kernel, "pics = shots // 255\n")))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`pics = shots // 255` (line 1 of this cell) floor-divides: `//` keeps only the "
        "whole part of each quotient, so every value under 255 became 0 ("
    ), notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "pics = shots / 255"
    assert floor_notes(checked_report(run(kernel, fix + "\n"))) == []
    assert shown(kernel, "np.allclose(pics * 255, shots) and 0 < pics.mean() < 1") == "True"


def test_pixels_floor_divided_in_place(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "pics = shots.copy()\npics //= 255\n"
    notes = floor_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "load them again first" in notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-2]
    assert fix == "pics = pics / 255"
    assert floor_notes(checked_report(run(kernel, f"pics = shots.copy()\n{fix}\n"))) == []
    assert shown(kernel, "np.allclose(pics * 255, shots)") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        "pics = shots / 255\n",
        "steps = 1000 // 32\n",
        "groups = np.arange(100) // 10\n",
    ):
        assert floor_notes(checked_report(run(kernel, cell))) == [], cell
