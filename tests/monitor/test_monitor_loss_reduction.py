"""A training loss summed over the batch with a learning rate meant for a mean (issue #25,
silent bugs): ``loss = tf.reduce_sum(tf.square(ys - pred))`` makes every step the batch
size times too large; nothing raises and the loss grows to inf/nan. Told only on the
symptom (the loss sampled at the ``tape.gradient`` call grew or went non-finite), with
the cause read from the loop's code: the note names the statement, the samples and the
batch size, and gives the statement with ``reduce_mean``. The fix is run in the kernel:
the loss falls close to 0, no note. Look-alikes stay silent: the same sum with the
learning rate divided by the batch size (it converges), a sum over the features then a
mean over the batch."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "gradient-tape"

DATA = """rng = np.random.default_rng(1)
xs = rng.normal(size=(256, 3)).astype("float32")
ys = (xs @ np.array([[1.5], [-2.0], [0.5]], dtype="float32") + 0.3).astype("float32")
"""

LOOP = """w = tf.Variable(tf.zeros((3, 1)))
b = tf.Variable(0.0)
lr = 0.1
history = []
for step in range(40):
    with tf.GradientTape() as tape:
        pred = xs @ w + b
        loss = tf.reduce_sum(tf.square(ys - pred))
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(lr * dw)
    b.assign_sub(lr * db)
    history.append(float(loss))
"""


def divergence_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
        and "training diverges" in note["text"]
    ]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_summed_loss_that_diverges(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = divergence_notes(checked_report(run(kernel, LOOP)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert re.match(
        r"The loss went from [\d.e+]+ at step 1 to [\d.e+]+ at step \d+, and was nan at "
        r"step \d+ \(`loss` given to `tape.gradient`, line 9\): training diverges\. "
        r"`loss = tf.reduce_sum\(tf.square\(ys - pred\)\)` sums the per-example losses",
        text,
    ), text
    assert "every step, is 256 times that of the mean loss" in text
    assert shown(kernel, "np.isnan(history[-1])") == "True"  # the symptom, no error
    fix = re.findall(r"`([^`]+)`", text)[-2]
    assert fix == "loss = tf.reduce_mean(tf.square(ys - pred))"
    fixed = LOOP.replace("loss = tf.reduce_sum(tf.square(ys - pred))", fix)
    assert divergence_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "history[-1] < 1e-3 < history[0]") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    scaled = LOOP.replace("lr = 0.1", "lr = 0.1 / 256")
    assert divergence_notes(checked_report(run(kernel, scaled))) == []
    assert shown(kernel, "history[-1] < history[0]") == "True"
    per_example = LOOP.replace(
        "tf.reduce_sum(tf.square(ys - pred))",
        "tf.reduce_mean(tf.reduce_sum(tf.square(ys - pred), axis=1))",
    )
    assert divergence_notes(checked_report(run(kernel, per_example))) == []


FIT = """keras.utils.set_random_seed(0)
wide = rng.normal(size=(512, 8)).astype("float32") * 2
target = (wide @ rng.normal(size=(8, 1))).astype("float32")
reg = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.01)
reg.compile(optimizer=opt, loss=keras.losses.MeanSquaredError(reduction="sum"))
hist = reg.fit(wide, target, epochs=5, verbose=0)
"""


def test_fit_with_a_summed_keras_loss_that_diverges(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = divergence_notes(checked_report(run(kernel, FIT)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`reg`'s training loss went from ")
    assert "at epoch 1 to " in text and "and was inf at epoch 5: training diverges" in text
    assert '`loss=keras.losses.MeanSquaredError(reduction="sum")` is built with' in text
    assert "every step is 32 times that of the mean loss" in text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == (
        "reg.compile(optimizer=opt, "
        'loss=keras.losses.MeanSquaredError(reduction="sum_over_batch_size"))'
    )
    fixed = FIT.replace(FIT.splitlines()[5], fix)
    assert divergence_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "hist.history['loss'][-1] < 0.01") == "True"
    # A summed loss with a step small enough for it trains: nothing to tell.
    slow = FIT.replace("SGD(0.01)", "SGD(0.01 / 32)")
    assert divergence_notes(checked_report(run(kernel, slow))) == []
    assert shown(kernel, "hist.history['loss'][-1] < hist.history['loss'][0]") == "True"
