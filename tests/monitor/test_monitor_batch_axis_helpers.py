"""A normalisation over axis 0 of a batch in a loss called in the cell or in a layer's
helper method (issue #25, silent bugs): it normalises across the examples. Told from the
cell's code; the printed fix (``axis=-1``) is run in the kernel and gives the per-example
result (Keras's own cross-entropy; rows of length 1), with no note. Look-alikes stay
silent: a softmax over a parameter vector, a log-softmax over axis 0 of a similarity
matrix of two batches."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "class-axis"

LOSS = """gen = np.random.default_rng(8)
scores = tf.constant(gen.normal(size=(6, 4)).astype("float32"))
onehots = tf.one_hot(gen.integers(0, 4, 6), 4)

def contrast_nll(targets, logits_out):
    log_p = tf.nn.log_softmax(logits_out, axis=0)
    return -tf.reduce_mean(tf.reduce_sum(targets * log_p, axis=-1))

value = float(contrast_nll(onehots, scores))
"""
LOSS_CALL = "tf.nn.log_softmax(logits_out, axis=0)"

LAYER = """class Embedder(keras.layers.Layer):
    def __init__(self, width, **kwargs):
        super().__init__(**kwargs)
        self.proj = keras.layers.Dense(width)

    def unit_rows(self, h):
        return tf.math.l2_normalize(self.proj(h), axis=0)

    def call(self, inputs):
        return self.unit_rows(inputs)

emb = Embedder(5)
vecs = emb(tf.random.normal((7, 3)))
"""
LAYER_CALL = "tf.math.l2_normalize(self.proj(h), axis=0)"


def axis_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "works over axis 0" in n["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_a_loss_normalising_over_the_batch(kernel: KernelSession) -> None:
    notes = axis_notes(checked_report(run(kernel, LOSS)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(f"`{LOSS_CALL}` (line 6 of this cell, in `contrast_nll`)")
    fix = codes(notes[0])[-1]
    assert fix == "tf.nn.log_softmax(logits_out, axis=-1)"
    assert axis_notes(checked_report(run(kernel, LOSS.replace(LOSS_CALL, fix)))) == []
    keras_value = "float(keras.losses.CategoricalCrossentropy(from_logits=True)(onehots, scores))"
    assert shown(kernel, f"abs(value - {keras_value}) < 1e-5") == "True"


def test_a_layer_helper_normalising_over_the_batch(kernel: KernelSession) -> None:
    notes = axis_notes(checked_report(run(kernel, LAYER)))
    assert len(notes) == 1, notes
    assert "(line 7 of this cell, in `Embedder.unit_rows`, which `Embedder.call`" in notes[0]
    fix = codes(notes[0])[-1]
    assert fix == "tf.math.l2_normalize(self.proj(h), axis=-1)"
    assert axis_notes(checked_report(run(kernel, LAYER.replace(LAYER_CALL, fix)))) == []
    assert shown(kernel, "np.allclose(tf.norm(vecs, axis=-1).numpy(), 1.0, atol=1e-5)") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    mixture = """class Blend(keras.layers.Layer):
    def build(self, shape):
        self.mix_logits = self.add_weight(shape=(3,), initializer="zeros")

    def mix_weights(self):
        return tf.nn.softmax(self.mix_logits, axis=0)

    def call(self, parts):
        return tf.reduce_sum(parts * self.mix_weights(), axis=-1)

blend = Blend()
mixed = blend(tf.random.normal((4, 3)))
"""
    assert axis_notes(checked_report(run(kernel, mixture))) == []
    symmetric = """def clip_style(text_emb, image_pred):
    sims = image_pred @ tf.transpose(text_emb)
    return -tf.reduce_mean(tf.linalg.diag_part(tf.nn.log_softmax(sims, axis=0)))

sym = float(clip_style(tf.random.normal((5, 8)), tf.random.normal((5, 8))))
"""
    assert axis_notes(checked_report(run(kernel, symmetric))) == []
