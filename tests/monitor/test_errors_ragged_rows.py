"""A ragged tensor's values reshaped into equal rows (issue #25,
``errors/families_ragged_rows.py``): the entry says the rows have different lengths (the
shortest and the longest), that flattening lost where rows end, and pads with
``to_tensor()``. Each printed fix runs and keeps every row; a reshape of a ragged tensor
whose rows are equal gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_flat_values_of_uneven_rows_are_padded(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "visits = tf.ragged.constant([[3, 1, 4], [1, 5], [9, 2, 6, 5, 3]])")
    error = failing(kernel, "grid = tf.reshape(visits.flat_values, (3, -1))")
    text = error["explanation"]
    assert "its 3 rows have different lengths (from 2 to 5)" in text
    fix = fix_of(text)
    assert fix == "grid = visits.to_tensor()"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "grid.numpy().tolist()") == [
        [3, 1, 4, 0, 0],
        [1, 5, 0, 0, 0],
        [9, 2, 6, 5, 3],
    ]


def test_values_of_split_words_are_padded(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel, "words = tf.strings.split(tf.constant(['red fox', 'a very slow brown bear']))"
    )
    error = failing(kernel, "table = tf.reshape(words.values, [words.nrows(), -1])")
    text = error["explanation"]
    assert "ragged tensor `words`" in text and "(from 2 to 5)" in text
    fix = fix_of(text)
    assert fix == "table = words.to_tensor()"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "table.shape.as_list()") == [2, 5]


def test_equal_rows_reshape_without_an_entry(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "pairs = tf.ragged.constant([[1, 2], [3, 4], [5, 6]])")
    runs_cleanly(kernel, "square = tf.reshape(pairs.flat_values, (3, -1))")
