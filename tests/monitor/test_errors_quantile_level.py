"""A NumPy quantile's level outside its range (``errors/families_quantile_level.py``) and
NumPy's errors in the learner's line in general (``errors/families.py``): NumPy raises
them without TensorFlow in the traceback, and each still gets an entry naming the line,
the call and its values. A rank computed from the number of values is divided by it, a
percentage given to ``quantile`` by 100; each printed fix runs and gives the right value.
Correct levels stay silent, and an error of plain Python stays unclaimed."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

AGES = "ages = np.arange(1, 41, dtype=np.float64)  # 40 values, 1 to 40"


def test_a_rank_given_as_the_level(kernel: KernelSession) -> None:
    runs_cleanly(kernel, AGES)
    cell = "rank = np.ceil(0.75 * (len(ages) + 1))\ncutoff = np.quantile(ages, rank)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "reducing-tensors"
    text = error["explanation"]
    assert text.startswith("Line 2 of this cell: `np.quantile(ages, rank)` raised ValueError")
    assert "`rank` is 31, a rank among the 40 values of `ages`" in text
    assert "(`rank = np.ceil(0.75 * (len(ages) + 1))`, line 1)" in text
    assert "a fraction from 0 to 1" in text
    fix = fix_of(text)
    assert fix == 'cutoff = np.quantile(ages, min(rank / len(ages), 1.0), method="inverted_cdf")'
    runs_cleanly(kernel, cell.replace("cutoff = np.quantile(ages, rank)", fix))
    # The value of rank 31 among 1..40 is 31 itself.
    assert value_of(kernel, "float(cutoff)") == 31.0


def test_a_rank_from_a_name_holding_the_count(kernel: KernelSession) -> None:
    runs_cleanly(kernel, AGES + "\nhow_many = ages.size")
    cell = "top = how_many + 1\nhighest = np.quantile(ages, top)"
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix == ('highest = np.quantile(ages, min(top / len(ages), 1.0), method="inverted_cdf")')
    runs_cleanly(kernel, cell.replace("highest = np.quantile(ages, top)", fix))
    assert value_of(kernel, "float(highest)") == 40.0  # a rank past the last: the largest


def test_a_percentage_given_to_quantile(kernel: KernelSession) -> None:
    runs_cleanly(kernel, AGES)
    text = failing(kernel, "middle = np.quantile(ages, 50)")["explanation"]
    assert "`50` reads as a percentage" in text and "`np.percentile`" in text
    fix = fix_of(text)
    assert fix == "middle = np.quantile(ages, 0.5)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(middle)") == 20.5
    # A percentage held by a name is divided where it is given.
    runs_cleanly(kernel, "share = 90")
    fix = fix_of(failing(kernel, "upper = np.quantile(ages, share)")["explanation"])
    assert fix == "upper = np.quantile(ages, share / 100)"
    runs_cleanly(kernel, fix)
    assert abs(value_of(kernel, "float(upper)") - 36.1) < 1e-9


def test_other_levels_get_the_rule_and_no_fix(kernel: KernelSession) -> None:
    runs_cleanly(kernel, AGES)
    text = failing(kernel, "low = np.quantile(ages, -0.25)")["explanation"]
    assert "`-0.25` is below 0: `np.quantile` takes its level as a fraction" in text
    assert "Fix:" not in text
    text = failing(kernel, "band = np.percentile(ages, [10, 250])")["explanation"]
    assert "`[10, 250]` holds 250, above 100" in text and "a percentage from 0 to 100" in text


def test_correct_levels_stay_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, AGES)
    report = checked_report(
        run(kernel, "a = np.quantile(ages, 0.9)\nb = np.percentile(ages, 90)\nc = len(ages)")
    )
    assert report["error"] is None and report["notes"] == []
    assert value_of(kernel, "float(a) == float(b)") is True


def test_any_numpy_error_from_the_line_gets_an_entry(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "wide = np.ones((2, 3))\nrhs = np.ones(2)")
    error = failing(kernel, "solution = np.linalg.solve(wide, rhs)")
    assert error["type"] == "LinAlgError"
    text = error["explanation"]
    assert text.startswith(
        "Line 1 of this cell: `np.linalg.solve(wide, rhs)` raised LinAlgError while "
        "computing `solution`."
    )
    assert "`wide` is a (2, 3) float64 NumPy array" in text
    assert "NumPy's" in text
    # An error of plain Python, which never reached a library, stays unclaimed.
    execution = run(kernel, "ratio = 1 / 0", ok=False)
    assert checked_report(execution)["error"] is None
