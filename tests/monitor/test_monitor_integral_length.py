"""A Monte Carlo integral over [a, b] estimated by the mean alone (issue #25,
``symptoms/integral_length.py``): the mean of f at uniform draws is the function's average,
and the integral is (b - a) times it. A NumPy estimate on [1, 4] is told with the fix that
multiplies by the length; the fix, applied, gives the closed form and no note. Look-alikes
stay silent: an integral on [0, 1], an expectation nobody calls an integral, the
estimate already multiplied."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

CELL = """# integrate sqrt(x) from 1 to 4 by sampling
xs = np.random.default_rng(2).uniform(1.0, 4.0, 50_000)
area = np.mean(np.sqrt(xs))
"""


def integral_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "interval's length" in n["text"]]


def test_integral_estimated_by_the_mean_alone(kernel: KernelSession) -> None:
    [text] = integral_notes(CELL, kernel)
    assert text.startswith(
        "`area` is a mean of values at `xs`, drawn uniformly on [1.0, 4.0] "
        "(`xs = np.random.default_rng(2).uniform(1.0, 4.0, 50_000)`)"
    ), text
    assert value_of(kernel, "bool(abs(area - 14 / 3) > 1)") is True
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "area = (4.0 - 1.0) * np.mean(np.sqrt(xs))"
    assert integral_notes(CELL.replace("area = np.mean(np.sqrt(xs))", fix), kernel) == []
    assert value_of(kernel, "bool(abs(area - 14 / 3) < 0.02)") is True


def test_unit_interval_and_expectations_stay_silent(kernel: KernelSession) -> None:
    unit = """# integral of x**2 on [0, 1]
ws = np.random.default_rng(3).uniform(0.0, 1.0, 10_000)
third = np.mean(ws ** 2)
"""
    assert integral_notes(unit, kernel) == []
    expectation = """# expected payoff of a uniform price in [10, 20]
prices = np.random.default_rng(4).uniform(10.0, 20.0, 10_000)
payoff = np.mean(np.maximum(prices - 15.0, 0.0))
"""
    assert integral_notes(expectation, kernel) == []
