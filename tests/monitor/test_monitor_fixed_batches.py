"""One batch drawn from a dataset before a training loop and trained on at every step
(issue #25, ``symptoms/fixed_batches.py``).

``xb, yb = next(iter(pairs))`` above a loop of ``train_on_batch(xb, yb)`` is told with
the dataset's batch count and the fix (an iterator over the repeated dataset, a new
batch drawn at the top of the loop); the fix, applied, trains on different batches and
gives no note. A loop that draws its own batch, a dataset of one batch, and a cell that
says it overfits one batch on purpose stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """gen13 = np.random.default_rng(13)
feats13 = gen13.normal(size=(128, 4)).astype("float32")
labels13 = (feats13[:, 0] > 0).astype("float32")
pairs = tf.data.Dataset.from_tensor_slices((feats13, labels13)).shuffle(128).batch(16)
tiny = tf.data.Dataset.from_tensor_slices((feats13, labels13)).batch(16).take(1)
clf13 = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
clf13.compile(optimizer="sgd", loss="binary_crossentropy")
"""

WORDS = "takes one batch"


def notes_about(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if WORDS in n["text"]]


def test_one_batch_trained_on_at_every_step(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "xb, yb = next(iter(pairs))\n"
        "seen = []\n"
        "for i in range(12):\n"
        "    clf13.train_on_batch(xb, yb)\n"
        "    seen.append(float(xb[0, 0]))"
    )
    [text] = notes_about(cell, kernel)
    assert text.startswith(
        "`xb, yb = next(iter(pairs))` (line 1 of this cell) takes one batch of `pairs` "
        "once, before the loop, and the loop (line 3, `range(12)`) gives that same `xb` to "
        "`train_on_batch` at every step"
    )
    assert "`pairs` holds 8 batches a pass" in text
    assert "Fix: replace line 1 with `batches = iter(pairs.repeat())` and put " in text
    assert fix_in(text) == "xb, yb = next(batches)"
    fixed = (
        "batches = iter(pairs.repeat())\n"
        "seen = []\n"
        "for i in range(12):\n"
        "    xb, yb = next(batches)\n"
        "    clf13.train_on_batch(xb, yb)\n"
        "    seen.append(float(xb[0, 0]))"
    )
    assert notes_about(fixed, kernel) == []
    assert value_of(kernel, "len(set(seen)) > 1") is True


def test_meant_or_harmless_single_batches_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # Overfitting one batch on purpose, as a check that the model can learn.
    cell = (
        "# sanity check: the model must overfit this\n"
        "xb, yb = next(iter(pairs))\n"
        "for i in range(5):\n"
        "    clf13.train_on_batch(xb, yb)"
    )
    assert notes_about(cell, kernel) == []
    # The dataset holds one batch only.
    cell = "xt, yt = next(iter(tiny))\nfor i in range(5):\n    clf13.train_on_batch(xt, yt)"
    assert notes_about(cell, kernel) == []
    # A first batch looked at, then the loop draws its own.
    cell = (
        "xb, yb = next(iter(pairs))\n"
        "print(xb.shape)\n"
        "for xb, yb in pairs:\n"
        "    clf13.train_on_batch(xb, yb)"
    )
    assert notes_about(cell, kernel) == []
