"""Rows of a parameter table read the NumPy way (issue "explain code it has never seen"):

- a table indexed in square brackets by a slice of an id array (``table[pairs[:, 1]]``):
  the index's shape is worked out from the array's, so the entry names it and prints the
  ``tf.gather`` that looks the rows up (``families_ops.TENSOR_INDEX``);
- a batch of rows against every row of a table (``(N, D) - (M, D)``, or two vectors of
  different lengths): no pairing row by row exists, the entry says so and, when one side
  is a variable (a table of parameters), prints the line with an axis of its own for each
  (``families_shapes.BROADCAST``); between two batches of examples, both readings are
  told and nothing is printed as the fix.

Each printed fix runs in the kernel and gives the values meant; the look-alikes written
right get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")

WORDS = """word_vectors = tf.Variable(tf.reshape(tf.range(40.0), (10, 4)))
sentence_pairs = np.array([[3, 7], [1, 2], [9, 0], [4, 4], [5, 8]], dtype=np.int64)
"""


def test_a_column_of_ids_in_brackets_is_a_gather(kernel: KernelSession) -> None:
    runs_cleanly(kernel, WORDS)
    cell = "second_words = word_vectors[sentence_pairs[:, 1]]"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "joining-indexing", text
    assert "`sentence_pairs[:, 1]` is a (5,) int64 NumPy array" in text, text
    assert "is the dtype of" not in text
    fix = fix_of(text)
    assert fix == "tf.gather(word_vectors, sentence_pairs[:, 1])"
    runs_cleanly(kernel, cell.replace("word_vectors[sentence_pairs[:, 1]]", fix))
    # Rows 7, 2, 0, 4 and 8 of the table, in that order.
    assert value_of(kernel, "second_words[:, 0].numpy().tolist()") == [28.0, 8.0, 0.0, 16.0, 32.0]
    # The look-alikes: a constant slice and a single row in brackets are fine.
    runs_cleanly(
        kernel, "some_rows = word_vectors[2:5]\none_row = word_vectors[sentence_pairs[0, 0]]"
    )


PROTOTYPES = """prototypes = tf.Variable(tf.constant([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))
queries = tf.constant([[0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [2.0, 2.0, 2.0], [0.0, 1.0, 0.0],
                       [1.0, 0.0, 0.0]])
"""


def test_a_batch_against_every_row_of_a_variable_gets_an_axis_each(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, PROTOTYPES)
    cell = "sq_gaps = tf.reduce_sum(tf.square(queries - prototypes), axis=-1)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "broadcasting", text
    assert "`queries` and `prototypes` hold different numbers of rows" in text, text
    assert "every row of `queries` with every row of `prototypes` (a (5, 2, 3) result)" in text
    fix = fix_of(text)
    assert fix == (
        "sq_gaps = tf.reduce_sum(tf.square(queries[:, None, :] - prototypes[None, :, :]), axis=-1)"
    )
    runs_cleanly(kernel, fix)
    # One squared distance per query and prototype.
    assert value_of(kernel, "sq_gaps.numpy().tolist()") == [
        [1.0, 2.0],
        [2.0, 1.0],
        [12.0, 3.0],
        [1.0, 2.0],
        [1.0, 2.0],
    ]
    # The look-alike: the pairing written with its axes, and a batch of the same rows.
    runs_cleanly(kernel, fix + "\nsame = queries[:2] - prototypes")


def test_an_expression_side_is_parenthesised_and_vectors_get_one_axis_each(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, "cutoffs = tf.Variable([0.25, 0.5, 0.75])\nodds = tf.constant([1.0, 3.0])")
    cell = "margin = odds / (1.0 + odds) - cutoffs"
    text = failing(kernel, cell)["explanation"]
    assert "hold different numbers of entrys" not in text
    fix = fix_of(text)
    assert fix == "margin = (odds / (1.0 + odds))[:, None] - cutoffs[None, :]"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "margin.numpy().tolist()") == [[0.25, 0.0, -0.25], [0.5, 0.25, 0.0]]


def test_two_batches_of_examples_get_both_readings_and_no_fix(kernel: KernelSession) -> None:
    cell = (
        "guesses = tf.zeros((6, 3))\nanswers = tf.ones((4, 3))\n"
        "mse = tf.reduce_mean(tf.square(guesses - answers))"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`guesses` and `answers` hold different numbers of rows" in text, text
    assert "if they were meant to be paired row by row, they must hold the same number" in text
    assert "Fix:" not in text
    # A reduction over the rows' axis would change meaning with a new axis: no fix either.
    cell = PROTOTYPES + "\nper_query = tf.reduce_sum(queries - prototypes, axis=1)"
    text = failing(kernel, cell)["explanation"]
    assert "every row of `queries`" in text, text
    assert "Fix:" not in text
