"""Data scaled by statistics of every row, then split into training and test parts (issue
#25, silent bugs): the test rows leak into the numbers the training inputs are scaled by.
A TensorFlow standardisation split with ``tf.gather``, a NumPy min-max split by position
and a ``train_test_split`` of the scaled table are told with the statistics computed on
the training part; the fixes run and the training part then comes out exactly centred (or
in [0, 1]) while the test part does not. Statistics of the training part, per-example
statistics and a split made first stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(before_load="import numpy as np\nimport tensorflow as tf\n", after_load="")

DATA = """gen = np.random.default_rng(11)
readings = tf.constant(gen.normal(3.0, 2.0, size=(400, 5)), tf.float32)
sensor = gen.gamma(2.0, 3.0, size=(900, 3))
sensor[600:] += 50.0
target = gen.normal(size=900)

def train_test_split(*arrays, test_size=0.25, random_state=0):
    order = np.random.default_rng(random_state).permutation(len(arrays[0]))
    cut = int(len(order) * (1 - test_size))
    return [part for a in arrays for part in (a[order[:cut]], a[order[cut:]])]
"""


def leak_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "Split before computing statistics" in n["text"]]


def fixes_of(text: str) -> list[str]:
    tail = text.split("Split before computing statistics: ", 1)[1]
    return re.findall(r"`([^`]+)`", tail.split("training", 1)[1].split(", and scale", 1)[0])


def test_a_standardised_tensor_split_with_gather(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """centre = tf.reduce_mean(readings, axis=0)
spread = tf.math.reduce_std(readings, axis=0)
normed = (readings - centre) / spread
perm = tf.random.shuffle(tf.range(400), seed=3)
fit_ids, hold_ids = perm[:300], perm[300:]
train_feats = tf.gather(normed, fit_ids)
test_feats = tf.gather(normed, hold_ids)
"""
    notes = leak_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`centre = tf.reduce_mean(readings, axis=0)`, `spread = tf.math.reduce_std(readings, "
        "axis=0)` (lines 1, 2) compute statistics over all 400 rows of `readings`; `normed`, "
        "scaled by them (line 3), is then split into `train_feats` (`tf.gather(normed, "
        "fit_ids)`, 300 rows) and `test_feats` (`tf.gather(normed, hold_ids)`) on line 6."
    )
    assert "make `fit_ids` first" in notes[0]
    fixes = fixes_of(notes[0])
    assert fixes == [
        "centre = tf.reduce_mean(tf.gather(readings, fit_ids), axis=0)",
        "spread = tf.math.reduce_std(tf.gather(readings, fit_ids), axis=0)",
    ]
    fixed = f"""perm = tf.random.shuffle(tf.range(400), seed=3)
fit_ids, hold_ids = perm[:300], perm[300:]
{fixes[0]}
{fixes[1]}
normed = (readings - centre) / spread
train_feats = tf.gather(normed, fit_ids)
test_feats = tf.gather(normed, hold_ids)
"""
    assert leak_notes(checked_report(run(kernel, fixed))) == []
    check = """assert np.allclose(tf.reduce_mean(train_feats, axis=0).numpy(), 0.0, atol=1e-5)
assert np.allclose(tf.math.reduce_std(train_feats, axis=0).numpy(), 1.0, atol=1e-4)
"""
    checked_report(run(kernel, check))


def test_a_min_max_scaling_split_by_position(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """low = np.min(sensor, axis=0)
high = np.max(sensor, axis=0)
unit = (sensor - low) / (high - low)
x_train = unit[:600]
x_test = unit[600:]
"""
    notes = leak_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "`x_train` (`unit[:600]`, 600 rows) and `x_test` (`unit[600:]`)" in notes[0]
    fixes = fixes_of(notes[0])
    assert fixes == ["low = np.min(sensor[:600], axis=0)", "high = np.max(sensor[:600], axis=0)"]
    fixed = cell.replace("low = np.min(sensor, axis=0)", fixes[0]).replace(
        "high = np.max(sensor, axis=0)", fixes[1]
    )
    assert leak_notes(checked_report(run(kernel, fixed))) == []
    check = """assert np.allclose(x_train.min(axis=0), 0.0)
assert np.allclose(x_train.max(axis=0), 1.0)
assert (x_test.max(axis=0) > 1.0).any()
"""
    checked_report(run(kernel, check))


def test_a_scaled_table_given_to_train_test_split(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """mid = sensor.mean(axis=0)
scale = sensor.std(axis=0)
z = (sensor - mid) / scale
z_train, z_test, t_train, t_test = train_test_split(z, target, test_size=0.25, random_state=4)
"""
    notes = leak_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "`z_train` (675 rows) and `z_test` by the `train_test_split` of line 4" in notes[0]
    assert "split `sensor` first with the same `train_test_split` call" in notes[0]
    assert fixes_of(notes[0])[-2:] == [
        "mid = sensor_train.mean(axis=0)",
        "scale = sensor_train.std(axis=0)",
    ]
    fixed = """sensor_train, sensor_test, t_train, t_test = train_test_split(
    sensor, target, test_size=0.25, random_state=4)
mid = sensor_train.mean(axis=0)
scale = sensor_train.std(axis=0)
z_train, z_test = (sensor_train - mid) / scale, (sensor_test - mid) / scale
"""
    assert leak_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert np.allclose(z_train.mean(axis=0), 0.0)"))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """x_tr, x_te = sensor[:600], sensor[600:]
m_tr, s_tr = x_tr.mean(axis=0), x_tr.std(axis=0)
x_tr_n, x_te_n = (x_tr - m_tr) / s_tr, (x_te - m_tr) / s_tr
per_row = sensor - sensor.mean(axis=1, keepdims=True)
rows_train, rows_test = per_row[:600], per_row[600:]
order = np.random.default_rng(2).permutation(900)
tr, te = order[:700], order[700:]
mu = sensor[tr].mean(axis=0)
scaled = sensor - mu
s_train, s_test = scaled[tr], scaled[te]
"""
    assert leak_notes(checked_report(run(kernel, cell))) == []
