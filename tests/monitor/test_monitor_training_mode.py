"""A model holding Dropout or BatchNormalization called in the wrong mode in a custom
loop (issue #25, silent bugs found by symptoms): without ``training=True`` while the
tape records (Keras 3 then trains it in inference mode: no dropout, BatchNormalization's
statistics never updated), or with ``training=True`` outside any tape to predict
(random predictions, statistics moved by the test data). Found after the cell from the
cell's source (``ast``) and the model's layers as Keras stores them; the note names the
model, the call and its line, and its fix (the user's statement with the right flag) is
run in the kernel: the note is gone and the layers behave as they should. Look-alikes
stay silent: a model without such layers, a frozen BatchNormalization, the flag passed in
the tape, a tape taken for input gradients (no update), and a plain call outside the tape.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "training-argument"
SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(2)
feats = np.random.default_rng(4).normal(size=(64, 5)).astype("float32")
target = feats.sum(axis=1, keepdims=True)
normed = keras.Sequential([
    keras.Input((5,)),
    keras.layers.Dense(6),
    keras.layers.BatchNormalization(),
    keras.layers.Dense(1),
])
plain = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.01)
plain_opt = keras.optimizers.SGD(0.01)


def moving_mean_moved():
    return bool(normed.layers[1].moving_mean.numpy().any())
"""
KERNEL = KernelSetup(after_load=SETUP)

IN_TAPE = """for step in range(4):
    with tf.GradientTape() as tape:
        out = normed(feats)
        loss = tf.reduce_mean(tf.square(target - out))
    grads = tape.gradient(loss, normed.trainable_variables)
    opt.apply_gradients(zip(grads, normed.trainable_variables))
"""

# Eight ones through a Dense whose kernel is all ones give 8.0 exactly unless Dropout
# drops a unit: the loss against 8.0 is 0 in inference mode, above 0 with dropout.
DROPOUT_SETUP = """dropped = keras.Sequential([
    keras.Input((8,)),
    keras.layers.Dropout(0.5),
    keras.layers.Dense(1, kernel_initializer="ones", use_bias=False),
])
frozen_opt = keras.optimizers.SGD(0.0)
ones = np.ones((16, 8), "float32")
eights = np.full((16, 1), 8.0, "float32")
"""
HELPER_STEP = """def forward(batch):
    return dropped(batch)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - forward(x)))
    grads = tape.gradient(loss, dropped.trainable_variables)
    frozen_opt.apply_gradients(zip(grads, dropped.trainable_variables))
    return loss


step_losses = [float(train_step(ones, eights)) for _ in range(3)]
"""

EVALUATE = """before = normed.layers[1].moving_mean.numpy().copy()
test_preds = normed(feats[:16], training=True)
moved_by_test = bool((normed.layers[1].moving_mean.numpy() != before).any())
"""


def mode_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def notes_of(kernel: KernelSession, cell: str) -> list[str]:
    return mode_notes(checked_report(run(kernel, cell)))


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_a_model_with_batch_normalization_trained_without_the_flag(
    kernel: KernelSession,
) -> None:
    [text] = notes_of(kernel, IN_TAPE)
    assert text.startswith(
        "A model trained in inference mode: `normed(feats)` (line 3) runs while the tape "
        "records, without `training=True`, and `normed` holds a BatchNormalization layer."
    ), text
    assert "never updates them" in text
    assert "(after the cell, the moving mean in `normed` is still all zeros)" in text
    assert value_of(kernel, "moving_mean_moved()") is False
    fix = fix_of(text)
    assert fix == "out = normed(feats, training=True)"
    fixed = IN_TAPE.replace("out = normed(feats)", fix)
    assert notes_of(kernel, fixed) == []
    assert value_of(kernel, "moving_mean_moved()") is True


def test_dropout_in_a_helper_called_by_a_tf_function_step(kernel: KernelSession) -> None:
    run(kernel, DROPOUT_SETUP)
    [text] = notes_of(kernel, HELPER_STEP)
    assert text.startswith("A model trained in inference mode: `dropped(batch)` (line 2)"), text
    assert "holds a Dropout layer" in text and "dropout drops nothing" in text
    assert value_of(kernel, "step_losses") == [0.0, 0.0, 0.0]  # no unit ever dropped
    fix = fix_of(text)
    assert fix == "return dropped(batch, training=True)"
    fixed = HELPER_STEP.replace("return dropped(batch)", fix)
    assert notes_of(kernel, fixed) == []
    assert value_of(kernel, "all(loss > 0 for loss in step_losses)") is True


