"""A softmax output over several units while the learner's labels are multi-hot, told in
the cell that builds the model (``training/multilabel_heads.py``, issue #25), not only at
a later fit. The printed output layer, built and trained with binary cross-entropy, says
yes to several labels at once; a softmax head for one-hot labels and a sigmoid head for
multi-hot ones stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
from keras import layers
keras.utils.set_random_seed(2)
rng = np.random.default_rng(6)
docs = rng.normal(size=(600, 8)).astype("float32")
labels_train = (docs[:, :5] > 0.2).astype("float32")
genre_ids = docs[:, :3].argmax(1)
y_genre = np.eye(3, dtype="float32")[genre_ids]
"""
KERNEL = KernelSetup(after_load=SETUP)


def told(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "multi-hot" in n["text"]]


SEQUENTIAL = """tagger = keras.Sequential([
    keras.Input(shape=(8,)),
    layers.Dense(16, activation="relu"),
    layers.Dense(5, activation="softmax"),
])
"""


def test_softmax_head_for_multi_hot_labels_told_where_built(kernel: KernelSession) -> None:
    [text] = told(kernel, SEQUENTIAL)
    assert text.startswith("`tagger` ends with a softmax over 5 units, but `labels_train` is "), (
        text
    )
    fix = re.findall(r"`([^`]+)`", text.split("Build the model with ", 1)[1])[0]
    assert fix == 'layers.Dense(5, activation="sigmoid")'
    fixed = SEQUENTIAL.replace('layers.Dense(5, activation="softmax")', fix)
    assert told(kernel, fixed) == []
    run(
        kernel,
        'tagger.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy")\n'
        "tagger.fit(docs, labels_train, epochs=40, verbose=0)\n"
        "said = (tagger.predict(docs, verbose=0) > 0.5)\n",
    )
    # The fixed model says yes to several labels in a row, and gets most of them right.
    assert value_of(kernel, "int((said.sum(1) > 1).sum()) > 100") is True
    assert value_of(kernel, "float(np.mean(said == labels_train)) > 0.9") is True


def test_functional_head_and_tensor_labels(kernel: KernelSession) -> None:
    run(kernel, "target_tags = tf.constant(labels_train[:, :4])")
    cell = """entry = keras.Input((8,))
hidden = layers.Dense(12, activation="tanh")(entry)
scores = keras.layers.Dense(units=4, activation="softmax", name="tags")(hidden)
net = keras.Model(entry, scores)
"""
    [text] = told(kernel, cell)
    assert "`net` ends with a softmax over 4 units, but `target_tags` is multi-hot" in text
    fix = re.findall(r"`([^`]+)`", text.split("Build the model with ", 1)[1])[0]
    assert fix == 'keras.layers.Dense(units=4, activation="sigmoid", name="tags")'
    assert (
        told(
            kernel,
            cell.replace('keras.layers.Dense(units=4, activation="softmax", name="tags")', fix),
        )
        == []
    )
    # Look-alike: a softmax over 3 units with one-hot labels of that width: silent.
    onehot = """genre_model = keras.Sequential([
    keras.Input((8,)), layers.Dense(3, activation="softmax")])
"""
    assert told(kernel, onehot) == []
