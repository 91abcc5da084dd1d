"""Silent model, loss, metric and training-step mistakes told from the code and the values
after a cell (issue #25): one metric object measuring two things without a reset
(``symptoms/metric_reuse.py``); ``keras.metrics.Accuracy`` fed probabilities
(``symptoms/exact_accuracy.py``); a ``test_step`` that updates weights, told where the class
is defined (``training/step_definitions.py``); a layer class starting its weight matrices
at zero (``variables/zero_matrices.py``); a padding mask True on the padding given where
Keras keeps True (``symptoms/mask_polarity.py``); raw scores given to a probability loss
inside the learner's loss function (``symptoms/logits_parameters.py``); a checkpoint
restored into the old objects while a new model is measured
(``training/detached_restores.py``). Each printed fix runs and makes the result right;
correct look-alikes stay silent.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

SETUP = """import os, tempfile
import numpy as np
import tensorflow as tf
import keras
from keras import layers
keras.utils.set_random_seed(11)
rng = np.random.default_rng(0)
readings = rng.normal(size=(80, 6)).astype("float32")
outcome = (readings[:, 0] - readings[:, 1] > 0).astype("float32")
guess_a = rng.random(80).astype("float32")
guess_b = rng.random(80).astype("float32")
store = tempfile.mkdtemp()
"""
KERNEL = KernelSetup(after_load=SETUP)


def notes_of(kernel: KernelSession, cell: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, cell))
    return [note["text"] for note in report["notes"]]


def code_after(text: str, lead: str) -> str:
    return re.findall(r"`([^`]+)`", text.split(lead, 1)[1])[0]


REUSE = """gap = keras.metrics.MeanAbsoluteError()
gap.update_state(outcome, guess_a)
score_a = float(gap.result())
gap.update_state(outcome, guess_b)
score_b = float(gap.result())
"""


def test_one_metric_measuring_two_things(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, REUSE)
    assert text.startswith(
        "`gap.update_state(outcome, guess_b)` (line 4) adds to the totals `gap` already "
        "holds from `gap.update_state(outcome, guess_a)` (line 2)"
    ), text
    assert "Put `gap.reset_state()` on its own line just before line 4" in text
    lines = REUSE.split("\n")
    fixed = "\n".join([*lines[:3], "gap.reset_state()", *lines[3:]])
    assert notes_of(kernel, fixed) == []
    check = "print(abs(score_b - float(np.mean(np.abs(outcome - guess_b)))) < 1e-5)"
    assert run(kernel, check).stdout.strip() == "True"
    # Look-alikes: two metric objects; one update read twice.
    two = REUSE.replace(
        "gap.update_state(outcome, guess_b)",
        "gap2 = keras.metrics.MeanAbsoluteError(); gap2.update_state(outcome, guess_b)",
    ).replace("score_b = float(gap.result())", "score_b = float(gap2.result())")
    assert notes_of(kernel, two) == []
    once = (
        "hits = keras.metrics.Mean()\nhits.update_state(guess_a)\n"
        "print(float(hits.result()), float(hits.result()))"
    )
    assert notes_of(kernel, once) == []


def test_exact_accuracy_fed_probabilities(kernel: KernelSession) -> None:
    cell = """agree = keras.metrics.Accuracy()
