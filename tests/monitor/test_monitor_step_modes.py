"""Keras methods of the learner's that run the model in the wrong mode, or train while
they should only measure (``monitor/training/step_modes.py``, issue #25 part 2): a
custom ``train_step`` calling ``self(x)`` without ``training=True`` (dropout never
drops, BatchNormalization's moving mean stays at zeros), a custom ``test_step`` that
applies gradients (evaluate changes the weights), a ``call`` passing ``training=False``
to a Dropout/BatchNormalization sublayer (it never trains). Each symptom is shown in the
kernel, the note names the learner's class, line and statement, the printed fix is
applied and the symptom and the note are gone; correct look-alikes stay silent."""

from __future__ import annotations

import ast
import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "keras.utils.set_random_seed(5)\n"
    "rows = (np.random.rand(96, 4) * 3 + 2).astype('float32')\n"
    "goal = rows.sum(axis=1, keepdims=True)"
)
SECTION = "training-argument"


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    """The notes of the training-argument section after running ``code``; every code
    span they print is valid Python."""
    report = checked_report(run(kernel, code))
    texts = [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == SECTION]
    for text in texts:
        for span in re.findall(r"`([^`]+)`", text):
            ast.parse(span)
    return texts


def span_after(text: str, words: str) -> str:
    rest = text[text.index(words) + len(words) :]
    return re.findall(r"`([^`]+)`", rest)[0]


def line_of(code: str, statement: str) -> int:
    return next(n for n, line in enumerate(code.splitlines(), 1) if statement in line)


# ------------------------------------------------- train_step without training=True
STEPPER = """class Stepper(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.norm = keras.layers.BatchNormalization()
        self.drop = keras.layers.Dropout(0.3)
        self.out = keras.layers.Dense(1)

    def call(self, feats, training=False):
        h = self.norm(self.hidden(feats), training=training)
        return self.out(self.drop(h, training=training))

    def train_step(self, data):
        feats, truth = data
        with tf.GradientTape() as tape:
            guess = self(feats)
            loss = tf.reduce_mean(tf.square(guess - truth))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        return {"loss": loss}

stepper = Stepper()
stepper.compile(optimizer="adam")
stepper.fit(rows, goal, batch_size=16, epochs=2, verbose=0)
"""
MOVED = "bool(np.any(stepper.norm.moving_mean.numpy() != 0))"


def test_a_train_step_calling_the_model_without_the_flag(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, STEPPER)
    assert value_of(kernel, MOVED) is False  # the symptom: BN statistics never updated
    line = line_of(STEPPER, "guess = self(feats)")
    assert f"`Stepper.train_step` calls the model without `training=True` (line {line}: " in text
    assert "`guess = self(feats)`" in text
    assert "BatchNormalization and Dropout layers" in text or (
        "Dropout and BatchNormalization layers" in text
    )
    assert "after this fit, its moving mean is still all zeros" in text
    assert "dropout never drops a unit" in text
    fix = span_after(text, "Write ")
    assert fix == "guess = self(feats, training=True)"
    assert notes_of(kernel, STEPPER.replace("guess = self(feats)", fix)) == []
    assert value_of(kernel, MOVED) is True
    # Look-alike: the same step on a model with no layer that behaves differently in
    # training: self(x) is harmless there.
    flat = (
        STEPPER.replace("        self.norm = keras.layers.BatchNormalization()\n", "")
        .replace("        self.drop = keras.layers.Dropout(0.3)\n", "")
        .replace("h = self.norm(self.hidden(feats), training=training)", "h = self.hidden(feats)")
        .replace("self.out(self.drop(h, training=training))", "self.out(h)")
    )
    assert notes_of(kernel, flat) == []


