"""A Keras metric read every epoch of a custom loop and never reset there (issue #25,
silent bugs found by symptoms): each epoch's figure averages all epochs so far. Found
after the cell from the loop structure (``ast``) and the metric's count; the note names
the metric, its ``result()`` line, the epoch loop and the count, and the fix (the
metric's ``reset_state()`` put first in the epoch loop's body) is run in the kernel:
the note is gone and the printed figures are each epoch's own. Look-alikes stay silent:
a reset in the loop (also by a helper of the notebook, or through a loop over the
metrics), a metric read only after the loop, one epoch, and a metric created in the loop.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "epoch-figures"
SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(7)
points = np.random.default_rng(3).normal(size=(96, 4)).astype("float32")
labels = (points[:, 0] + points[:, 1] > 0).astype("int32")
batches = tf.data.Dataset.from_tensor_slices((points, labels)).batch(32)
net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
sgd = keras.optimizers.SGD(0.5)
xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
"""
KERNEL = KernelSetup(after_load=SETUP)

# The TensorFlow guide's loop, with the metric's reset left out.
LOOP = """acc_metric = keras.metrics.SparseCategoricalAccuracy()
per_epoch = []
for epoch in range(4):
    for xb, yb in batches:
        with tf.GradientTape() as tape:
            logits = net(xb)
            loss = xent(yb, logits)
        grads = tape.gradient(loss, net.trainable_variables)
        sgd.apply_gradients(zip(grads, net.trainable_variables))
        acc_metric.update_state(yb, logits)
    per_epoch.append(float(acc_metric.result()))
"""


def figure_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def notes_of(kernel: KernelSession, cell: str) -> list[str]:
    return figure_notes(checked_report(run(kernel, cell)))


def first_line_of_body(cell: str, header: str, line: str) -> str:
    """The cell with ``line`` put first in the body of the loop that starts ``header``."""
    lines = cell.split("\n")
    index = next(i for i, text in enumerate(lines) if text.strip() == header)
    indent = re.match(r"\s*", lines[index + 1]).group(0)  # type: ignore[union-attr]
    return "\n".join([*lines[: index + 1], indent + line, *lines[index + 1 :]])


def fixes_in(text: str) -> list[str]:
    told = text.split("Start each epoch afresh: put ", 1)[1]
    return re.findall(r"`([^`]+\.reset_state\(\))`", told.split(" at the start of the body", 1)[0])


def test_a_metric_read_every_epoch_and_never_reset(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, LOOP)
    assert text.startswith(
        "A metric never reset between epochs: `acc_metric.result()` (line 11) is read at "
        "every pass of `for epoch in range(4):` (line 3), but `acc_metric` is never reset"
    ), text
    assert "each epoch's figure is the average over all epochs so far" in text
    # 96 samples a epoch, four epochs: the count read from the metric after the cell.
    assert "`acc_metric` has counted 384 values over 4 epochs" in text
    assert text.endswith("at the start of the body of `for epoch in range(4):`.")
    fixes = fixes_in(text)
    assert fixes == ["acc_metric.reset_state()"]
    fixed = first_line_of_body(LOOP, "for epoch in range(4):", fixes[0])
    assert notes_of(kernel, fixed) == []
    # Each figure is now the last epoch's own accuracy: the metric counted one epoch.
    count = run(kernel, "print(int(acc_metric.count.numpy()))").stdout.strip()
    assert count == "96"
    check = """own = float(tf.reduce_mean(tf.cast(
    tf.argmax(net(points), axis=1, output_type=tf.int32) == labels, tf.float32)))
print(abs(per_epoch[-1] - own) < 0.1, len(per_epoch))"""
    assert run(kernel, check).stdout.split() == ["True", "4"]


HELPER_STEP = """loss_mean = keras.metrics.Mean()
hits = keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        logits = net(xb, training=True)
        loss = xent(yb, logits)
    grads = tape.gradient(loss, net.trainable_variables)
    sgd.apply_gradients(zip(grads, net.trainable_variables))
    loss_mean(loss)
    hits(yb, logits)


for epoch in range(1, 4):
    for xb, yb in batches:
        train_step(xb, yb)
    print(f"epoch {epoch}: loss {loss_mean.result():.3f}, accuracy {hits.result():.3f}")
"""


def test_metrics_updated_in_a_tf_function_step(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, HELPER_STEP)
    assert "`loss_mean.result()` (line 19), `hits.result()` (line 19) are read" in text
    assert "`for epoch in range(1, 4):` (line 16)" in text
    assert "`loss_mean` has counted 9 values over 3 epochs" in text
    fixes = fixes_in(text)
    assert fixes == ["loss_mean.reset_state()", "hits.reset_state()"]
    fixed = HELPER_STEP
    for fix in reversed(fixes):
        fixed = first_line_of_body(fixed, "for epoch in range(1, 4):", fix)
    assert notes_of(kernel, fixed) == []
    counts = "print(int(loss_mean.count.numpy()), int(hits.count.numpy()))"
    assert run(kernel, counts).stdout.split() == ["3", "96"]


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    # Reset at the end of the epoch, after the figure is read.
    reset_last = LOOP.replace(
        "    per_epoch.append(float(acc_metric.result()))\n",
        "    per_epoch.append(float(acc_metric.result()))\n    acc_metric.reset_state()\n",
    )
    assert notes_of(kernel, reset_last) == []
    # A helper of the notebook resets it.
    run(kernel, "def start_epoch():\n    acc_metric.reset_state()\n")
    helper_reset = first_line_of_body(LOOP, "for epoch in range(4):", "start_epoch()")
    assert notes_of(kernel, helper_reset) == []
    # Reset through a loop over the metrics: which ones cannot be named, so nothing is said.
    through_loop = first_line_of_body(
        LOOP, "for epoch in range(4):", "for each in [acc_metric]: each.reset_state()"
    )
    assert notes_of(kernel, through_loop) == []
    # A figure over the whole run, read once after the loop.
    after = LOOP.replace(
        "    per_epoch.append(float(acc_metric.result()))\n",
        "overall = float(acc_metric.result())\n",
    )
    assert notes_of(kernel, after) == []
    # One epoch: nothing averaged across epochs.
    assert notes_of(kernel, LOOP.replace("range(4)", "range(1)")) == []
    # A new metric object each epoch.
    fresh = LOOP.replace("acc_metric = keras.metrics.SparseCategoricalAccuracy()\n", "").replace(
        "for epoch in range(4):\n",
        "for epoch in range(4):\n    acc_metric = keras.metrics.SparseCategoricalAccuracy()\n",
    )
    assert notes_of(kernel, fresh) == []
