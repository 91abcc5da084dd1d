"""``keras.metrics.Accuracy`` fed one probability per class: the fix follows the labels
(issue #25, a multi-label set's probe). Multi-hot labels (several 1s in a row) need
``BinaryAccuracy`` (``SparseCategoricalAccuracy`` raises on them), one-hot labels
``CategoricalAccuracy`` (integer class ids make Accuracy raise: the error path). Each printed fix
is run in the kernel and gives the right share; labels given to Accuracy stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
rng = np.random.default_rng(4)
tags = (rng.random((50, 5)) > 0.6).astype("int32")
tags[0] = [1, 1, 0, 0, 0]
tag_scores = rng.random((50, 5)).astype("float32")
kinds = rng.integers(0, 3, size=40)
kind_probs = tf.nn.softmax(tf.constant(rng.normal(size=(40, 3)), tf.float32))
kinds_onehot = np.eye(3, dtype="float32")[kinds]
"""
KERNEL = KernelSetup(after_load=SETUP)


def notes_of(kernel: KernelSession, cell: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, cell))
    return [note["text"] for note in report["notes"] if "keras.metrics.Accuracy" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split(" use ", 1)[1])[0]


def test_multi_hot_labels_get_binary_accuracy(kernel: KernelSession) -> None:
    cell = "tag_hits = keras.metrics.Accuracy()\ntag_hits.update_state(tags, tag_scores)\n"
    [text] = notes_of(kernel, cell)
    assert "`tags` is multi-hot" in text and "more than one 1" in text, text
    fix = fix_of(text)
    assert fix == "tag_hits = keras.metrics.BinaryAccuracy(threshold=0.5)"
    run(kernel, cell.replace("tag_hits = keras.metrics.Accuracy()", fix))
    check = "print(abs(float(tag_hits.result()) - np.mean((tag_scores > 0.5) == tags)) < 1e-6)"
    assert run(kernel, check).stdout.strip() == "True"


def test_multi_hot_tensor_labels_called_inline(kernel: KernelSession) -> None:
    cell = (
        "flags = tf.constant(tags, tf.float32)\n"
        "share = keras.metrics.Accuracy()(flags, tag_scores)\n"
    )
    [text] = notes_of(kernel, cell)
    assert "`flags` is multi-hot" in text, text
    fix = fix_of(text)
    assert fix == "keras.metrics.BinaryAccuracy(threshold=0.5)"
    run(kernel, f"share = {fix}(flags, tag_scores)")
    check = "print(abs(float(share) - np.mean((tag_scores > 0.5) == tags)) < 1e-6)"
    assert run(kernel, check).stdout.strip() == "True"


def test_one_hot_labels_get_categorical_accuracy(kernel: KernelSession) -> None:
    cell = "pick = keras.metrics.Accuracy()\npick.update_state(kinds_onehot, kind_probs)\n"
    [text] = notes_of(kernel, cell)
    assert "one-hot labels (`kinds_onehot`)" in text, text
    fix = fix_of(text)
    assert fix == "pick = keras.metrics.CategoricalAccuracy()"
    run(kernel, cell.replace("pick = keras.metrics.Accuracy()", fix))
    truth = "np.mean(np.argmax(kind_probs, 1) == kinds)"
    check = f"print(abs(float(pick.result()) - {truth}) < 1e-6)"
    assert run(kernel, check).stdout.strip() == "True"
    # Look-alike: thresholded predictions given to Accuracy are labels: silent.
    same = "same = keras.metrics.Accuracy()\nsame.update_state(tags, (tag_scores > 0.5) * 1.0)\n"
    assert notes_of(kernel, same) == []
