"""An epoch's mean from a hand-written sum that does not sum that epoch (issue #25,
silent bugs found by symptoms): a sum overwritten (``=`` where ``+=`` was meant) in the
batch loop, a sum started once before the epoch loop and divided by one epoch's count at
every epoch, and batch means divided by the number of examples. Found after the cell
from the loop structure (``ast``) and, for the last two, the values: how many epochs
ran, how many batches the dataset gives and what the divisor holds. Each note names the
statements and lines as written; its fix is applied in the kernel: the note is gone and
the printed means equal each epoch's real mean. Look-alikes stay silent: ``+=`` with a
reset in the epoch, a sum made by a helper and reset to zero in the loop, a running best
kept under an ``if``, a sum over the whole run divided by a count summed the same way,
one epoch, and per-example sums divided by the number of examples.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "epoch-figures"
SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(5)
rows = np.random.default_rng(9).normal(size=(80, 3)).astype("float32")
goal = rows @ np.array([[1.0], [-2.0], [0.5]], "float32")
chunks = tf.data.Dataset.from_tensor_slices((rows, goal)).batch(20)
reg = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
step_opt = keras.optimizers.SGD(0.05)


def batch_losses():
    # What each batch's loss is now, without training: the real epoch mean to compare.
    return [float(tf.reduce_mean(tf.square(yb - reg(xb)))) for xb, yb in chunks]
"""
KERNEL = KernelSetup(after_load=SETUP)

OVERWRITTEN = """history = []
for epoch in range(3):
    epoch_loss = 0.0
    n_batches = 0
    for xb, yb in chunks:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(yb - reg(xb, training=True)))
        grads = tape.gradient(loss, reg.trainable_variables)
        step_opt.apply_gradients(zip(grads, reg.trainable_variables))
        epoch_loss = float(loss)
        n_batches += 1
    history.append(epoch_loss / n_batches)
"""

NEVER_RESET = """running_total = 0.0
history = []
for epoch in range(3):
    for xb, yb in chunks:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(yb - reg(xb, training=True)))
        grads = tape.gradient(loss, reg.trainable_variables)
        step_opt.apply_gradients(zip(grads, reg.trainable_variables))
        running_total += float(loss)
    history.append(running_total / len(chunks))
"""

# The mean of the last epoch's batch losses, recorded as the loop runs (not the user's).
WITH_CHECK = "        seen.append(float(loss))\n"


def figure_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def notes_of(kernel: KernelSession, cell: str) -> list[str]:
    return figure_notes(checked_report(run(kernel, cell)))


def recording(cell: str, statement: str) -> str:
    """The cell with each batch's loss kept in ``seen`` (reset every epoch)."""
    cell = cell.replace(statement, statement + WITH_CHECK)
    return cell.replace("for epoch in range(3):\n", "for epoch in range(3):\n    seen = []\n")


def last_epoch_is_right(kernel: KernelSession) -> bool:
    return bool(value_of(kernel, "abs(history[-1] - sum(seen) / len(seen)) < 1e-6"))


def test_a_sum_overwritten_in_the_batch_loop(kernel: KernelSession) -> None:
    cell = recording(OVERWRITTEN, "        epoch_loss = float(loss)\n")
    [text] = notes_of(kernel, cell)
    assert text.startswith(
        "A sum that is overwritten, not added to: `epoch_loss = 0.0` (line 4) starts a "
        "sum, but `epoch_loss = float(loss)` (line 11, in `for xb, yb in chunks:`) "
        "replaces it at every pass."
    ), text
    assert "holds only the value of the last pass" in text
    assert "`epoch_loss / n_batches` (line 14) is not the mean it stands for" in text
    assert not last_epoch_is_right(kernel)
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "epoch_loss += float(loss)"
    fixed = cell.replace("        epoch_loss = float(loss)\n", f"        {fix}\n")
    assert notes_of(kernel, fixed) == []
    assert last_epoch_is_right(kernel)


