"""A float array given where NumPy reads integer indices (``errors/families_integer_indices.py``),
and NumPy's C functions in the learner's line in general (``family_record.called_numpy``):
they leave no NumPy frame in the traceback, and their errors still get an entry naming the
line, the call and its values. The float array is named with the statement that made it
(``np.floor`` and ``np.round`` keep the float dtype); the printed fix casts it where it is
made, runs, and gives the counts NumPy's own histogram gives. Fractions or negative values
get no cast; the integer version stays silent, and plain Python errors stay unclaimed."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

AGES = """gen = np.random.default_rng(11)
ages = gen.uniform(0, 89.9, size=300)
incomes = gen.gamma(2.0, 1500.0, size=300)"""

DECADES = """def decade_totals(years, money, n_decades=9):
    decade = np.floor(years / 10)
    heads = np.bincount(decade, minlength=n_decades)
    spent = np.bincount(decade, weights=money, minlength=n_decades)
    return heads, spent

heads, spent = decade_totals(ages, incomes)"""


def test_a_rounded_array_counted_by_bincount(kernel: KernelSession) -> None:
    runs_cleanly(kernel, AGES)
    error = failing(kernel, DECADES)
    assert error["type"] == "TypeError"
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert text.startswith("Line 3 of this cell (in `decade_totals`) raised TypeError.")
    assert "`np.bincount(decade, minlength=n_decades)` reads `decade` as indices" in text
    assert "`decade` is a (300,) float64 NumPy array" in text
    assert "It was made at line 2, `decade = np.floor(years / 10)`" in text
    assert "`np.floor` rounds the values but keeps the float dtype" in text
    assert "Line 4 reads `decade` too" in text
    fix = fix_of(text)
    assert fix == "decade = np.floor(years / 10).astype(int)"
    runs_cleanly(kernel, DECADES.replace("    decade = np.floor(years / 10)", f"    {fix}"))
    expected = "np.histogram(ages, bins=np.arange(0, 100, 10))[0].tolist()"
    assert value_of(kernel, "heads.tolist()") == value_of(kernel, expected)
    assert value_of(kernel, "bool(np.isclose(spent.sum(), incomes.sum()))") is True


def test_a_rounded_array_as_an_index(kernel: KernelSession) -> None:
    runs_cleanly(kernel, AGES + "\nprice_per_band = np.array([0.0, 5.0, 7.5, 9.0])")
    cell = "band = np.round(ages / 30)\nfares = price_per_band[band]"
    error = failing(kernel, cell)
    assert error["type"] == "IndexError"
    text = error["explanation"]
    assert "`price_per_band[band]` reads `band` as indices" in text
    assert "`np.round` rounds the values" in text
    fix = fix_of(text)
    assert fix == "band = np.round(ages / 30).astype(int)"
    runs_cleanly(kernel, cell.replace("band = np.round(ages / 30)", fix))
    assert value_of(kernel, "fares.shape[0]") == 300
    assert value_of(kernel, "float(fares[np.argmin(ages)])") == 0.0


def test_a_cast_at_the_use_for_a_parameter(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "slots = np.array([2.0, 0.0, 2.0, 1.0])")
    cell = "def tally(positions):\n    return np.bincount(positions)\nseen = tally(slots)"
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix == "return np.bincount(positions.astype(int))"
    runs_cleanly(kernel, cell.replace("return np.bincount(positions)", fix))
    assert value_of(kernel, "seen.tolist()") == [1, 1, 2]


def test_fractions_or_negatives_get_no_cast(kernel: KernelSession) -> None:
    runs_cleanly(kernel, AGES)
    text = failing(kernel, "mid = np.arange(8) / 2\nkept = np.take(np.arange(40), mid)")[
        "explanation"
    ]
    assert "`/` always gives floats" in text
    assert "Its values have fractions" in text and "Fix:" not in text
    text = failing(kernel, "shifted = np.floor(ages / 10) - 3\nn = np.bincount(shifted)")[
        "explanation"
    ]
    assert "negative values" in text and "Fix:" not in text


def test_integer_indices_stay_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, AGES)
    report = checked_report(
        run(
            kernel,
            "decade = (ages // 10).astype(int)\nheads = np.bincount(decade, minlength=9)\n"
            "spent = np.bincount(decade, weights=incomes, minlength=9)\nfirst = ages[decade]",
        )
    )
    assert report["error"] is None and report["notes"] == []


def test_numpy_c_functions_get_an_entry(kernel: KernelSession) -> None:
    # np.zeros is written in C: no NumPy frame in the traceback, still an entry.
    error = failing(kernel, "half_size = 3.5\ngrid = np.zeros(half_size)")
    assert error["type"] == "TypeError"
    text = error["explanation"]
    assert text.startswith("Line 2 of this cell: `np.zeros(half_size)` raised TypeError")
    assert "`half_size` is the Python float 3.5" in text and "NumPy's" in text
    # A name error beside a NumPy call is plain Python: unclaimed.
    execution = run(kernel, "total = np.sum(ages) + not_defined_here", ok=False)
    assert checked_report(execution)["error"] is None
