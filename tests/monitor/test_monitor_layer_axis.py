"""A per-example operation over the batch axis in a Keras layer's or model's ``call``
(issue #25, silent bugs): ``l2_normalize``/``softmax`` with ``axis=0`` there is told with
the call over the last axis; the fix runs in the kernel and gives unit rows (rows summing
to 1). The same operation over the last axis, and axis 0 outside a layer, stay silent. A
pooling layer reducing its input's last axis is told with the reduction over the items'
axes; channel pooling, kept dimensions and a pooling over axis 1 stay silent."""

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


def pooling_notes(report: dict[str, Any]) -> list[str]:
    said = "A pooling layer summarises"
    return [note["text"] for note in report["notes"] if said in note["text"]]


def pooled_fix(text: str) -> str:
    return re.findall(r"`return ([^`]+)`", text)[-1]


def test_a_pooling_layer_that_reduces_the_features(kernel: KernelSession) -> None:
    """A set pooling written over the last axis: one number per item comes out; the note
    names the class, the input's shape, and the reduction over the items' axis, which the
    test runs: one feature vector per bag."""
    run(kernel, "bags = np.random.default_rng(3).normal(size=(5, 10, 4)).astype('float32')")
    cell = """class SetMeanPooling(keras.layers.Layer):
    def call(self, items):
        return tf.reduce_mean(items, axis=-1)

summary = SetMeanPooling()(bags)
"""
    notes = pooling_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.reduce_mean(items, axis=-1)` (line 3 of this cell, in `SetMeanPooling.call`) "
        "reduces the last axis of `items`, the features: on the (5, 10, 4) input the cell "
        "gives `SetMeanPooling`, it returns (5, 10)"
    ), text
    fix = pooled_fix(text)
    assert fix == "tf.reduce_mean(items, axis=1)"
    fixed = cell.replace("tf.reduce_mean(items, axis=-1)", fix)
    assert pooling_notes(checked_report(run(kernel, fixed))) == []
    checked_report(
        run(kernel, "assert summary.shape == (5, 4)\nassert np.allclose(summary, bags.mean(1))")
    )
    # Positions of a grid, keras.ops, an instance named first: both spatial axes pooled.
    cell = """class GridMaxPool(keras.layers.Layer):
    def call(self, maps):
        maps = keras.ops.relu(maps)
        return keras.ops.max(maps, axis=-1)

grid_pool = GridMaxPool()
pooled = grid_pool(keras.random.normal((2, 6, 6, 3)))
"""
    notes = pooling_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "it returns (2, 6, 6), one number per position" in notes[0]
    fix = pooled_fix(notes[0])
    assert fix == "keras.ops.max(maps, axis=(1, 2))"
    fixed = cell.replace("keras.ops.max(maps, axis=-1)", fix)
    assert pooling_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert tuple(pooled.shape) == (2, 3)"))


def test_pooling_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, "bags = np.random.default_rng(3).normal(size=(5, 10, 4)).astype('float32')")
    cell = """class ChannelPool(keras.layers.Layer):
    def call(self, x):
        return tf.reduce_max(x, axis=-1)

class KeptPool(keras.layers.Layer):
    def call(self, x):
        return tf.reduce_max(x, axis=-1, keepdims=True)

class ItemNorms(keras.layers.Layer):
    def call(self, x):
        return tf.reduce_sum(x * x, axis=-1)

class BagPool(keras.layers.Layer):
    def call(self, x):
        return tf.reduce_max(x, axis=1)

class RowPool(keras.layers.Layer):
    def call(self, x):
        return tf.reduce_max(x, axis=-1)

outs = [ChannelPool()(bags), KeptPool()(bags), ItemNorms()(bags), BagPool()(bags)]
row_max = RowPool()(bags[:, 0, :])
"""
    assert pooling_notes(checked_report(run(kernel, cell))) == []
