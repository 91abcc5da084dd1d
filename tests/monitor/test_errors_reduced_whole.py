"""A statistic taken over every axis where one axis was meant (issue #25,
``errors/families_reduced_whole.py``): the error comes a line later, where the single
number is asked for an axis; the entry reads back to the reduction's assignment, names
what it reduced, and (for a list of arrays) its fix, the list's axis, makes the cell run.
The same reduction over one axis is quiet, and an axis error on an array no reduction made
is not claimed by this family."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

MEMBERS = """rng = np.random.default_rng(11)
member_scores = [rng.random((30, 4)).astype("float32") for _ in range(5)]
truth = rng.integers(0, 4, size=30)
"""


def test_a_mean_of_a_list_with_no_axis_is_named_where_it_was_taken(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, MEMBERS)
    reduction = "mean_scores = np.mean(member_scores)"
    cell = f"{reduction}\nvoted = np.argmax(mean_scores, axis=1)\nprint((voted == truth).mean())"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "class-axis"
    assert f"`mean_scores` was set by `{reduction}` (line 1 of this cell)" in text
    assert "`np.mean` reduces over every axis of `member_scores`" in text
    assert "a list of 5 (30, 4) float32 NumPy arrays" in text
    assert "so `mean_scores` is one number, with no axis 1" in text
    fix = fix_of(text)
    assert fix == "mean_scores = np.mean(member_scores, axis=0)"
    runs_cleanly(kernel, cell.replace(reduction, fix))
    assert value_of(kernel, "list(voted.shape)") == [30]


def test_a_reduction_made_in_an_earlier_cell_and_tensorflows_refusal(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, MEMBERS)
    runs_cleanly(kernel, "summed = tf.reduce_sum(member_scores)")
    error = failing(kernel, "tf.argmax(summed, axis=1)")
    text = error["explanation"]
    assert "`summed` was set by `summed = tf.reduce_sum(member_scores)` (cell In[" in text
    fix = fix_of(text)
    assert fix == "summed = tf.reduce_sum(member_scores, axis=0)"
    runs_cleanly(kernel, fix + "\nvotes = tf.argmax(summed, axis=1)")
    assert value_of(kernel, "votes.shape.as_list()") == [30]


def test_an_array_reduced_whole_is_named_without_a_guessed_axis(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "cube = np.ones((6, 8, 3))\ncentre = cube.mean()")
    text = failing(kernel, "np.argmax(centre, axis=1)")["explanation"]
    assert "`centre` was set by `centre = cube.mean()`" in text
    assert "pick the axis of `cube` to reduce" in text
    assert "Fix: " not in text


def test_look_alikes_are_not_claimed(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MEMBERS)
    # The reduction over the members' axis: quiet.
    runs_cleanly(kernel, "ok_scores = np.mean(member_scores, axis=0)\nnp.argmax(ok_scores, axis=1)")
    # A vector asked for axis 1, no reduction involved: not this family's.
    execution_text = failing_text(kernel, "flat = np.arange(6.0)\nnp.argmax(flat, axis=1)")
    assert "reduces over every axis" not in execution_text


def failing_text(kernel: KernelSession, cell: str) -> str:
    """The cell's error entry text, or "" when the report has no error entry."""
    from tests.harness import checked_report, run

    execution = run(kernel, cell, ok=False)
    assert execution.reply["status"] == "error"
    error = checked_report(execution)["error"]
    return error["explanation"] if error else ""
