"""A callback reading a logs key no compiled model logs, with a default (issue #25, logs
keys that do not exist): told in the cell that defines the callback, naming the class, the
read, the keys the compiled model logs and the read rewritten. With the fix, a fit sees
the figure; reading a key the model logs stays silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

SETUP = """clf = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
clf.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
feats = np.random.default_rng(0).normal(size=(40, 4)).astype("float32")
marks = (feats[:, 0] > 0).astype("int32")
"""

CELL = """class KeepBest(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.best = 0.0

    def on_epoch_end(self, epoch, logs=None):
        score = logs.get("val_acc", 0.0)
        self.best = max(self.best, score)

keeper = KeepBest()
"""

FIT = "clf.fit(feats, marks, validation_split=0.25, epochs=2, verbose=0, callbacks=[keeper])\n"


def callback_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "callback-mode"
    ]


def test_logs_key_no_model_logs(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = callback_notes(checked_report(run(kernel, CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        '`KeepBest.on_epoch_end` reads `logs.get("val_acc", 0.0)` (line 6 of this cell), '
        "but no compiled model logs 'val_acc': `clf` logs 'loss', 'accuracy', 'val_loss', "
        "'val_accuracy'"
    ), text
    fix = 'logs.get("val_accuracy", 0.0)'
    assert f"Read the key fit logs: `{fix}`." in text
    run(kernel, FIT)
    assert value_of(kernel, "keeper.best") == 0.0
    fixed = CELL.replace('logs.get("val_acc", 0.0)', fix)
    assert callback_notes(checked_report(run(kernel, fixed))) == []
    run(kernel, FIT)
    assert value_of(kernel, "keeper.best") > 0.0


def test_logged_key_stays_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    silent = CELL.replace('"val_acc"', '"val_loss"')
    assert callback_notes(checked_report(run(kernel, silent))) == []