# ---------------------------------------------------------- test_step that trains
SCORER = """class Scorer(keras.Model):
    def __init__(self):
        super().__init__()
        self.lin = keras.layers.Dense(1)

    def call(self, feats):
        return self.lin(feats)

    def test_step(self, data):
        feats, truth = data
        with tf.GradientTape() as tape:
            guess = self(feats, training=False)
            loss = tf.reduce_mean(tf.square(guess - truth))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        return {"loss": loss}

scorer = Scorer()
scorer.compile(optimizer=keras.optimizers.SGD(0.001), loss="mse")
scorer.fit(rows, goal, batch_size=32, epochs=1, verbose=0)
"""
UPDATE = "        self.optimizer.apply(grads, self.trainable_variables)\n"
SCORE = "scored = scorer.evaluate(rows, goal, batch_size=32, verbose=0)"
KEPT = (
    "(lambda before: (scorer.evaluate(rows, goal, batch_size=32, verbose=0), "
    "bool(np.array_equal(before, scorer.lin.kernel.numpy())))[1])"
    "(scorer.lin.kernel.numpy().copy())"
)


def test_a_test_step_that_applies_gradients(kernel: KernelSession) -> None:
    # Told first where the class is defined (training/step_definitions.py), from the code.
    [defined] = notes_of(kernel, SCORER)
    assert defined.startswith("`Scorer.test_step` updates the weights (line 15: ")
    [text] = notes_of(kernel, SCORE)
    assert value_of(kernel, KEPT) is False  # the symptom: evaluate changed the weights
    line = line_of(SCORER, UPDATE.strip())
    # The class was defined in an earlier cell than evaluate's: that cell is named.
    assert re.search(
        rf"`Scorer.test_step` updates the weights \(cell In\[\d+\], line {line}: ", text
    )
    assert f"`{UPDATE.strip()}`" in text
    assert "this evaluate changed 2 of the model's 2 trainable weights" in text
    assert "the optimizer took 3 steps" in text
    assert "delete that line" in text
    # fit's validation runs the same step: told as validation.
    [validated] = notes_of(
        kernel, "scorer.fit(rows, goal, batch_size=32, epochs=1, verbose=0, validation_split=0.25)"
    )
    assert "fit's validation changed 2 of the model's 2 trainable weights" in validated
    # The fix as printed: the line deleted.
    assert notes_of(kernel, SCORER.replace(UPDATE, "")) == []
    assert notes_of(kernel, SCORE) == []
    assert value_of(kernel, KEPT) is True


# ----------------------------------------------- training=False in a layer's call
BLOCK = """class Block(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(8, activation="relu")
        self.norm = keras.layers.BatchNormalization()
        self.squash = keras.layers.Dense(8)

    def call(self, inputs):
        h = self.norm(self.dense(inputs), training=False)
        return self.squash(h, training=False)

block = Block()
stack = keras.Sequential([keras.Input((4,)), block, keras.layers.Dense(1)])
stack.compile(optimizer="adam", loss="mse")
stack.fit(rows, goal, batch_size=16, epochs=2, verbose=0)
"""
BLOCK_MOVED = "bool(np.any(block.norm.moving_mean.numpy() != 0))"


def test_training_false_passed_to_batch_normalization_in_call(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, BLOCK)
    assert value_of(kernel, BLOCK_MOVED) is False
    statement = "h = self.norm(self.dense(inputs), training=False)"
    line = line_of(BLOCK, statement)
    assert f"`Block.call` passes `training=False` to `self.norm` (line {line}: " in text
    assert f"`{statement}`" in text and "a BatchNormalization layer" in text
    assert "after this fit, its moving mean is still all zeros" in text
    header = span_after(text, "Pass the flag through: ").removesuffix(" ...")
    fixed = span_after(text, "` and ")
    assert header == "def call(self, inputs, training=None):"
    assert fixed == "h = self.norm(self.dense(inputs), training=training)"
    repaired = BLOCK.replace("def call(self, inputs):", header).replace(statement, fixed)
    # The Dense given training=False stays as written: a Dense has no training mode.
    assert notes_of(kernel, repaired) == []
    assert value_of(kernel, BLOCK_MOVED) is True
