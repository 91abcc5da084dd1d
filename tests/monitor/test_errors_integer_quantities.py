"""An integer tensor holding quantities met by a Python float (issue #25,
``errors/integer_quantities.py``): when the failing call is element-wise math and the code
computes with the values in floats on a later line, the entry makes the integer a float
where it enters (the function's first statement for a parameter, the line before for a
name of the cell) instead of writing the literal as an integer, which would move the
error to that later line. A whole literal meeting a count that stays an integer keeps
the literal fix. Every printed fix runs in the kernel."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """votes = np.array([[3, 12, 0], [7, 1, 15]], dtype=np.int32)
picks = tf.constant([[2, 0], [1, 2]])
"""

SCORE = """def boosted(points, chosen):
    capped = tf.gather(tf.minimum(points, 10.0), chosen, batch_dims=1)
    return tf.reduce_sum(1.5 ** capped - 1.0, axis=-1)
"""


def test_a_parameter_used_in_float_math_is_cast_where_it_enters(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA + SCORE)
    error = failing(kernel, "totals = boosted(votes, picks)")
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert "In `tf.minimum(points, 10.0)`, the Python float 10.0 meets `points`" in text
    assert (
        "`capped` (made from it on the failing line) meets a float again in `1.5 ** capped`" in text
    )
    assert "`tf.minimum(points, 10)`" not in text
    fix = fix_of(text)
    assert fix == "points = tf.cast(points, tf.float32)"
    assert "as the first statement of `boosted`" in text
    fixed = SCORE.replace("    capped =", f"    {fix}\n    capped =")
    runs_cleanly(kernel, fixed + "totals = boosted(votes, picks)")
    assert value_of(kernel, "[round(v, 3) for v in totals.numpy().tolist()]") == [
        round(1.5**0 - 1 + 1.5**3 - 1, 3),
        round(1.5**1 - 1 + 1.5**10 - 1, 3),
    ]


def test_a_cell_name_is_cast_on_the_line_before(kernel: KernelSession) -> None:
    cell = """stock = tf.constant([4, 0, 9])
floor = tf.maximum(stock, 1.0)
spread = floor * 0.25
"""
    text = failing(kernel, cell)["explanation"]
    assert (
        "`floor` (made from it on the failing line) meets a float again in `floor * 0.25`" in text
    )
    fix = fix_of(text)
    assert fix == "stock = tf.cast(stock, tf.float32)" and "the line before the failing one" in text
    runs_cleanly(kernel, cell.replace("floor = ", f"{fix}\nfloor = "))
    assert value_of(kernel, "spread.numpy().tolist()") == [1.0, 0.25, 2.25]


def test_a_count_that_stays_whole_keeps_the_literal_fix(kernel: KernelSession) -> None:
    cell = """def slots(taken):
    least = tf.maximum(taken, 1.0)
    return tf.range(least)

made = slots(tf.constant(3))
"""
    text = failing(kernel, cell)["explanation"]
    assert "meets a float again" not in text
    fix = fix_of(text)
    assert fix == "tf.maximum(taken, 1)"
    runs_cleanly(kernel, cell.replace("tf.maximum(taken, 1.0)", fix))
    assert value_of(kernel, "made.numpy().tolist()") == [0, 1, 2]


def test_floats_given_already_get_no_entry(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA + SCORE)
    runs_cleanly(kernel, "totals = boosted(votes.astype(np.float32), picks)")
