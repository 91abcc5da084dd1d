"""Operations over an axis that holds a single value (issue #25, silent bugs told by their
symptom): a softmax layer over one unit or channel of any layer kind, told where the model
is built (``training/unit_softmax_layers.py``); argmax/argmin/softmax taken in the
learner's code over a size-1 axis of an array (``symptoms/unit_axis_ops.py``); a
categorical loss compiled on a subclassed model whose returned head has one unit
(``loss_agreement.returned_layer``). Each printed fix runs in the kernel and makes the
result right; look-alikes (several units, a sigmoid, a threshold, a binary loss) stay
silent.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
from keras import layers
keras.utils.set_random_seed(3)
frames = np.random.default_rng(0).random((12, 8, 8, 3)).astype("float32")
codes = np.random.default_rng(1).integers(1, 40, (16, 9))
"""
KERNEL = KernelSetup(after_load=SETUP)


def note_texts(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"]]


def notes_of(kernel: KernelSession, cell: str) -> list[str]:
    return note_texts(checked_report(run(kernel, cell)))


def fix_of(text: str, lead: str) -> str:
    return re.findall(r"`([^`]+)`", text.split(lead, 1)[1])[0]


BUILDER = """def make_segmenter(width):
    inputs = keras.Input((8, 8, 3))
    hidden = layers.Conv2D(width, 3, padding="same", activation="relu")(inputs)
    mask = layers.Conv2D(1, 1, activation="softmax")(hidden)
    return keras.Model(inputs, mask)

segmenter = make_segmenter(4)
"""


def test_a_convolution_with_softmax_over_one_channel(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, BUILDER)
    assert text.startswith(
        '`segmenter` has `layers.Conv2D(1, 1, activation="softmax")` (line 4 of this cell, '
        "in `make_segmenter`)"
    ), text
    assert "every output of this Conv2D is exactly 1.0 whatever the input" in text
    fixed_layer = fix_of(text, "For one yes/no output")
    assert fixed_layer == 'layers.Conv2D(1, 1, activation="sigmoid")'
    fixed = BUILDER.replace('layers.Conv2D(1, 1, activation="softmax")', fixed_layer)
    assert notes_of(kernel, fixed) == []
    # Fixed, the masks depend on the input (before, every value was 1.0).
    out = run(kernel, "m = segmenter.predict(frames, verbose=0); print(m.min() < m.max() < 1.0)")
    assert out.stdout.strip() == "True"


def test_a_sequential_softmax_layer_after_one_unit(kernel: KernelSession) -> None:
    cell = "scorer = keras.Sequential([keras.Input((5,)), layers.Dense(1), layers.Softmax()])\n"
    [text] = notes_of(kernel, cell)
    assert text.startswith("`scorer` has a Softmax layer applying softmax to a single unit")
    # Look-alikes: softmax over several units, a one-unit sigmoid.
    several = (
        "ranker = keras.Sequential([keras.Input((5,)), layers.Dense(3, activation='softmax')])"
    )
    assert notes_of(kernel, several) == []
    binary = "yesno = keras.Sequential([keras.Input((5,)), layers.Dense(1, activation='sigmoid')])"
    assert notes_of(kernel, binary) == []


def test_argmax_over_a_single_probability_column(kernel: KernelSession) -> None:
    cell = """chance = np.random.default_rng(4).random((30, 1)).astype("float32")
picked = np.argmax(chance, axis=1)
"""
    [text] = notes_of(kernel, cell)
    assert text.startswith("`np.argmax(chance, axis=1)` (line 2 of this cell) picks the largest")
    assert "`chance` is (30, 1): axis 1 holds a single value, so `picked` is 0 everywhere" in text
    fix = fix_of(text, "Threshold the probability in place of that call:")
    assert fix == 'picked = (chance[..., 0] > 0.5).astype("int64")'
    run(kernel, cell.replace("picked = np.argmax(chance, axis=1)", fix))
    out = run(kernel, "print(0 < picked.sum() < 30, picked.shape)")
    assert out.stdout.strip() == "True (30,)"


def test_tensorflow_softmax_and_argmax_on_one_score(kernel: KernelSession) -> None:
    cell = """margin = tf.random.normal((10, 1))
share = tf.nn.softmax(margin)
"""
    [text] = notes_of(kernel, cell)
    assert "`share` is 1.0 everywhere" in text
    fix = fix_of(text, "Use ")
    assert fix == "share = tf.math.sigmoid(margin)"
    run(kernel, fix)
    assert run(kernel, "print(bool(tf.reduce_all(share < 1.0)))").stdout.strip() == "True"
    [text] = notes_of(kernel, "label = tf.argmax(margin, axis=-1)")
    assert "`label` is 0 everywhere" in text
    assert (
        fix_of(text, "in place of that call:") == "label = tf.cast(margin[..., 0] > 0.5, tf.int64)"
    )


def test_look_alikes_of_operations_over_one_value(kernel: KernelSession) -> None:
    cell = """grades = np.random.default_rng(5).random((20, 4))
best = np.argmax(grades, axis=-1)
flat = np.argmax(np.random.default_rng(6).random((20, 1)))
soft = tf.nn.softmax(tf.random.normal((6, 3)))
first = tf.argmax(tf.random.normal((4, 1)), axis=0)
"""
    assert notes_of(kernel, cell) == []


SUBCLASSED = """class Reviewer(keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = layers.Embedding(40, 8)
        self.pool = layers.GlobalAveragePooling1D()
        self.verdict = layers.Dense(1, activation="sigmoid")

    def call(self, ids):
        return self.verdict(self.pool(self.embed(ids)))

reviewer = Reviewer()
reviewer(codes[:2])
"""


def test_a_categorical_loss_on_a_subclassed_one_unit_head(kernel: KernelSession) -> None:
    assert notes_of(kernel, SUBCLASSED) == []
    cell = "reviewer.compile(optimizer='adam', loss=keras.losses.CategoricalCrossentropy())"
    [text] = notes_of(kernel, cell)
    assert '`layers.Dense(1, activation="sigmoid")`' in text
    assert "the loss is 0.0 whatever the model predicts" in text
    fix = fix_of(text, "use binary cross-entropy:")
    assert fix == "reviewer.compile(optimizer='adam', loss=keras.losses.BinaryCrossentropy())"
    assert notes_of(kernel, fix) == []
    fit = """stars = np.random.default_rng(2).integers(0, 2, 16).astype("float32")
h = reviewer.fit(codes, stars, epochs=1, verbose=0)
print(h.history["loss"][-1] > 0.1)"""
    assert run(kernel, fit).stdout.strip() == "True"


SIGNATURE = """@tf.function(input_signature=[tf.TensorSpec((None, 6), tf.float32)])
def serve_scores(rows):
    return {"chance": tf.sigmoid(tf.reduce_sum(rows, axis=1, keepdims=True) - 3.0),
            "margin": tf.reduce_sum(rows, axis=1, keepdims=True)}

readings = np.random.default_rng(8).random((40, 6)).astype("float32")
answers = serve_scores(tf.constant(readings))
"""


def test_argmax_over_one_column_of_a_served_output(kernel: KernelSession) -> None:
    assert notes_of(kernel, SIGNATURE) == []
    cell = 'verdicts = tf.argmax(answers["chance"], axis=1)\n'
    [text] = notes_of(kernel, cell)
    assert text.startswith('`tf.argmax(answers["chance"], axis=1)` (line 1 of this cell)')
    assert '`answers["chance"]` is (40, 1): axis 1 holds a single value' in text
    assert "so `verdicts` is 0 everywhere" in text
    fix = fix_of(text, "Threshold the probability in place of that call:")
    assert fix == 'verdicts = tf.cast(answers["chance"][..., 0] > 0.5, tf.int64)'
    assert notes_of(kernel, fix) == []
    out = run(kernel, "print(0 < int(tf.reduce_sum(verdicts)) < 40, verdicts.shape)")
    assert out.stdout.strip() == "True (40,)"
    # Through .numpy() with Keras ops, the same.
    cell = 'picks = keras.ops.argmax(answers["margin"].numpy(), axis=-1)\n'
    [text] = notes_of(kernel, cell)
    assert '`answers["margin"].numpy()` is (40, 1)' in text
