"""A tf.data pipeline never batched, fed to ``fit`` of a model whose own ``train_step``
(or ``call``) hands each element to a sub-model: Keras reports the refused shape on the
learner's inner line, but the cause is upstream, the pipeline. The entry names the
dataset and batches it where it is given to ``fit``, never adding an axis on the inner
line (batches of one would leave an in-batch loss a 1x1 matrix). Each fix is applied and
the corrected cell trains on whole batches; look-alikes keep their own explanation."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run
from tests.harness import error_of_failing_cell as failing

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(3)
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")

# Two encoders trained contrastively: each query is matched with its own passage among
# the batch's passages (the diagonal of a batch x batch similarity matrix).
PAIRED_ENCODERS = """class PairedEncoders(keras.Model):
    def __init__(self):
        super().__init__()
        self.query_net = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(8)])
        self.passage_net = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(8)])
        self.batch_rows = tf.Variable(0, trainable=False)

    def train_step(self, data):
        queries, passages = data
        with tf.GradientTape() as tape:
            q = self.query_net(queries, training=True)
            p = self.passage_net(passages, training=True)
            sims = tf.matmul(q, p, transpose_b=True)
            targets = tf.range(tf.shape(sims)[0])
            loss = tf.reduce_mean(
                keras.losses.sparse_categorical_crossentropy(targets, sims, from_logits=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.batch_rows.assign(tf.shape(sims)[0])
        return {"loss": loss}

query_feats = np.random.rand(96, 6).astype("float32")
passage_feats = np.random.rand(96, 5).astype("float32")
matcher = PairedEncoders()
matcher.compile(optimizer=keras.optimizers.SGD(0.05))
"""


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_unbatched_pipeline_into_a_custom_train_step(kernel: KernelSession) -> None:
    run(kernel, PAIRED_ENCODERS)
    cell = """pairs = tf.data.Dataset.from_tensor_slices((query_feats, passage_feats)).shuffle(96)
log = matcher.fit(pairs, epochs=1, verbose=0)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "batch-dimension"
    assert "`pairs` yields single examples, not batches" in text, text
    assert "`self.query_net(queries, training=True)`" in text, text
    assert "batches of one example" in text
    fix = spans(text.split("so batch it:", 1)[1])[0]
    assert fix == "matcher.fit(pairs.batch(32), epochs=1, verbose=0)", text
    # No axis added on the inner line: that would train on batches of one.
    assert "[None, ...]" not in text and "expand_dims" not in text, text
    fixed = cell.replace("matcher.fit(pairs, epochs=1, verbose=0)", fix)
    report = checked_report(run(kernel, fixed))
    assert report["error"] is None
    rows = run(kernel, "print(int(matcher.batch_rows.numpy()), len(log.history['loss']))")
    assert rows.stdout.split() == ["32", "1"]


def test_batched_pipeline_and_one_example_inside_the_step_stay_apart(
    kernel: KernelSession,
) -> None:
    run(kernel, PAIRED_ENCODERS)
    # Correct look-alike: the same model on a batched pipeline trains without an entry.
    cell = """pairs = tf.data.Dataset.from_tensor_slices((query_feats, passage_feats)).batch(16)
log = matcher.fit(pairs, epochs=1, verbose=0)
"""
    report = checked_report(run(kernel, cell))
    assert report["error"] is None
    # The pipeline is batched and the step itself takes one row: the dataset is not named.
    cell = """class OneRow(PairedEncoders):
    def train_step(self, data):
        queries, passages = data
        q = self.query_net(queries[0], training=True)
        return {"loss": tf.reduce_sum(q)}

single = OneRow()
single.compile(optimizer="sgd")
single.fit(tf.data.Dataset.from_tensor_slices((query_feats, passage_feats)).batch(16),
           epochs=1, verbose=0)
"""
    error = failing(kernel, cell)
    assert "yields single examples" not in error["explanation"], error["explanation"]