agree.update_state(outcome, guess_a[:, None][:, 0])
share = float(agree.result())
"""
    [text] = notes_of(kernel, cell)
    assert text.startswith("`agree` is a `keras.metrics.Accuracy`, which counts the rows")
    assert "continuous values (`guess_a` holds" in text
    fix = code_after(text, "use ")
    assert fix == "agree = keras.metrics.BinaryAccuracy(threshold=0.5)"
    run(kernel, cell.replace("agree = keras.metrics.Accuracy()", fix))
    check = "print(abs(share - float(np.mean((guess_a > 0.5) == outcome))) < 1e-6)"
    assert run(kernel, check).stdout.strip() == "True"
    # Look-alikes: labels given to Accuracy, probabilities to BinaryAccuracy.
    labels = "same = keras.metrics.Accuracy()\nsame.update_state(outcome, np.round(guess_a))"
    assert notes_of(kernel, labels) == []
    binary = "binacc = keras.metrics.BinaryAccuracy()\nbinacc(outcome, guess_a)"
    assert notes_of(kernel, binary) == []


STEPPER = """class Stepper(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = layers.Dense(8, activation="relu")
        self.head = layers.Dense(1)

    def call(self, x, training=False):
        return self.head(self.body(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}

    def test_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
"""


def test_a_test_step_that_trains_told_at_definition(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, STEPPER)
    assert text.startswith(
        "`Stepper.test_step` updates the weights (line 23: "
        "`self.optimizer.apply_gradients(zip(grads, self.trainable_variables))`) "
        "(it reads like a copy of `train_step`)"
    ), text
    assert "delete that line" in text
    fixed = STEPPER.replace(
        "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n"
        '        return {"loss": loss}\n\n\n',
        '        return {"loss": loss}\n\n\n',
    ).rsplit("        self.optimizer.apply_gradients", 1)
    fixed_cell = fixed[0] + '        return {"loss": loss}\n'
    assert notes_of(kernel, fixed_cell) == []
    check = """net = Stepper()
net.compile(optimizer="sgd", loss="mse")
net.fit(readings, outcome, epochs=1, verbose=0)
before = [w.copy() for w in net.get_weights()]
net.evaluate(readings, outcome, verbose=0)
print(all(np.array_equal(a, b) for a, b in zip(before, net.get_weights())))"""
    assert run(kernel, check).stdout.strip() == "True"


ZERO_LAYER = """class Linear(tf.Module):
    def __init__(self, fan_in, fan_out, activation=None):
        super().__init__()
        self.kernel = tf.Variable(tf.zeros((fan_in, fan_out)))
        self.shift = tf.Variable(tf.zeros((fan_out,)))
        self.activation = activation

    def __call__(self, x):
        z = tf.matmul(x, self.kernel) + self.shift
        return self.activation(z) if self.activation else z
"""


def test_a_stackable_layer_class_starting_at_zero(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, ZERO_LAYER)
    assert text.startswith(
        "`Linear` starts its weight matrix `self.kernel` at zero (line 4: "
        "`self.kernel = tf.Variable(tf.zeros((fan_in, fan_out)))`)"
    ), text
    fix = code_after(text, "Start it small and random:")
    assert fix == "self.kernel = tf.Variable(tf.random.normal((fan_in, fan_out), stddev=0.1))"
    fixed = ZERO_LAYER.replace("self.kernel = tf.Variable(tf.zeros((fan_in, fan_out)))", fix)
    assert notes_of(kernel, fixed) == []
    # Fixed, stacked hidden units differ from one another.
    check = """hidden = Linear(6, 4, tf.nn.relu)
h = hidden(readings).numpy()
print(not np.allclose(h[:, 0], h[:, 1]))"""
    assert run(kernel, check).stdout.strip() == "True"
    # Look-alike: one linear model (logistic regression) from zeros learns fine.
    single = """class Regression(tf.Module):
    def __init__(self, d):
        super().__init__()
        self.w = tf.Variable(tf.zeros([d, 1]))
        self.b = tf.Variable(0.0)

    def __call__(self, x):
        return x @ self.w + self.b
"""
    assert notes_of(kernel, single) == []


MASKED = """class Pooler(keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = layers.Embedding(30, 8)
        self.score = layers.Dense(1)

    def call(self, ids):
        blank = tf.math.equal(ids, 0)
        h = self.embed(ids)
        w = tf.cast(blank, h.dtype)[..., None]
        return self.score(tf.reduce_sum(h * w, axis=1) / (tf.reduce_sum(w, axis=1) + 1e-6))
"""


def test_a_padding_mask_with_the_wrong_polarity(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, MASKED)
    assert text.startswith(
        "`blank = tf.math.equal(ids, 0)` (line 8, in `Pooler.call`) is True on the padding "
        "positions, but `blank` is used as the weights of a masked sum"
    ), text
    fix = code_after(text, "Build the mask True on the real tokens:")
    assert fix == "blank = tf.math.not_equal(ids, 0)"
    assert notes_of(kernel, MASKED.replace("blank = tf.math.equal(ids, 0)", fix)) == []
    # The attention variant, through a layer of the model's own.
    attention = """class Block(layers.Layer):
    def __init__(self):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads=2, key_dim=4)

    def call(self, x, keep):
        return self.att(x, x, attention_mask=keep[:, None, :])


class Encoder(keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = layers.Embedding(30, 8)
        self.block = Block()

    def call(self, ids):
        pads = ids == 0
        return self.block(self.embed(ids), pads)
"""
    [text] = notes_of(kernel, attention)
    assert "`attention_mask=` in `Block.call`, through `self.block(...)`" in text
    assert code_after(text, "Build the mask True on the real tokens:") == "pads = ids != 0"
    # Look-alike: the additive mask wants True on the padding.
    additive = """pads = tf.equal(tf.constant([[3, 4, 0]]), 0)
logits = tf.random.normal((1, 3)) + tf.cast(pads, tf.float32) * -1e9
"""
    assert notes_of(kernel, additive) == []


def test_raw_scores_given_to_a_probability_loss_in_a_function(kernel: KernelSession) -> None:
    cell = """scorer = keras.Sequential([keras.Input((6,)), layers.Dense(2)])
def batch_loss(truth, out):
    return tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(truth, out))

value = float(batch_loss(outcome, scorer(readings)))
"""
    [text] = notes_of(kernel, cell)
    assert text.startswith("`batch_loss` gives `out` to")
    assert "`scorer`'s last layer has no activation" in text
    fix = code_after(text, "Tell the loss it gets logits:")
    assert fix == "keras.losses.sparse_categorical_crossentropy(truth, out, from_logits=True)"
    fixed = cell.replace("keras.losses.sparse_categorical_crossentropy(truth, out)", fix)
    assert notes_of(kernel, fixed) == []
    check = """exact = float(tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
    outcome, tf.nn.softmax(scorer(readings)))))
