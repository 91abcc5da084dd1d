"""Both parts of a ``from_tensor_slices((a, b))`` pair ragged (issue #25,
``errors/families_data.py``'s ragged lists): the fix converts every ragged part, not the
first alone (converting one, the other still raises), and a part whose rows already have
one shape is left as it is."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """gen = np.random.default_rng(3)
clips = [gen.normal(size=(n, 3)).astype("float32") for n in (4, 7, 5)]
tags = [gen.integers(0, 9, size=n) for n in (2, 1, 3)]
fixed_tags = [gen.integers(0, 9, size=2) for _ in range(3)]
words = [[4, 1], [7], [2, 2, 9]]
ratings = [[1.0, 0.5, 0.0], [2.0], [3.0, 1.0]]
"""


def test_both_ragged_parts_of_a_pair_are_converted(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "pairs = tf.data.Dataset.from_tensor_slices((clips, tags))")
    text = error["explanation"]
    assert "`clips` and `tags` each hold rows of different lengths" in text, text
    fix = fix_of(text)
    assert fix == (
        "tf.data.Dataset.from_tensor_slices((tf.ragged.constant(clips), tf.ragged.constant(tags)))"
    )
    runs_cleanly(kernel, f"pairs = {fix}\nsizes = [int(t.shape[0]) for _, t in pairs]")
    assert value_of(kernel, "sizes") == [2, 1, 3]


def test_two_ragged_lists_of_numbers_are_both_padded(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "ds = tf.data.Dataset.from_tensor_slices((words, ratings))")
    text = error["explanation"]
    assert "`words` (rows of 1, 2, 3 items) and `ratings` (rows of 1, 2, 3 items)" in text
    fix = fix_of(text)
    assert fix == (
        "tf.data.Dataset.from_tensor_slices((keras.utils.pad_sequences(words, padding='post'), "
        "keras.utils.pad_sequences(ratings, padding='post')))"
    )
    runs_cleanly(kernel, f"ds = {fix}\nfirst = [v.numpy().tolist() for v in next(iter(ds))]")
    assert value_of(kernel, "first") == [[4, 1, 0], [1, 0, 0]]


def test_a_part_of_one_shape_is_left_as_it_is(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "ds = tf.data.Dataset.from_tensor_slices((clips, fixed_tags))")
    text = error["explanation"]
    assert "`clips` holds rows of different lengths" in text, text
    assert "fixed_tags" not in text.split("Fix: ", 1)[0].split("but ", 1)[1].split(".")[0]
    fix = fix_of(text)
    assert fix == "tf.data.Dataset.from_tensor_slices((tf.ragged.constant(clips), fixed_tags))"
    runs_cleanly(kernel, f"ds = {fix}\ncount = len(list(ds))")
    assert value_of(kernel, "count") == 3
    # A rectangular pair converts: no entry.
    runs_cleanly(kernel, "ok = tf.data.Dataset.from_tensor_slices((fixed_tags, fixed_tags))")
