"""A token accuracy averaged over every position of padded sequences (issue #25, silent
bugs): the padding is read from an input array of the same shape (values then zeros, or
zeros then values, in every row); the fix counts the real tokens only, and it runs in the
kernel and gives the accuracy over real tokens. Labels where 0 is a real class, unpadded
sequences and an accuracy already masked stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """codes = np.array([[4, 2, 7, 0, 0], [5, 1, 1, 3, 8], [9, 9, 0, 0, 0]], "int32")
gold = np.array([[1, 0, 2, 0, 0], [0, 1, 1, 2, 0], [2, 0, 0, 0, 0]], "int32")
guess = np.array([[1, 0, 1, 2, 2], [0, 1, 1, 2, 0], [2, 1, 0, 1, 1]], "int32")
real_acc = (guess == gold)[codes != 0].mean()
"""


def padding_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"] for note in report["notes"] if "Count the real tokens only" in note["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("Count the real tokens only", 1)[1])[0]


def test_a_numpy_accuracy_over_post_padding(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """score = (guess == gold).mean()
print(score)
"""
    notes = padding_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "33% of them are padding (`codes` holds 0 at the end of its rows)" in notes[0]
    fix = fix_of(notes[0])
    assert fix == "(guess == gold)[codes != 0].mean()"
    fixed = cell.replace("(guess == gold).mean()", fix)
    assert padding_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert score == real_acc"))


def test_a_tensorflow_accuracy_over_pre_padding(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """front = keras.utils.pad_sequences([[3, 4, 5], [5, 6, 7, 8, 9], [1, 2]])
said = tf.constant(np.flip(guess, axis=1))
meant = tf.constant(np.flip(gold, axis=1))
hit_rate = tf.reduce_mean(tf.cast(tf.equal(said, meant), tf.float32))
"""
    notes = padding_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "(`front` holds 0 at the start of its rows)" in notes[0]
    fix = fix_of(notes[0])
    assert fix == (
        "tf.reduce_mean(tf.cast(tf.boolean_mask(tf.equal(said, meant), front != 0), tf.float32))"
    )
    fixed = cell.replace("tf.reduce_mean(tf.cast(tf.equal(said, meant), tf.float32))", fix)
    assert padding_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert abs(float(hit_rate) - real_acc) < 1e-6"))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cell = """full = np.array([[4, 2, 7], [5, 1, 1]], "int32")
tags_a = np.array([[0, 1, 0], [2, 0, 1]], "int32")
tags_b = np.array([[0, 1, 1], [2, 0, 1]], "int32")
plain = (tags_a == tags_b).mean()
"""
    assert padding_notes(checked_report(run(kernel, cell))) == []
    run(kernel, DATA)
    cell = """masked = (guess == gold)[codes != 0].mean()
per_row = np.mean(guess == gold, axis=1)
"""
    assert padding_notes(checked_report(run(kernel, cell))) == []