def test_a_running_sum_started_once_before_the_epochs(kernel: KernelSession) -> None:
    cell = recording(NEVER_RESET, "        running_total += float(loss)\n")
    [text] = notes_of(kernel, cell)
    assert text.startswith(
        "A running sum never reset between epochs: `running_total = 0.0` (line 1) runs "
        "once, before `for epoch in range(3):`"
    ), text
    assert "`running_total / len(chunks)` (line 12) divides the sum of all epochs" in text
    assert "over these 3 epochs" in text
    assert not last_epoch_is_right(kernel)
    fix = re.findall(r"`([^`]+)`", text)[-2]
    assert fix == "running_total = 0.0"
    assert text.endswith(f"put `{fix}` as the first line of the body of `for epoch in range(3):`.")
    fixed = cell.replace("    seen = []\n", f"    seen = []\n    {fix}\n")
    assert notes_of(kernel, fixed) == []
    assert last_epoch_is_right(kernel)


WRONG_COUNT = """mse = keras.losses.MeanSquaredError()
history = []
for epoch in range(2):
    total = 0.0
    for xb, yb in chunks:
        with tf.GradientTape() as tape:
            loss = mse(yb, reg(xb, training=True))
        grads = tape.gradient(loss, reg.trainable_variables)
        step_opt.apply_gradients(zip(grads, reg.trainable_variables))
        total += float(loss)
    history.append(total / len(rows))
"""


def test_batch_means_divided_by_the_number_of_examples(kernel: KernelSession) -> None:
    cell = recording(WRONG_COUNT.replace("range(2)", "range(3)"), "        total += float(loss)\n")
    [text] = notes_of(kernel, cell)
    assert text.startswith(
        "A mean divided by the wrong count: `total += float(loss)` (line 11) adds one value "
        "per pass of `for xb, yb in chunks:`, each the mean loss of a batch (`loss`), and "
        "the loop makes 4 passes, but `total / len(rows)` (line 13) divides the sum by "
        "`len(rows)`, which is 80: the figure is 20 times too small"
    ), text
    assert not last_epoch_is_right(kernel)
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "total / len(chunks)"
    fixed = cell.replace("total / len(rows)", fix)
    assert notes_of(kernel, fixed) == []
    assert last_epoch_is_right(kernel)


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    # A sum of per-example losses divided by the number of examples: a right mean.
    per_example = WRONG_COUNT.replace(
        "loss = mse(yb, reg(xb, training=True))",
        "loss = tf.reduce_sum(tf.square(yb - reg(xb, training=True)))",
    )
    assert notes_of(kernel, per_example) == []
    # A sum added to and started again in each epoch.
    right = OVERWRITTEN.replace("epoch_loss = float(loss)", "epoch_loss += float(loss)")
    assert notes_of(kernel, right) == []
    # Started before the epochs and reset to zero in each: the sum is made by a helper.
    helper_sum = """epoch_total = 0.0
n_seen = 0


def add_batch(value):
    global epoch_total, n_seen
    epoch_total += value
    n_seen += 1


for epoch in range(3):
    epoch_total = 0.0
    n_seen = 0
    for xb, yb in chunks:
        add_batch(float(tf.reduce_mean(tf.square(yb - reg(xb)))))
    print(epoch, epoch_total / n_seen)
print("last epoch:", epoch_total / n_seen)
"""
    assert notes_of(kernel, helper_sum) == []
    # A running best: bound under an `if`, never divided as a mean of it.
    best = """best = 0.0
for epoch in range(3):
    for xb, yb in chunks:
        loss = float(tf.reduce_mean(tf.square(yb - reg(xb))))
        if loss > best:
            best = loss
    print(epoch, best / 2)
"""
    assert notes_of(kernel, best) == []
    # An average over the whole run, sum and count both kept across epochs, on purpose.
    overall = """total_loss = 0.0
steps_so_far = 0
for epoch in range(3):
    for xb, yb in chunks:
        total_loss += float(tf.reduce_mean(tf.square(yb - reg(xb))))
        steps_so_far += 1
    print(epoch, total_loss / steps_so_far)
"""
    assert notes_of(kernel, overall) == []
    # One epoch: a sum started before it is that epoch's.
    assert notes_of(kernel, NEVER_RESET.replace("range(3)", "range(1)")) == []
