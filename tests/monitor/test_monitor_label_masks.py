"""A padding mask built from the labels where 0 is a real label (issue #25, silent bugs):
told in the function that builds it when the namespace holds padded inputs and labels of
their shape with 0 at real tokens; the fix tests the inputs instead, and it runs in the
kernel and keeps the class-0 tokens. Labels that use 0 only for padding, and a mask made
from the inputs, stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """words = np.array([[4, 2, 7, 0, 0], [5, 1, 1, 3, 8], [9, 9, 0, 0, 0]], "int32")
roles = np.array([[1, 0, 2, 0, 0], [0, 1, 1, 2, 0], [2, 0, 0, 0, 0]], "int32")
scores = tf.constant(np.random.default_rng(1).normal(size=(3, 5, 3)), tf.float32)
"""


def label_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "0 is a real label here" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("The padding is marked in the inputs", 1)[1])[-1]


LOSS = """def seq_cost(tokens, tags, logits):
    each = keras.losses.sparse_categorical_crossentropy(tags, logits, from_logits=True)
    keep = tf.cast(tf.not_equal(tags, 0), tf.float32)
    return tf.reduce_sum(each * keep) / tf.reduce_sum(keep)
"""


def test_a_loss_masked_by_its_labels(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = label_notes(checked_report(run(kernel, LOSS)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`tf.cast(tf.not_equal(tags, 0), tf.float32)` (line 3 of this cell, in `seq_cost`)"
    )
    assert "`roles` holds 0 at 40% of the real (non-padding) tokens of `words`" in notes[0]
    fix = fix_of(notes[0])
    assert fix == "tf.cast(tf.not_equal(tokens, 0), tf.float32)"
    fixed = LOSS.replace("tf.cast(tf.not_equal(tags, 0), tf.float32)", fix)
    assert label_notes(checked_report(run(kernel, fixed))) == []
    check = """each = keras.losses.sparse_categorical_crossentropy(roles, scores, from_logits=True)
want = float(tf.reduce_mean(tf.boolean_mask(each, words != 0)))
assert abs(float(seq_cost(words, roles, scores)) - want) < 1e-5
"""
    checked_report(run(kernel, check))


def test_an_accuracy_masked_by_its_labels(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """def tag_accuracy(ids, gold, out):
    hit = tf.cast(tf.argmax(out, -1, output_type=tf.int32) == gold, tf.float32)
    weight = tf.cast(gold > 0, tf.float32)
    return tf.reduce_sum(hit * weight) / tf.reduce_sum(weight)
"""
    notes = label_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix == "tf.cast(ids > 0, tf.float32)"
    fixed = cell.replace("tf.cast(gold > 0, tf.float32)", fix)
    assert label_notes(checked_report(run(kernel, fixed))) == []
    check = """pred = np.argmax(scores.numpy(), -1)
assert abs(float(tag_accuracy(words, roles, scores)) - (pred == roles)[words != 0].mean()) < 1e-6
"""
    checked_report(run(kernel, check))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cell = """words = np.array([[4, 2, 7, 0, 0], [5, 1, 1, 3, 8], [9, 9, 0, 0, 0]], "int32")
roles = np.array([[1, 3, 2, 0, 0], [3, 1, 1, 2, 2], [2, 3, 0, 0, 0]], "int32")
"""
    run(kernel, cell)
    assert label_notes(checked_report(run(kernel, LOSS))) == []
    run(kernel, DATA)
    assert (
        label_notes(checked_report(run(kernel, LOSS.replace("not_equal(tags", "not_equal(tokens"))))
        == []
    )
