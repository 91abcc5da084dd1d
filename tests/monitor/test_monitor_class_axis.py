"""A class picked over the wrong axis, or labels in the wrong format for the pick (issue
#25, silent bugs): ``tf.argmax(probs)`` (axis 0 by default), ``np.argmax(p, axis=0)``
with as many examples as classes, one-hot labels compared with picked classes, and the
argmax of labels that are already class numbers. Found after the cell from its
expressions and the shapes its names hold; the note names the call and the shapes, and
gives the call (or the labels) rewritten in the learner's names. Each fix is run in the
kernel and gives the accuracy Keras' ``SparseCategoricalAccuracy`` gives, with no note.
Correct look-alikes stay silent: argmax over the last axis, a per-feature mean over axis
0, softmax over its default axis, the argmax of one example's probabilities, and a
square matrix's argmax over axis 0 that is not compared with labels."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "class-axis"

# Seeded: `expected > 0.5` and the shapes read depend on the classifier's initial weights
# (unseeded, about 1 run in 200 gave an accuracy of 0.5 or less).
DATA = """keras.utils.set_random_seed(11)
rng = np.random.default_rng(11)
feats = rng.normal(size=(12, 4)).astype("float32")
clf = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
probs = clf(feats)
labels = np.argmax(probs.numpy() + rng.normal(scale=0.1, size=(12, 3)), axis=-1)
meter = keras.metrics.SparseCategoricalAccuracy()
meter.update_state(labels, probs)
expected = float(meter.result())
"""


def axis_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_tf_argmax_without_axis_compared_with_labels(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """chosen = tf.argmax(probs)
score = float(tf.reduce_mean(tf.cast(chosen == labels, tf.float32)))
"""
    notes = axis_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.argmax(probs)` (line 1 of this cell) works over axis 0 (TensorFlow's default) "
        "of `probs`, a (12, 3) float32 tensor: across its 12 examples"
    )
    assert "one value per class (3 of them)" in text
    assert "`labels`, a (12,) int64 NumPy array" in text and "the accuracy is 0" in text
    assert shown(kernel, "score") == "0.0"  # the wrong number, no error
    fix = last_code(text)
    assert fix == "tf.argmax(probs, axis=-1)"
    report = checked_report(run(kernel, cell.replace("tf.argmax(probs)", fix)))
    assert axis_notes(report) == []
    assert shown(kernel, "score == expected, expected > 0.5") == "True True"


def test_as_many_examples_as_classes(kernel: KernelSession) -> None:
    """(3, 3): the shapes agree by chance; told because the result meets the labels."""
    run(kernel, DATA)
    # Written out so that the wrong axis gives a different number on every run (a
    # slice of an unseeded model's output agreed by chance once in CI).
    cell = """few = np.array([[0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.1, 0.2, 0.7]], "float32")
few_labels = np.array([0, 0, 2])
acc = np.mean(np.argmax(few, axis=0) == few_labels)
"""
    notes = axis_notes(checked_report(run(kernel, cell)))
    wrong = float(shown(kernel, "acc"))
    assert len(notes) == 1, notes
    assert "`np.argmax(few, axis=0)` (line 3 of this cell)" in notes[0]
    assert "with 3 examples and 3 classes the shapes agree by chance" in notes[0]
    fix = last_code(notes[0])
    assert fix == "np.argmax(few, axis=-1)"
    fixed = cell.replace("np.argmax(few, axis=0)", fix)
    assert axis_notes(checked_report(run(kernel, fixed))) == []
    meter = "keras.metrics.SparseCategoricalAccuracy()"
    run(kernel, f"few_meter = {meter}\nfew_meter.update_state(few_labels, few)\n")
    assert shown(kernel, "abs(acc - float(few_meter.result())) < 1e-6") == "True"
    assert wrong == pytest.approx(2 / 3)
    assert float(shown(kernel, "acc")) == 1.0


def test_one_hot_labels_against_picked_classes(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """hot = tf.one_hot(labels, 3, dtype=tf.int64)
score = float(tf.reduce_mean(tf.cast(tf.argmax(probs, axis=1) == hot, tf.float32)))
"""
    notes = axis_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`tf.argmax(probs, axis=1)` (line 2 of this cell) picks one class")
    assert "`hot`, a (12, 3) int64 tensor: one-hot labels" in text
    assert shown(kernel, "score") == "0.0"
    fix = last_code(text.rsplit(" in place of ", 1)[0])
    assert fix == "tf.argmax(hot, axis=-1)"
    fixed = cell.replace("== hot", f"== {fix}")
    assert axis_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "score == expected") == "True"


def test_argmax_of_class_number_labels(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "acc = np.mean(np.argmax(probs.numpy(), axis=1) == np.argmax(labels))\n"
    notes = axis_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`np.argmax(labels)` (line 1 of this cell) takes the argmax of")
    assert "`labels`, a (12,) int64 NumPy array" in text
    assert text.endswith("`labels` in place of `np.argmax(labels)`.")
    fixed = cell.replace("np.argmax(labels)", "labels")
    assert axis_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "abs(acc - expected) < 1e-6") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """picked = tf.argmax(probs, axis=-1)
