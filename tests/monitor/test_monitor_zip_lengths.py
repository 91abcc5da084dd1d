"""A zip of datasets of different lengths (issue #25, silent bugs): ``Dataset.zip`` stops
when its shortest dataset runs out, so zipping a few labelled batches with many
unlabelled ones reads only a small part of the unlabelled data per pass. Found when the
zip is used, from the lengths its components' links store; the note names both datasets
with their lengths and gives the zip statement with the shorter one repeated, which the
test runs: a pass then covers the longer dataset. Look-alikes stay silent: equal
lengths, a side already repeated, neighbours of one source (``zip((ds, ds.skip(1)))``),
and separately shuffled sources of different lengths (random pairs on purpose)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="",
)

SECTION = "tf-data-order"
SOURCES = """rng = np.random.default_rng(3)
tagged_rows = rng.normal(size=(24, 3)).astype("float32")
tags = rng.integers(0, 2, size=24)
raw_rows = rng.normal(size=(300, 3)).astype("float32")
"""


def order_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def test_zip_of_a_short_and_a_long_dataset(kernel: KernelSession) -> None:
    run(kernel, SOURCES)
    cell = (
        "tagged = tf.data.Dataset.from_tensor_slices((tagged_rows, tags)).batch(6)\n"
        "raw = tf.data.Dataset.from_tensor_slices(raw_rows).shuffle(300).batch(30)\n"
        "both = tf.data.Dataset.zip(tagged, raw)\n"
        "passes = 0\n"
        "for (rows, labels), extra in both:\n"
        "    passes += 1\n"
    )
    report = checked_report(run(kernel, cell))
    assert value_of(kernel, "passes") == 4  # the symptom: 4 of raw's 10 batches read
    notes = order_notes(report)
    assert len(notes) == 1, report["notes"]
    assert notes[0].startswith(
        "`both` zips `tagged` (4 batches) with `raw` (10 batches): `Dataset.zip` stops"
    ), notes[0]
    assert "the other 6 of `raw` are never read" in notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "both = tf.data.Dataset.zip(tagged.repeat(), raw)"
    fixed = checked_report(run(kernel, fix + "\npasses = sum(1 for _ in both)\n"))
    assert order_notes(fixed) == []
    assert value_of(kernel, "passes") == 10  # every raw batch read once per pass


def test_zip_in_a_tuple_of_elements_taken_and_skipped(kernel: KernelSession) -> None:
    """Unbatched elements, lengths through take: the prose names both lengths."""
    run(kernel, SOURCES)
    cell = (
        "few = tf.data.Dataset.from_tensor_slices(tagged_rows).take(5)\n"
        "many = tf.data.Dataset.from_tensor_slices(raw_rows).skip(100)\n"
        "paired = tf.data.Dataset.zip((few, many))\n"
        "seen = len(list(paired))\n"
    )
    notes = order_notes(checked_report(run(kernel, cell)))
    assert value_of(kernel, "seen") == 5
    assert len(notes) == 1, notes
    assert notes[0].startswith("`paired` zips `few` (5 elements) with `many` (200 elements)")
    assert notes[0].endswith("`paired = tf.data.Dataset.zip((few.repeat(), many))`.")


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SOURCES)
    cell = (
        "tagged = tf.data.Dataset.from_tensor_slices((tagged_rows, tags)).shuffle(24)\n"
        "raw = tf.data.Dataset.from_tensor_slices(raw_rows).shuffle(300)\n"
        "cycled = tf.data.Dataset.zip((tagged.repeat().batch(6), raw.batch(30)))\n"
        "steps = sum(1 for _ in cycled)\n"
        "even = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(tagged_rows),"
        " tf.data.Dataset.from_tensor_slices(tags)))\n"
        "for _ in even:\n    pass\n"
        "ordered = tf.data.Dataset.from_tensor_slices(raw_rows)\n"
        "neighbours = tf.data.Dataset.zip((ordered, ordered.skip(1)))\n"
        "for _ in neighbours:\n    pass\n"
        "nearly = tf.data.Dataset.zip((tagged, raw.take(40)))\n"
        "for _ in nearly:\n    pass\n"
    )
    notes = order_notes(checked_report(run(kernel, cell)))
    assert notes == [], notes
    assert value_of(kernel, "steps") == 10


def test_shuffled_sources_of_different_lengths_are_not_mismatched_pairs(
    kernel: KernelSession,
) -> None:
    """A labelled set and an unlabelled one, each shuffled, zipped: no row of one belongs
    with a row of the other, so the separate-shuffles note stays quiet; only the length
    note is told."""
    run(kernel, SOURCES)
    cell = (
        "tagged = tf.data.Dataset.from_tensor_slices((tagged_rows, tags)).shuffle(24).batch(8)\n"
        "raw = tf.data.Dataset.from_tensor_slices(raw_rows).shuffle(300).batch(50)\n"
        "mixed_up = tf.data.Dataset.zip((tagged, raw))\n"
        "steps = sum(1 for _ in mixed_up)\n"
    )
    notes = order_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "shuffled each on its own" not in notes[0]
    assert notes[0].startswith("`mixed_up` zips `tagged` (3 batches) with `raw` (6 batches)")