def test_predictions_in_training_mode_outside_the_tape(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, EVALUATE)
    assert text.startswith(
        "A model evaluated in training mode: `normed(feats[:16], training=True)` (line 2) "
        "runs outside every `tf.GradientTape` block"
    ), text
    assert "moves its moving statistics toward this data" in text
    assert value_of(kernel, "moved_by_test") is True
    fix = fix_of(text)
    assert fix == "test_preds = normed(feats[:16], training=False)"
    fixed = EVALUATE.replace("test_preds = normed(feats[:16], training=True)", fix)
    assert notes_of(kernel, fixed) == []
    assert value_of(kernel, "moved_by_test") is False
    # With dropout, two predictions of the same rows (one in reversed order: not two
    # identical passes set side by side to show the randomness) now agree.
    run(kernel, DROPOUT_SETUP)
    twice = (
        "same = bool(np.array_equal(dropped(ones, training=True), "
        "dropped(ones[::-1], training=True)))"
    )
    [dropout_text] = notes_of(kernel, twice)
    assert "two predictions of one input differ" in dropout_text
    assert value_of(kernel, "same") is False
    fixed_twice = twice.replace("training=True", "training=False")
    # Both calls of the statement get the flag, so the fix is the whole statement.
    assert fix_of(dropout_text) == fixed_twice
    assert "Set the flag in every call" in dropout_text
    assert notes_of(kernel, fixed_twice) == []
    assert value_of(kernel, "same") is True


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    # A model with neither Dropout nor BatchNormalization: both modes are the same.
    no_mode_layers = IN_TAPE.replace("normed", "plain").replace("opt.", "plain_opt.")
    assert notes_of(kernel, no_mode_layers) == []
    assert notes_of(kernel, "check = plain(feats, training=True)\n") == []
    # A frozen BatchNormalization runs in inference mode whatever the flag.
    frozen = """frozen_bn = keras.Sequential(
    [keras.Input((5,)), keras.layers.Dense(4), keras.layers.BatchNormalization()]
)
frozen_bn.layers[1].trainable = False
frozen_opt = keras.optimizers.SGD(0.01)
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(frozen_bn(feats))
grads = tape.gradient(loss, frozen_bn.trainable_variables)
frozen_opt.apply_gradients(zip(grads, frozen_bn.trainable_variables))
"""
    assert notes_of(kernel, frozen) == []
    # The flag passed in the tape.
    assert notes_of(kernel, IN_TAPE.replace("normed(feats)", "normed(feats, training=True)")) == []
    # A tape for the gradient of the output with respect to the input: no training step.
    saliency = """inputs = tf.constant(feats[:4])
with tf.GradientTape() as tape:
    tape.watch(inputs)
    score = tf.reduce_sum(normed(inputs))
saliency = tape.gradient(score, inputs)
"""
    assert notes_of(kernel, saliency) == []
    # Inference mode outside the tape.
    assert notes_of(kernel, "preds = normed(feats)\n") == []


# Sampling through the random layers on purpose (Monte Carlo dropout): several passes over
# the same inputs in training mode, gathered and measured. Another model, another layer
# (GaussianDropout), other spellings (tf.stack and reduce_std, a loop that appends).
NOISY_SETUP = """noisy = keras.Sequential([
    keras.Input((3,)),
    keras.layers.Dense(8, activation="relu"),
    keras.layers.GaussianDropout(0.4),
    keras.layers.Dense(2),
])
probe = np.random.default_rng(8).normal(size=(12, 3)).astype("float32")
"""
SAMPLED_STACK = """draws = tf.stack([noisy(probe, training=True) for i in range(25)])
spread = float(tf.reduce_mean(tf.math.reduce_std(draws, axis=0)))
"""
SAMPLED_LOOP = """passes = []
for k in range(10):
    passes.append(noisy(probe, training=True).numpy())
centre = np.mean(passes, axis=0)
"""
SAMPLED_SPREAD = """for k in range(5):
    last = noisy(probe, training=True)
band = np.percentile(last, [5, 95])
"""
SINGLE = """scores = noisy(probe, training=True)
twice_equal = bool(np.array_equal(scores, noisy(probe, training=False)))
"""
PER_BATCH = """batch_scores = []
for chunk in np.split(probe, 3):
    batch_scores.append(noisy(chunk, training=True).numpy())
"""


