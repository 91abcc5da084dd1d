"""A hand-written cross-entropy missing its minus (issue #25, silent bugs): the loss is
then a log-likelihood, minimising it makes the predictions worse, and the loss goes
steadily more negative while accuracy falls. Told on the symptom (fit's History, or the
loss sampled at a custom loop's ``tape.gradient``), the cause read from the learner's
code: the compiled loss function, the loop's loss statement, or the function it calls.
Each fix (the minus in front) is run in the kernel: the loss is positive and falls, the
accuracy is high, no note. Look-alikes stay silent: the same losses written correctly,
a Gaussian negative log-likelihood that goes below zero on purpose."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "labels-and-loss"

DATA = """keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
pts = rng.normal(size=(256, 4)).astype("float32")
tags = (pts[:, 0] + pts[:, 1] > 0).astype("float32")[:, None]
"""

WRONG_BCE = (
    "def my_bce(y_true, y_pred):\n"
    "    return tf.reduce_mean(y_true * tf.math.log(y_pred + 1e-7)"
    " + (1 - y_true) * tf.math.log(1 - y_pred + 1e-7))\n"
)
FIT = """clf = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
clf.compile(optimizer=keras.optimizers.SGD(0.5), loss=my_bce, metrics=["accuracy"])
hist = clf.fit(pts, tags, epochs=6, verbose=0)
"""

LOOP = """w = tf.Variable(tf.zeros((4, 1)))
b = tf.Variable(0.0)
opt = keras.optimizers.SGD(0.5)
for step in range(40):
    with tf.GradientTape() as tape:
        p = tf.sigmoid(pts @ w + b)
        loss = tf.reduce_mean(tags * tf.math.log(p + 1e-7) + (1 - tags) * tf.math.log(1 - p + 1e-7))
    grads = tape.gradient(loss, [w, b])
    opt.apply_gradients(zip(grads, [w, b]))
"""
WRONG_LOSS_LINE = LOOP.splitlines()[6].strip()


def sign_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "log-likelihood" in note["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_fit_with_a_compiled_log_likelihood(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, WRONG_BCE)
    notes = sign_notes(checked_report(run(kernel, FIT)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("The loss of `clf.fit` went from -"), notes[0]
    assert "training made the predictions worse" in notes[0]
    assert "(in `my_bce`) is a mean of log-probabilities, a log-likelihood" in notes[0]
    fix = codes(notes[0])[-1]
    wrong_return = WRONG_BCE.splitlines()[1].strip()
    assert fix == wrong_return.replace("return tf.", "return -tf.")
    run(kernel, WRONG_BCE.replace(wrong_return, fix))
    assert sign_notes(checked_report(run(kernel, FIT))) == []
    assert (
        shown(kernel, "hist.history['loss'][-1] > 0 and hist.history['accuracy'][-1] > 0.85")
        == "True"
    )


def test_custom_loop_with_the_log_likelihood_as_loss(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = sign_notes(checked_report(run(kernel, LOOP)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("The loss went from -0.6931 at step 1 to -"), notes[0]
    assert "(`loss` given to `tape.gradient`, line 8)" in notes[0]
    assert f"`{WRONG_LOSS_LINE}` (line 7) is a mean of log-probabilities" in notes[0]
    fix = codes(notes[0])[-1]
    assert fix == WRONG_LOSS_LINE.replace("loss = tf.", "loss = -tf.")
    assert sign_notes(checked_report(run(kernel, LOOP.replace(WRONG_LOSS_LINE, fix)))) == []
    accuracy = "float(np.mean((tf.sigmoid(pts @ w + b).numpy() > 0.5) == tags))"
    assert shown(kernel, f"float(loss) > 0 and {accuracy} > 0.9") == "True"


def test_custom_loop_calling_a_helper(kernel: KernelSession) -> None:
    run(kernel, DATA)
    helper = "def log_lik(y, p):\n    return tf.reduce_mean(tf.reduce_sum(y * tf.math.log(p + 1e-7), axis=-1))\n"  # noqa: E501
    run(kernel, helper)
    call = "loss = log_lik(tf.concat([tags, 1 - tags], 1), tf.concat([p, 1 - p], 1))"
    loop = LOOP.replace(WRONG_LOSS_LINE, call)
    notes = sign_notes(checked_report(run(kernel, loop)))
    assert len(notes) == 1, notes
    assert "(in `log_lik`) is a mean of log-probabilities" in notes[0]
    fix = codes(notes[0])[-1]
    assert fix == "return -tf.reduce_mean(tf.reduce_sum(y * tf.math.log(p + 1e-7), axis=-1))"
    run(kernel, helper.replace("return tf.", "return -tf."))
    assert sign_notes(checked_report(run(kernel, loop))) == []
    assert shown(kernel, "float(loss) > 0") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    right = WRONG_BCE.replace("return tf.", "return -tf.")
    run(kernel, right)
    assert sign_notes(checked_report(run(kernel, FIT))) == []
    fixed_loop = LOOP.replace(WRONG_LOSS_LINE, WRONG_LOSS_LINE.replace("= tf.", "= -tf."))
    assert checked_report(run(kernel, fixed_loop))["notes"] == []
    # A Gaussian's negative log-likelihood with a learned spread goes below zero as the
    # fit improves: meant, and its log term is not a log-probability of the labels.
    gaussian = """mu_w = tf.Variable(tf.zeros((4, 1)))
spread = tf.Variable(1.0)
target = pts @ np.array([[1.0], [2.0], [0.0], [0.0]], dtype="float32")
target += rng.normal(0, 0.1, size=(256, 1)).astype("float32")
opt_g = keras.optimizers.Adam(0.05)
for step in range(200):
    with tf.GradientTape() as tape:
        nll = tf.reduce_mean(tf.math.log(spread) + 0.5 * tf.square((target - pts @ mu_w) / spread))
    grads = tape.gradient(nll, [mu_w, spread])
    opt_g.apply_gradients(zip(grads, [mu_w, spread]))
"""
    report = checked_report(run(kernel, gaussian))
    assert [n for n in report["notes"] if (n.get("course") or {}).get("section") == SECTION] == []
    assert shown(kernel, "float(nll) < 0") == "True"


def test_accuracy_falling_under_a_keras_loss_is_not_called_a_sign_error(
    kernel: KernelSession,
) -> None:
    """A fit whose accuracy fell while its loss fell: with Keras's own cross-entropy (its
    sign is right; raw scores given to it do this, told when compiled) no 'check its sign'
    note; with the notebook's own loss function the symptom is still told."""
    cell = """import weakref
from jupyterlab_tfcoach.monitor.training.loss_sign import fit_notes
seq = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
seq.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
fell = {"loss": [5.1, 4.0, 3.2], "accuracy": [0.32, 0.2, 0.13]}
by_keras = len(fit_notes([(weakref.ref(seq), fell)], {"seq": seq}))
def own_loss(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_pred - tf.cast(y_true, y_pred.dtype)))
seq.compile(optimizer="adam", loss=own_loss, metrics=["accuracy"])
by_own = len(fit_notes([(weakref.ref(seq), fell)], {"seq": seq}))
"""
    run(kernel, cell)
    assert shown(kernel, "by_keras, by_own") == "0 1"