acc = tf.reduce_mean(tf.cast(picked == labels, tf.float32))
acc_np = np.mean(np.argmax(probs.numpy(), axis=1) == labels)
feature_means = np.mean(feats, axis=0)
column_totals = tf.reduce_sum(feats, axis=0)
spread = tf.nn.softmax(feats)
first = probs.numpy()[0]
first_right = np.argmax(first) == labels[0]
confusion = np.ones((3, 3))
best_row = np.argmax(confusion, axis=0)
"""
    assert axis_notes(checked_report(run(kernel, cell))) == []


def test_tempered_softmax_over_the_examples_axis(kernel: KernelSession) -> None:
    # A temperature-scaled softmax over the batch axis of a model's scores: each column,
    # not each example's row, sums to 1.
    run(kernel, DATA)
    scores = "raw = keras.layers.Dense(5)(feats).numpy()\n"
    cell = scores + "tau = 4.0\nsoft = tf.nn.softmax(raw / tau, axis=0)"
    [text] = axis_notes(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`tf.nn.softmax(raw / tau, axis=0)` (line 3 of this cell) works over axis 0 of `raw`"
    )
    assert "spread over the 12 examples, not over the 5 classes" in text
    fix = last_code(text)
    assert fix == "tf.nn.softmax(raw / tau, axis=-1)"
    fixed = checked_report(run(kernel, f"soft = {fix}\nrows = soft.numpy().sum(axis=1)"))
    assert axis_notes(fixed) == []
    assert np_allclose_one(kernel, "rows")
    # log_softmax of a model's predicted batch, scaled by a constant: told the same way.
    logs = "out = clf.predict(feats, verbose=0)\nlsm = tf.nn.log_softmax(out * 2.0, axis=0)"
    [told] = axis_notes(checked_report(run(kernel, logs)))
    assert told.startswith("`tf.nn.log_softmax(out * 2.0, axis=0)` (line 2 of this cell)")
    assert last_code(told) == "tf.nn.log_softmax(out * 2.0, axis=-1)"
    applied = f"lsm = {last_code(told)}\nrows = np.exp(lsm.numpy()).sum(axis=1)"
    assert axis_notes(checked_report(run(kernel, applied))) == []
    assert np_allclose_one(kernel, "rows")
    # Look-alikes: the temperature softmax over the classes; one example's scores.
    assert axis_notes(checked_report(run(kernel, "ok = tf.nn.softmax(raw / tau, axis=-1)"))) == []
    one = "first = tf.nn.softmax(raw[0] / tau, axis=0)"
    assert axis_notes(checked_report(run(kernel, one))) == []


def np_allclose_one(kernel: KernelSession, name: str) -> bool:
    from tests.harness import value_of

    return bool(value_of(kernel, f"bool(np.allclose({name}, 1.0, atol=1e-5))"))


def test_keras_ops_argmax_without_axis_through_convert_to_numpy(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, "from keras import ops")
    cell = """guessed = ops.argmax(probs)
share_right = np.mean(ops.convert_to_numpy(guessed) == labels)
"""
    [text] = axis_notes(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`ops.argmax(probs)` (line 1 of this cell) has no axis: it gives one index into `probs`"
    ), text
    assert "comparing it with `labels`" in text
    fix = last_code(text)
    assert fix == "guessed = ops.argmax(probs, axis=-1)"
    fixed = cell.replace("guessed = ops.argmax(probs)", fix)
    assert axis_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "abs(share_right - expected) < 1e-6") == "True"
    # Look-alike: the flat index of a matrix's largest value, kept as one position.
    kept = "where = ops.argmax(probs)\nrow, col = np.unravel_index(int(where), probs.shape)\n"
    assert axis_notes(checked_report(run(kernel, kept))) == []
