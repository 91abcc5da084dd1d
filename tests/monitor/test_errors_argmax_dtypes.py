"""Integer tensors of two widths where one came from ``tf.argmax`` at its default int64
(issue #25, ``errors/index_dtypes.py``): in a list op (``tf.stack``, ``tf.concat``) or a
binary op, the entry names the argmax statement and its fix asks it for int32 with
``output_type``, which then runs; a list op with no argmax behind it gets a cast of the
element in the learner's call. The same cells written right stay clean."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SCORES = """votes = tf.constant(
    [[0.1, 0.7, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.5, 0.1, 0.4]]
)
rows = tf.range(4)
truth = tf.constant([1, 0, 2, 2])
"""


def test_a_stack_of_row_numbers_and_argmax_ids(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SCORES)
    origin = "winner = tf.argmax(votes, axis=1)"
    cell = f"def coordinates():\n    {origin}\n    return tf.stack([rows, winner], axis=1)\n\n"
    cell += "places = coordinates()"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "dtype-casting"
    assert (
        "In `tf.stack([rows, winner], axis=1)`, `winner` (element 1 of the list) is int64 "
        "while `rows` (element 0) is int32."
    ) in text, text
    assert (
        f"`winner` was set by `{origin}` (line 2 of this cell): `argmax` returns int64 "
        "unless it is given `output_type`"
    ) in text
    fix = fix_of(text)
    assert fix == "winner = tf.argmax(votes, axis=1, output_type=tf.int32)"
    runs_cleanly(kernel, cell.replace(origin, fix))
    assert value_of(kernel, "places.numpy().tolist()") == [[0, 1], [1, 0], [2, 2], [3, 0]]


def test_a_comparison_with_argmax_ids_named_where_they_are_made(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SCORES)
    origin = "picked = tf.math.argmax(votes, axis=-1)"
    cell = f"{origin}\nright = picked == truth"
    text = failing(kernel, cell)["explanation"]
    assert "In `picked == truth`, `picked` is int64 while `truth` is int32." in text, text
    fix = fix_of(text)
    assert fix == "picked = tf.math.argmax(votes, axis=-1, output_type=tf.int32)"
    runs_cleanly(kernel, cell.replace(origin, fix))
    assert value_of(kernel, "right.numpy().tolist()") == [True, True, True, False]


def test_a_concat_without_argmax_casts_the_element_and_look_alikes_run(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, SCORES + "wide_ids = tf.constant([7, 8], dtype=tf.int64)\n")
    line = "joined = tf.concat([rows, wide_ids], axis=0)"
    text = failing(kernel, line)["explanation"]
    fix = fix_of(text)
    assert fix == "joined = tf.concat([tf.cast(rows, tf.int64), wide_ids], axis=0)", text
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "joined.numpy().tolist()") == [0, 1, 2, 3, 7, 8]
    # Written right: argmax asked for int32 before it meets int32 ids.
    runs_cleanly(
        kernel,
        "best = tf.argmax(votes, axis=1, output_type=tf.int32)\n"
        "grid = tf.stack([rows, best], axis=1)\nsame = best == truth",
    )