def test_monte_carlo_sampling_stays_silent_a_single_pass_is_told(kernel: KernelSession) -> None:
    run(kernel, NOISY_SETUP)
    assert notes_of(kernel, SAMPLED_STACK) == []
    assert value_of(kernel, "spread > 0") is True  # the random layer is on in every pass
    assert notes_of(kernel, SAMPLED_LOOP) == []
    assert value_of(kernel, "len(passes)") == 10
    assert notes_of(kernel, SAMPLED_SPREAD) == []
    # One prediction in training mode is still the mistake.
    [text] = notes_of(kernel, SINGLE)
    assert text.startswith(
        "A model evaluated in training mode: `noisy(probe, training=True)` (line 1)"
    ), text
    assert "`noisy` holds a GaussianDropout layer" in text
    assert value_of(kernel, "twice_equal") is False
    fix = fix_of(text)
    assert fix == "scores = noisy(probe, training=False)"
    fixed = SINGLE.replace("scores = noisy(probe, training=True)", fix)
    assert notes_of(kernel, fixed) == []
    assert value_of(kernel, "twice_equal") is True
    # So is a loop over the data's batches: each batch is predicted once.
    [batch_text] = notes_of(kernel, PER_BATCH)
    assert "`noisy(chunk, training=True)` (line 3)" in batch_text
    batch_fix = fix_of(batch_text)
    assert batch_fix == "batch_scores.append(noisy(chunk, training=False).numpy())"
    fixed_batches = PER_BATCH.replace(
        "batch_scores.append(noisy(chunk, training=True).numpy())", batch_fix
    )
    assert notes_of(kernel, fixed_batches) == []
    assert value_of(kernel, "bool(np.allclose(np.concatenate(batch_scores), noisy(probe)))")


# A network that only scores a pair of inputs (a critic measuring how far apart two
# batches are), called in training mode twice inside a helper of the cell, outside every
# tape: one note names both calls and fixes both, with the freeze for a fixed network.
CRITIC_SETUP = """critic = keras.Sequential([
    keras.Input((7,)),
    keras.layers.Dense(5),
    keras.layers.BatchNormalization(),
    keras.layers.Activation("tanh"),
])
left = np.random.default_rng(11).normal(2.0, 3.0, size=(10, 7)).astype("float32")
right = np.random.default_rng(12).normal(size=(10, 7)).astype("float32")
"""
CRITIC_GAP = """def embedding_gap(first, second):
    code_a = critic(first, training=True)
    code_b = critic(second, training=True)
    return float(tf.reduce_mean(tf.abs(code_a - code_b)))

gap = embedding_gap(left, right)
"""


def test_every_training_call_of_a_helper_is_fixed_together(kernel: KernelSession) -> None:
    run(kernel, CRITIC_SETUP)
    [text] = notes_of(kernel, CRITIC_GAP)
    assert text.startswith(
        "A model evaluated in training mode: `critic(first, training=True)` and "
        "`critic(second, training=True)` (lines 2 and 3, in `embedding_gap`) run outside "
        "every `tf.GradientTape` block"
    ), text
    fixes = re.findall(r"`([^`]+)`", text)[-2:]
    assert fixes == [
        "code_a = critic(first, training=False)",
        "code_b = critic(second, training=False)",
    ]
    assert "`critic.trainable = False`" in text
    fixed = CRITIC_GAP.replace("code_a = critic(first, training=True)", fixes[0]).replace(
        "code_b = critic(second, training=True)", fixes[1]
    )
    run(kernel, "critic.trainable = False\nstart = critic.layers[1].moving_mean.numpy().copy()")
    assert notes_of(kernel, fixed) == []
    # Fixed: the features of one row do not depend on the rows beside it, and the
    # moving statistics were not moved by the calls.
    check = (
        "bool(np.allclose(critic(left[:1], training=False), critic(left, training=False)[:1]) "
        "and np.array_equal(start, critic.layers[1].moving_mean.numpy()))"
    )
    assert value_of(kernel, check) is True
    # Look-alike: the same helper already in inference mode stays silent, unfrozen too.
    run(kernel, "critic.trainable = True")
    assert notes_of(kernel, fixed) == []


