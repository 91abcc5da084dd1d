"""Features and labels shuffled each on its own, then zipped (issue #25, silent bugs):
``Dataset.zip((x_ds.shuffle(n), y_ds.shuffle(n)))`` pairs rows that no longer belong
together. Found when the dataset is used (its zip's stored datasets and their chains);
the note names the learner's dataset and gives their statement with the zip first and
one shuffle after it; the test runs that fix and shows every pair matches again.
Look-alikes stay silent: zip then shuffle, the same seed on both sides, and two
shuffles of one dataset (pairs drawn at random on purpose)."""

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
# Each label is its feature row's first value times 3: a pair matches when that holds.
SOURCES = """pixels = np.arange(60, dtype="float32").reshape(30, 2)
marks = (pixels[:, 0] * 3).astype("int32")
pixel_ds = tf.data.Dataset.from_tensor_slices(pixels)
mark_ds = tf.data.Dataset.from_tensor_slices(marks)
"""
COUNT_MATCHES = (
    "matched = sum(int(f[0]) * 3 == int(m) for fb, mb in {name} for f, m in zip(fb, mb))\n"
)


def order_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def test_separately_shuffled_features_and_labels(kernel: KernelSession) -> None:
    run(kernel, SOURCES)
    cell = (
        "train_pairs = tf.data.Dataset.zip((pixel_ds.shuffle(30), mark_ds.shuffle(30))).batch(6)\n"
        + COUNT_MATCHES.format(name="train_pairs")
    )
    report = checked_report(run(kernel, cell))
    assert value_of(kernel, "matched") < 30  # the symptom: pairs mismatched
    notes = order_notes(report)
    assert len(notes) == 1, report["notes"]
    assert notes[0].startswith("`train_pairs` zips datasets that were shuffled each on its own")
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "train_pairs = tf.data.Dataset.zip((pixel_ds, mark_ds)).shuffle(30).batch(6)"
    fixed = checked_report(run(kernel, fix + "\n" + COUNT_MATCHES.format(name="train_pairs")))
    assert order_notes(fixed) == []
    assert value_of(kernel, "matched") == 30


def test_one_side_shuffled_in_an_earlier_statement(kernel: KernelSession) -> None:
    """Only the features shuffled, in their own statement, zipped with ``zip(a, b)``: the
    note tells the order in prose (no statement of the learner's to rewrite)."""
    run(kernel, SOURCES)
    cell = """mixed_pixels = pixel_ds.shuffle(30)
lopsided = tf.data.Dataset.zip(mixed_pixels, mark_ds)
for _ in lopsided:
    pass
"""
    notes = order_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`lopsided` zips datasets that were shuffled each on its own")


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SOURCES)
    cell = (
        "zipped_first = tf.data.Dataset.zip((pixel_ds, mark_ds)).shuffle(30).batch(5)\n"
        "same_seed = tf.data.Dataset.zip("
        "(pixel_ds.shuffle(30, seed=11), mark_ds.shuffle(30, seed=11))).batch(5)\n"
        "random_partners = tf.data.Dataset.zip((pixel_ds.shuffle(30), pixel_ds.shuffle(30)))\n"
        "for _ in random_partners:\n    pass\n"
        + COUNT_MATCHES.format(name="zipped_first")
        + "first_ok = matched\n"
        + COUNT_MATCHES.format(name="same_seed")
    )
    assert order_notes(checked_report(run(kernel, cell))) == []
    # Both aligned look-alikes keep every pair.
    assert value_of(kernel, "first_ok") == 30
    assert value_of(kernel, "matched") == 30


def test_numbering_shuffled_rows_stays_silent(kernel: KernelSession) -> None:
    # enumerate() zips an unshuffled counter with the rows: the index numbers the shuffled
    # order, it is not a second dataset to keep aligned. A counter zipped by hand likewise.
    run(kernel, SOURCES)
    cell = (
        "numbered = pixel_ds.shuffle(30).enumerate()\n"
        "for position, row in numbered:\n    pass\n"
        "counted = tf.data.Dataset.zip((tf.data.Dataset.range(30), mark_ds.shuffle(30)))\n"
        "for position, mark in counted:\n    pass\n"
        "last_position = int(position)\n"
    )
    assert order_notes(checked_report(run(kernel, cell))) == []
    assert value_of(kernel, "last_position") == 29


def test_pairing_shuffled_rows_with_random_seeds_stays_silent(kernel: KernelSession) -> None:
    # Dataset.random is a stream of seeds, not data to keep aligned: giving each shuffled
    # row its own seed (for stateless noise, module 8) pairs nothing that has an order.
    run(kernel, SOURCES)
    cell = (
        "seeds = tf.data.Dataset.random(seed=4, rerandomize_each_iteration=True).batch(2)\n"
        "noisy = tf.data.Dataset.zip((pixel_ds.shuffle(30), seeds)).map(\n"
        "    lambda row, seed: row + tf.random.stateless_normal([2], seed=seed)\n"
        ")\n"
        "noisy_rows = sum(1 for row in noisy)\n"
    )
    assert order_notes(checked_report(run(kernel, cell))) == []
    assert value_of(kernel, "noisy_rows") == 30
