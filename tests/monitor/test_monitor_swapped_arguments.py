"""A Keras loss or metric given the model's outputs first and the labels second (issue
#25, silent bugs): ``loss_fn(probs, y_hot)``, ``acc.update_state(probs, y)``,
``keras.losses.BinaryCrossentropy()(p, yb)`` raise nothing and give a wrong number. Found
after the cell from the values the two arguments hold (outputs with fractions, labels
that are whole numbers), not from their names; the note names the call, both values and
what the number means now, and gives the call with the labels first. Each fix is run in
the kernel and gives Keras's own number for the right order, with no note. Correct
look-alikes stay silent: the right order, a symmetric loss (mse), two float arguments."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "labels-and-loss"

DATA = """rng = np.random.default_rng(3)
feats = rng.normal(size=(48, 5)).astype("float32")
classes = rng.integers(0, 3, size=(48,))
hot = tf.one_hot(classes, 3)
clf = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3, activation="softmax")])
criterion = keras.losses.CategoricalCrossentropy()
meter = keras.metrics.SparseCategoricalAccuracy()
"""


def swap_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
        and "the wrong way round" in note["text"]
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_loss_object_given_outputs_then_one_hot_labels(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "scores = clf(feats)\nlossval = criterion(scores, hot)\n"
    notes = swap_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`criterion(scores, hot)` (line 2 of this cell) gives the loss "
        "`CategoricalCrossentropy` its arguments the wrong way round"
    )
    assert "`scores`, a (48, 3) float32 tensor with values from" in text
    assert "`hot`, a (48, 3) float32 tensor, holds one-hot rows" in text
    assert "clipped to 1e-7" in text
    assert "about 16 (-log 1e-7) times the share of `scores` on the wrong answers" in text
    # What the number is now, as the note says: -log(1e-7) times the wrong answers' share.
    share = "float(tf.reduce_mean(tf.reduce_sum(scores * (1 - hot), axis=-1)))"
    assert shown(kernel, f"abs(float(lossval) / ({share} * -np.log(1e-7)) - 1) < 1e-3") == "True"
    fix = last_code(text)
    assert fix == "criterion(hot, scores)"
    fixed = checked_report(run(kernel, f"lossval = {fix}\n"))
    assert swap_notes(fixed) == []
    expected = "float(tf.reduce_mean(keras.losses.categorical_crossentropy(hot, scores)))"
    assert shown(kernel, f"abs(float(lossval) - {expected}) < 1e-6") == "True"


def test_metric_update_state_given_outputs_then_class_numbers(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, "scores = clf(feats)\n")
    notes = swap_notes(checked_report(run(kernel, "meter.update_state(scores, classes)\n")))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`meter.update_state(scores, classes)` (line 1 of this cell) gives the metric "
        "`SparseCategoricalAccuracy`"
    )
    assert "`classes`, a (48,) int64 NumPy array, holds class numbers" in text
    right = "float(np.mean(np.argmax(scores.numpy(), axis=-1) == classes))"
    assert 0.0 < float(shown(kernel, right)) < 1.0
    # Swapped, the labels are compared as predictions: all or nothing, no error.
    assert shown(kernel, "float(meter.result())") in ("0.0", "1.0")
    run(kernel, "meter.reset_state()\n")
    fix = last_code(text)
    assert fix == "meter.update_state(classes, scores)"
    assert swap_notes(checked_report(run(kernel, fix + "\n"))) == []
    assert shown(kernel, f"abs(float(meter.result()) - {right}) < 1e-6") == "True"


def test_a_loss_built_in_the_call_and_a_loss_function(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, "probs = clf(feats)[:, :1]\nyes = (classes[:, None] == 1).astype('float32')\n")
    built = "keras.losses.BinaryCrossentropy()(probs, yes)"
    notes = swap_notes(checked_report(run(kernel, f"bce_val = {built}\n")))
    assert len(notes) == 1 and "holds 0/1 labels" in notes[0], notes
    fix = last_code(notes[0])
    assert fix == "keras.losses.BinaryCrossentropy()(yes, probs)"
    assert swap_notes(checked_report(run(kernel, f"bce_val = {fix}\n"))) == []
    as_function = "keras.losses.binary_crossentropy(probs, yes)"
    notes = swap_notes(checked_report(run(kernel, f"per_example = {as_function}\n")))
    assert len(notes) == 1 and last_code(notes[0]) == (
        "keras.losses.binary_crossentropy(yes, probs)"
    )
    expected = "float(tf.reduce_mean(keras.losses.binary_crossentropy(yes, probs)))"
    assert shown(kernel, f"abs(float(bce_val) - {expected}) < 1e-6") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, "probs = clf(feats)[:, :1]\nyes = (classes[:, None] == 1).astype('float32')\n")
    for cell in (
        "squared = keras.losses.mean_squared_error(probs, yes)\n",  # symmetric
        "soft = criterion(clf(feats), clf(feats * 2))\n",  # two float outputs
        "meter.update_state(classes, clf(feats))\n",  # right order
        "kept = criterion(hot, clf(feats))\n",
    ):
        assert swap_notes(checked_report(run(kernel, cell))) == [], cell