print(abs(value - exact) < 1e-5)"""
    assert run(kernel, check).stdout.strip() == "True"
    # Look-alike: probabilities from a softmax model.
    probs = """prob_model = keras.Sequential(
    [keras.Input((6,)), layers.Dense(2, activation="softmax")]
)
def prob_loss(truth, probs):
    return tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(truth, probs))

print(float(prob_loss(outcome, prob_model(readings))))
"""
    assert notes_of(kernel, probs) == []


def test_a_loss_object_told_once_where_it_was_made(kernel: KernelSession) -> None:
    """The note on a probability loss object fed scores goes with the cell that made and
    first misused it; a later cell that only uses the same object again (with a bug of its
    own) is not given the earlier cell's note, while a cell that makes it afresh is."""
    made = """hinge_ce = keras.losses.CategoricalCrossentropy()

def critic_loss(onehot_true, raw_scores):
    return hinge_ce(onehot_true, raw_scores)
"""
    [text] = notes_of(kernel, made)
    assert text.startswith("`critic_loss` gives `raw_scores` to")
    fix = code_after(text, "Tell the loss it gets logits:")
    assert fix == "hinge_ce = keras.losses.CategoricalCrossentropy(from_logits=True)"
    # A later cell reusing the object: the fix above belongs to the earlier cell.
    reused = """def actor_loss(scores_fake):
    return hinge_ce(tf.ones_like(scores_fake) * 0.0, scores_fake)
"""
    assert notes_of(kernel, reused) == []
    # Variant: a loss object made in a cell that was never told (no function there) is
    # still told in the first cell that hands it scores.
    run(kernel, "sm_loss = keras.losses.BinaryCrossentropy()")
    first_use = """def gate_loss(target, gate_logits):
    return sm_loss(target, gate_logits)
"""
    [text] = notes_of(kernel, first_use)
    assert text.startswith("`gate_loss` gives `gate_logits` to")
    fix = code_after(text, "Tell the loss it gets logits:")
    assert fix == "sm_loss = keras.losses.BinaryCrossentropy(from_logits=True)"
    run(kernel, fix)
    assert notes_of(kernel, first_use) == []
    # A cell that makes the object again is told again.
    assert len(notes_of(kernel, made)) == 1


def test_a_restore_that_fills_the_old_model_not_the_new_one(kernel: KernelSession) -> None:
    setup = """trained = keras.Sequential([keras.Input((6,)), layers.Dense(3)])
trained.compile(optimizer="adam", loss="mse")
trained.fit(readings, np.zeros((80, 3)), epochs=2, verbose=0)
saver = tf.train.Checkpoint(net=trained)
saved_at = saver.save(os.path.join(store, "snap"))
"""
    assert notes_of(kernel, setup) == []
    cell = """rebuilt = keras.Sequential([keras.Input((6,)), layers.Dense(3)])
saver.restore(saved_at)
out = rebuilt(readings)
"""
    [text] = notes_of(kernel, cell)
    assert text.startswith(
        "`saver.restore(saved_at)` (line 2 of this cell) restores into the objects `saver` "
        "was made with: `trained`, saved under `net=`. `rebuilt`, built on line 1"
    ), text
    fix = code_after(text, "in place of that line:")
    assert fix == "tf.train.Checkpoint(net=rebuilt).restore(saved_at).expect_partial()"
    assert notes_of(kernel, cell.replace("saver.restore(saved_at)", fix)) == []
    same = "print(np.allclose(rebuilt(readings), trained(readings)))"
    assert run(kernel, same).stdout.strip() == "True"
    # Look-alike: restoring the tracked model itself.
    assert notes_of(kernel, "saver.restore(saved_at)\nagain = trained(readings)") == []
