"""tf.data pipelines in an order that silently changes training (issue #25): shuffling
whole batches (``.batch(n).shuffle(k)``), caching a shuffled order (``.shuffle(k).cache()``),
a shuffle buffer of 1, and ``take``/``skip`` splits of a dataset that reshuffles every
pass. Each note names the learner's dataset and gives their statement fixed; the test
runs that fix in the kernel and shows the symptom gone. Correct orders stay silent."""

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
# 90 readings of 3 sensors, sorted by machine state (30 rows of each of 3 states).
READINGS = """readings = np.random.default_rng(3).normal(size=(90, 3)).astype("float32")
states = np.repeat(np.arange(3), 30).astype("int32")
"""


def order_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_batches_shuffled_whole_in_fit(kernel: KernelSession) -> None:
    run(kernel, READINGS)
    cell = (
        "sensor_ds = tf.data.Dataset.from_tensor_slices((readings, states)).batch(15).shuffle(4)\n"
        + """gauge = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3)])
gauge.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
gauge.fit(sensor_ds, epochs=2, verbose=0)
kinds = [len(set(s.numpy().tolist())) for _, s in sensor_ds]
"""
    )
    report = checked_report(run(kernel, cell))
    assert value_of(kernel, "kinds") == [1] * 6  # the symptom: one state per batch
    notes = order_notes(report)
    assert len(notes) == 1, report["notes"]
    text = notes[0]
    assert text.startswith(
        "`sensor_ds` shuffles after it batches (`.batch(15).shuffle(4)`): shuffle then "
        "reorders whole batches, and each batch still holds 15 consecutive rows"
    )
    fix = last_code(text)
    assert fix == (
        "sensor_ds = tf.data.Dataset.from_tensor_slices((readings, states)).shuffle(90).batch(15)"
    )
    fixed = run(kernel, cell.replace(cell.splitlines()[0], fix))
    assert order_notes(checked_report(fixed)) == []
    assert min(value_of(kernel, "kinds")) >= 2  # every batch now mixes states


def test_cache_after_shuffle_replays_one_order(kernel: KernelSession) -> None:
    run(kernel, READINGS)
    cell = """frozen_order = (tf.data.Dataset.from_tensor_slices((readings, states))
                .shuffle(90)
                .cache())
orders = []
for epoch in range(3):
    orders.append([round(float(r[0]), 4) for r, _ in frozen_order])
distinct = len({tuple(o) for o in orders})
"""
    report = checked_report(run(kernel, cell))
    assert value_of(kernel, "distinct") == 1  # the symptom: every epoch, the same order
    notes = order_notes(report)
    assert len(notes) == 1, report["notes"]
    assert notes[0].startswith(
        "`frozen_order` caches after it shuffles (`.shuffle(90).cache()`): the cache keeps"
    )
    fix = last_code(notes[0])
    assert fix == (
        "frozen_order = tf.data.Dataset.from_tensor_slices((readings, states)).cache().shuffle(90)"
    )
    statement = cell[: cell.index("orders = []")]
    fixed = run(kernel, cell.replace(statement, fix + "\n"))
    assert order_notes(checked_report(fixed)) == []
    assert value_of(kernel, "distinct") == 3


def test_shuffle_buffer_of_one(kernel: KernelSession) -> None:
    run(kernel, READINGS)
    # Iterated through a temporary (`mixed.take(3)`), gone by the end of the cell.
    cell = """mixed = tf.data.Dataset.from_tensor_slices((readings, states)).shuffle(1).batch(30)
first_states = [int(s[0]) for _, s in mixed.take(3)]
"""
    report = checked_report(run(kernel, cell))
    assert value_of(kernel, "first_states") == [0, 1, 2]  # the rows in their original order
    notes = order_notes(report)
    assert len(notes) == 1, report["notes"]
    assert notes[0].startswith("`mixed` shuffles with a buffer of 1 (`.shuffle(1)`)")
    fix = last_code(notes[0])
    assert (
        fix
        == "mixed = tf.data.Dataset.from_tensor_slices((readings, states)).shuffle(90).batch(30)"
    )
    fixed = cell.replace(cell.splitlines()[0], fix) + (
        "batch_kinds = [len(set(s.numpy().tolist())) for _, s in mixed]\n"
    )
    assert order_notes(checked_report(run(kernel, fixed))) == []
    assert min(value_of(kernel, "batch_kinds")) >= 2


def test_small_shuffle_buffer_over_sorted_labels(kernel: KernelSession) -> None:
    # Text labels stored in runs (30 rows of each machine state), a buffer of 8 rows,
    # and a training loop that iterates the dataset itself (not fit).
    run(kernel, READINGS + 'modes = np.array(["idle", "run", "fault"])[states]\n')
    cell = (
        "drift_ds = tf.data.Dataset.from_tensor_slices((readings, modes))"
        ".shuffle(8, seed=5).batch(10)\n"
        "per_batch = [len(set(s.numpy().tolist())) for _, s in drift_ds]\n"
    )
    report = checked_report(run(kernel, cell))
    # The symptom: the first batch, and about half of them, hold a single state.
    per_batch = value_of(kernel, "per_batch")
    assert per_batch[0] == 1 and sum(k == 1 for k in per_batch) >= 4
    notes = order_notes(report)
    assert len(notes) == 1, report["notes"]
    text = notes[0]
    assert text.startswith(
        "`drift_ds` shuffles 90 rows whose labels are stored sorted (3 labels, each in one "
        "run of 30 rows or more) with a buffer of 8 (`.shuffle(8)`)"
    ), text
    fix = last_code(text)
    assert fix == (
        "drift_ds = tf.data.Dataset.from_tensor_slices((readings, modes))"
        ".shuffle(90, seed=5).batch(10)"
    )
    fixed = cell.replace(cell.splitlines()[0], fix)
    assert order_notes(checked_report(run(kernel, fixed))) == []
    assert min(value_of(kernel, "per_batch")) >= 2
    # Look-alikes: the same small buffer over labels already mixed, and over an index
    # whose values never repeat, stay quiet.
    mixed = """order = np.random.default_rng(1).permutation(90)
mixed_ds = tf.data.Dataset.from_tensor_slices((readings[order], states[order])).shuffle(8).batch(10)
for _ in mixed_ds:
    pass
ids_ds = tf.data.Dataset.from_tensor_slices(np.arange(90)).shuffle(8).batch(10)
for _ in ids_ds:
    pass
"""
    assert order_notes(checked_report(run(kernel, mixed))) == []


