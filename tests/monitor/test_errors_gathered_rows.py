"""A shape error whose operand is a gather that took whole rows (issue #25,
``errors/gathered_rows.py``): ``tf.gather(table, picks)`` with one index per row, each
below the table's columns, and no ``batch_dims=1``, then combined with a per-row value.
The entry names the gather, not an axis for the other side (which would run and weigh
every entry of the rows); the fix is the gather with ``batch_dims=1``, which runs and
gives one entry per row. Indices that reach past the columns (rows of an embedding
table) say nothing of it; as many columns as rows tell both readings, with no fix."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = (
    "ratings = tf.reshape(tf.range(15, dtype=tf.float32), (5, 3))\n"
    "clicked = np.array([2, 0, 1, 2, 0])\n"
    "dwell = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])"
)


def test_a_gather_in_a_function_is_told_and_fixed_with_batch_dims(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, SETUP)
    cell = (
        "def clicked_score(table, picks, weight):\n"
        "    picked_scores = tf.gather(table, picks)\n"
        "    return tf.reduce_sum(picked_scores * weight)\n"
        "total = clicked_score(ratings, clicked, dwell)"
    )
    text = failing(kernel, cell)["explanation"]
    assert (
        "`picked_scores` comes from `tf.gather(table, picks)` (line 2): `picks` holds one "
        "index per row of `table` (5 of them, each below its 3 columns)"
    ) in text, text
    assert "`table[i, picks[i]]`" in text
    assert "expand_dims" not in text
    fix = fix_of(text)
    assert fix == "picked_scores = tf.gather(table, picks, batch_dims=1)"
    runs_cleanly(kernel, cell.replace("picked_scores = tf.gather(table, picks)", fix))
    # ratings[i, clicked[i]] = 2, 3, 7, 11, 12, weighted by 1..5.
    assert value_of(kernel, "float(total)") == pytest.approx(2 + 6 + 21 + 44 + 60)


def test_an_inline_gather_at_the_top_level(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = "margin = tf.gather(ratings, clicked) - dwell"
    text = failing(kernel, cell)["explanation"]
    assert "`tf.gather(ratings, clicked)`: `clicked` holds one index per row" in text, text
    fix = fix_of(text)
    assert fix == "margin = tf.gather(ratings, clicked, batch_dims=1) - dwell"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "margin.numpy().tolist()") == [1.0, 1.0, 4.0, 7.0, 7.0]


def test_rows_of_a_table_and_square_tables_are_not_told_as_columns(
    kernel: KernelSession,
) -> None:
    # An embedding table gathered by ids that reach past its width: rows were meant.
    runs_cleanly(
        kernel,
        SETUP + "\n"
        "item_vecs = tf.ones((6, 4))\n"
        "basket = np.array([5, 1, 4, 0, 2, 3])\n"
        "prices = tf.ones((6,))\n"
        "rows = tf.gather(item_vecs, basket)",
    )
    text = failing(kernel, "spend = rows * prices")["explanation"]
    assert "comes from" not in text and "batch_dims" not in text
    # At least as many columns as rows: a row pick is as likely, both readings and no fix.
    runs_cleanly(
        kernel,
        "grid = tf.ones((4, 5))\npos = np.array([1, 3, 0, 2])\nrow_w = tf.ones((4,))\n"
        "sel = tf.gather(grid, pos)",
    )
    text = failing(kernel, "weighted = sel * row_w")["explanation"]
    assert "If each index is a column of its own row" in text
    assert "Fix:" not in text
    # The correct look-alike runs silently.
    runs_cleanly(kernel, "good = tf.gather(ratings, clicked, batch_dims=1) * dwell")