# Monte Carlo passes through a model that holds BatchNormalization as well as dropout:
# the dropout is on as meant; the note names the BatchNormalization (nested in a block)
# and its fix samples only through the dropout. Another model, other names: a nested
# block of Dense + BatchNormalization, AlphaDropout, passes gathered in a loop.
SPLIT_SETUP = """trunk = keras.Sequential([
    keras.Input((4,)),
    keras.layers.Dense(9, name="trunk_dense"),
    keras.layers.BatchNormalization(name="trunk_norm"),
], name="trunk")
regressor = keras.Sequential([
    keras.Input((4,)),
    trunk,
    keras.layers.Dense(6, activation="relu"),
    keras.layers.AlphaDropout(0.3),
    keras.layers.Dense(1, name="out"),
])
regressor.compile(optimizer="sgd", loss="mse")
rows = np.random.default_rng(21).normal(3.0, 2.0, size=(40, 4)).astype("float32")
regressor.fit(rows, rows.sum(axis=1), epochs=1, verbose=0)
unseen = np.random.default_rng(22).normal(-1.0, 5.0, size=(15, 4)).astype("float32")
norm_start = trunk.get_layer("trunk_norm").moving_mean.numpy().copy()
"""
SPLIT_PASSES = """samples = []
for rep in range(12):
    samples.append(regressor(unseen, training=True))
norm_moved = bool((trunk.get_layer("trunk_norm").moving_mean.numpy() != norm_start).any())
"""


def test_monte_carlo_passes_keep_batch_normalization_in_inference(
    kernel: KernelSession,
) -> None:
    run(kernel, SPLIT_SETUP)
    [text] = notes_of(kernel, SPLIT_PASSES)
    assert text.startswith(
        "Monte Carlo passes that also move BatchNormalization: "
        "`regressor(unseen, training=True)` (line 3)"
    ), text
    assert "`trunk_norm` (in `trunk`)" in text
    assert "training=False)" not in text.split("once before the passes")[0]
    assert value_of(kernel, "norm_moved") is True  # what the note says happens
    setup_features, setup_sampler, passes = re.findall(r"`([^`]+)`", text)[-3:]
    assert (
        setup_features
        == "features = keras.Sequential(regressor.layers[:2])(unseen, training=False)"
    )
    assert setup_sampler == "sampler = keras.Sequential(regressor.layers[2:])"
    assert passes == "samples.append(sampler(features, training=True))"
    run(kernel, "norm_start = trunk.get_layer('trunk_norm').moving_mean.numpy().copy()")
    fixed = SPLIT_PASSES.replace(
        "samples = []\n",
        f"samples = []\n{setup_features}\n{setup_sampler}\n",
    ).replace("samples.append(regressor(unseen, training=True))", passes)
    assert notes_of(kernel, fixed) == []
    # Fixed: the statistics stay, the passes still differ (dropout on), and the split
    # equals the whole model's output in inference mode with the dropout switched off.
    assert value_of(kernel, "norm_moved") is False
    assert value_of(kernel, "float(np.std(np.stack(samples), axis=0).mean()) > 0") is True
    same_model = (
        "bool(np.allclose(sampler(features, training=False), "
        "regressor(unseen, training=False), atol=1e-4))"
    )
    assert value_of(kernel, same_model) is True


# A training-mode pass set beside an identical one: a demonstration that the random layer
# draws anew in each pass, written on purpose; the same comparison against an
# inference-mode pass is still told.
DEMO = """lone_drop = keras.layers.Dropout(0.4)
hidden = np.ones((3, 10), "float32")
differ = not np.allclose(lone_drop(hidden, training=True), lone_drop(hidden, training=True))
"""


def test_two_identical_training_passes_compared_stay_silent(kernel: KernelSession) -> None:
    run(kernel, NOISY_SETUP)
    assert notes_of(kernel, DEMO) == []
    assert value_of(kernel, "differ") is True
    compared = (
        "agree = (noisy(probe, training=True) == noisy(probe, training=True)).numpy().all()\n"
    )
    assert notes_of(kernel, compared) == []
    mixed = "agree = np.allclose(noisy(probe, training=True), noisy(probe))\n"
    assert len(notes_of(kernel, mixed)) == 1
