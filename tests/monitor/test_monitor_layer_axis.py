"""A per-example operation over the batch axis in a Keras layer's or model's ``call``
(issue #25, silent bugs): ``l2_normalize``/``softmax`` with ``axis=0`` there is told with
the call over the last axis; the fix runs in the kernel and gives unit rows (rows summing
to 1). The same operation over the last axis, and axis 0 outside a layer, stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)


def axis_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if "Keras calls `call` with a batch" in note["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("Within each example is the last axis", 1)[1])[0]


def test_an_embedding_normalised_over_the_batch(kernel: KernelSession) -> None:
    cell = """class Encoder(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.proj = keras.layers.Dense(6)

    def call(self, feats):
        return tf.nn.l2_normalize(self.proj(feats), axis=0)

enc = Encoder()
vecs = enc(np.random.default_rng(0).normal(size=(10, 4)).astype("float32"))
"""
    notes = axis_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`tf.nn.l2_normalize(self.proj(feats), axis=0)` (line 7 of this cell, in `Encoder.call`)"
    )
    fix = fix_of(notes[0])
    assert fix == "tf.nn.l2_normalize(self.proj(feats), axis=-1)"
    fixed = cell.replace("tf.nn.l2_normalize(self.proj(feats), axis=0)", fix)
    assert axis_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)"))


def test_a_softmax_over_the_batch_in_a_model(kernel: KernelSession) -> None:
    cell = """class Chooser(keras.Model):
    def __init__(self):
        super().__init__()
        self.score = keras.layers.Dense(3)

    def call(self, x):
        return keras.ops.softmax(self.score(x), 0)

probs = Chooser()(np.ones((5, 2), "float32"))
"""
    notes = axis_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix == "keras.ops.softmax(self.score(x), axis=-1)"
    fixed = cell.replace("keras.ops.softmax(self.score(x), 0)", fix)
    assert axis_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert np.allclose(np.sum(probs, axis=1), 1.0, atol=1e-5)"))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cell = """class Fine(keras.layers.Layer):
    def call(self, x):
        return tf.math.l2_normalize(x, axis=-1) + tf.nn.softmax(x, axis=1)

class Plain:
    def call(self, columns):
        return tf.math.l2_normalize(columns, axis=0)

centred = tf.math.l2_normalize(tf.ones((4, 3)), axis=0)
Fine()(tf.ones((2, 3)))
"""
    assert axis_notes(checked_report(run(kernel, cell))) == []