def test_small_shuffle_buffer_over_sorted_one_hot_rows(kernel: KernelSession) -> None:
    # One-hot rows stored by class (the 1's column in runs of 30), a buffer of 12 and a
    # map after the batch; the dataset is only read with next(iter(...)).
    run(kernel, READINGS + 'state_rows = np.eye(3, dtype="float32")[states]\n')
    cell = (
        "noisy_ds = tf.data.Dataset.from_tensor_slices((readings, state_rows))"
        ".shuffle(buffer_size=12).batch(10).map(lambda r, s: (r + 0.01, s))\n"
        "first_rows = next(iter(noisy_ds))[1].numpy()\n"
    )
    report = checked_report(run(kernel, cell))
    notes = order_notes(report)
    assert len(notes) == 1, report["notes"]
    text = notes[0]
    assert text.startswith(
        "`noisy_ds` shuffles 90 rows whose labels are stored sorted (3 labels, each in one "
        "run of 30 rows or more) with a buffer of 12 (`.shuffle(12)`)"
    ), text
    fix = last_code(text)
    assert fix == (
        "noisy_ds = tf.data.Dataset.from_tensor_slices((readings, state_rows))"
        ".shuffle(90).batch(10).map(lambda r, s: (r + 0.01, s))"
    )
    fixed = cell.replace(cell.splitlines()[0], fix)
    assert order_notes(checked_report(run(kernel, fixed))) == []
    per_batch = "[len(set(s.numpy().argmax(1).tolist())) for _, s in noisy_ds]"
    assert min(value_of(kernel, per_batch)) >= 2
    # Look-alike: the same buffer over one-hot rows already mixed stays quiet.
    mixed = """order = np.random.default_rng(2).permutation(90)
mixed_rows_ds = tf.data.Dataset.from_tensor_slices((readings[order], state_rows[order]))
mixed_rows_ds = mixed_rows_ds.shuffle(12).batch(10)
first_mixed = next(iter(mixed_rows_ds))
"""
    assert order_notes(checked_report(run(kernel, mixed))) == []


def test_take_skip_split_of_a_reshuffling_dataset(kernel: KernelSession) -> None:
    run(kernel, READINGS + "row_index = np.arange(90)\n")
    cell = """pool = tf.data.Dataset.from_tensor_slices((readings, row_index)).shuffle(90)
fit_rows = pool.take(70)
check_rows = pool.skip(70)
seen_fit = {int(i) for _, i in fit_rows}
seen_check = {int(i) for _, i in check_rows}
shared = len(seen_fit & seen_check)
"""
    report = checked_report(run(kernel, cell))
    assert value_of(kernel, "shared") > 0  # the symptom: rows in both splits
    notes = order_notes(report)
    assert len(notes) == 1, report["notes"]
    assert notes[0].startswith(
        "`fit_rows` and `check_rows` split `pool` with `.take()`/`.skip()`, but its "
        "`.shuffle()` reshuffles on every pass"
    )
    fix = last_code(notes[0])
    assert fix == (
        "pool = tf.data.Dataset.from_tensor_slices((readings, row_index))"
        ".shuffle(90, reshuffle_each_iteration=False)"
    )
    fixed = run(kernel, cell.replace(cell.splitlines()[0], fix))
    assert order_notes(checked_report(fixed)) == []
    assert value_of(kernel, "shared") == 0
    assert value_of(kernel, "len(seen_fit | seen_check)") == 90


def test_correct_orders_stay_silent(kernel: KernelSession, tmp_path: Any) -> None:
    run(kernel, READINGS)
    files = [str(tmp_path / f"part{i}.txt") for i in range(3)]
    for i, path in enumerate(files):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(str(i * 10 + j) for j in range(10)))
    cell = f"""shards = tf.data.Dataset.from_tensor_slices({files!r}).shuffle(3)
lines = shards.interleave(tf.data.TextLineDataset, cycle_length=2).batch(4)
good = tf.data.Dataset.from_tensor_slices((readings, states)).shuffle(90).batch(15).prefetch(2)
cached = tf.data.Dataset.from_tensor_slices((readings, states)).cache().shuffle(90).batch(15)
twice = tf.data.Dataset.from_tensor_slices((readings, states)).shuffle(90).batch(15).shuffle(3)
fixed = tf.data.Dataset.from_tensor_slices(readings).shuffle(90, reshuffle_each_iteration=False)
part_a, part_b = fixed.take(60), fixed.skip(60)
peek = tf.data.Dataset.from_tensor_slices(readings).shuffle(90).take(5)
for ds in (lines, good, cached, twice, part_a, part_b, peek):
    for _ in ds:
        pass
gauge2 = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3)])
gauge2.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
gauge2.fit(good, epochs=1, verbose=0)
"""
    assert order_notes(checked_report(run(kernel, cell))) == []
