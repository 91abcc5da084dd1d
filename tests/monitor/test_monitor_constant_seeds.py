"""A stateless random op with a constant seed inside a function mapped over a dataset
(issue #25, ``symptoms/constant_seeds.py``): every element gets the same random values.
Noise added with ``tf.random.stateless_normal(..., seed=(7, 3))`` in a map is told with
the fix that enumerates the dataset and seeds from the index; the fix, applied, gives
each element different noise and no note. Look-alikes stay silent: a seed built from the
element's index, a constant seed outside any map (one reproducible draw)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "tf-data"
CELL = """vectors = tf.zeros((6, 3))


def jitter_row(row):
    return row + tf.random.stateless_normal(tf.shape(row), seed=(7, 3), stddev=0.2)


noisy_rows = tf.data.Dataset.from_tensor_slices(vectors).map(jitter_row)
drawn = np.stack(list(noisy_rows.as_numpy_iterator()))
rows_alike = bool(np.allclose(drawn, drawn[:1]))
"""
FIXED = """vectors = tf.zeros((6, 3))


def jitter_row(i, row):
    return row + tf.random.stateless_normal(
        tf.shape(row), seed=tf.stack([tf.constant(7, tf.int64), i]), stddev=0.2
    )


noisy_rows = tf.data.Dataset.from_tensor_slices(vectors).enumerate().map(jitter_row)
drawn = np.stack(list(noisy_rows.as_numpy_iterator()))
rows_alike = bool(np.allclose(drawn, drawn[:1]))
"""


def seed_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "stateless" in n["text"]
    ]


def test_constant_seed_in_a_mapped_function(kernel: KernelSession) -> None:
    [text] = seed_notes(CELL, kernel)
    assert text.startswith(
        "`jitter_row`, mapped over the dataset into `noisy_rows` "
        "(`tf.data.Dataset.from_tensor_slices(vectors).map(jitter_row)`, line 8 of this cell)"
    ), text
    assert "`seed=(7, 3)` is the same for every element" in text
    assert value_of(kernel, "rows_alike") is True
    assert (
        "Fix: `.enumerate().map(jitter_row)` in place of `.map(jitter_row)`, "
        "`def jitter_row(i, row):`, and `seed=tf.stack([tf.constant(7, tf.int64), i])` in "
        "place of `seed=(7, 3)`."
    ) in text
    # The three changes, applied.
    assert seed_notes(FIXED, kernel) == []
    assert value_of(kernel, "rows_alike") is False


def test_seeds_from_the_index_and_single_draws_stay_silent(kernel: KernelSession) -> None:
    single = "once = tf.random.stateless_uniform((3,), seed=(1, 2))\n"
    assert seed_notes(single, kernel) == []
    mapped_once = """def shift(v):
    return v + 1.0


shifted = tf.data.Dataset.from_tensor_slices(tf.zeros((4, 2))).map(shift)
"""
    assert seed_notes(mapped_once, kernel) == []
