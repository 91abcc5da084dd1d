"""A fit validated on its own training data (issue #25, silent bugs, found by our own
probe cells): ``fit(x, y, validation_data=(x, y))`` or ``validation_data=train_ds``
makes the ``val_`` figures repeat the training ones. Told from what fit was given; the
fix (``validation_split=0.2`` in place of ``validation_data=...``) is run in the kernel:
fit then validates on 60 held-out examples, and no note. Look-alikes stay silent: held
out arrays, a split."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "keras-validation-data"

DATA = """rng = np.random.default_rng(1)
obs = rng.normal(size=(300, 5)).astype("float32")
hits = (obs[:, 0] > 0).astype("float32")
judge = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1, activation="sigmoid")])
judge.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
"""


def copy_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
        and "validates on the data it trains on" in note["text"]
    ]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_validation_data_is_the_training_arrays(kernel: KernelSession) -> None:
    run(kernel, DATA)
    call = "judge.fit(obs, hits, epochs=2, verbose=0, validation_data=(obs, hits))"
    notes = copy_notes(checked_report(run(kernel, f"log = {call}\n")))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        f"`{call}` validates on the data it trains on: its `validation_data` is the same "
        "arrays as its training data."
    )
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "judge.fit(obs, hits, epochs=2, verbose=0, validation_split=0.2)"
    assert copy_notes(checked_report(run(kernel, f"log = {fix}\n"))) == []
    # Validated on the 60 examples held out (the last 20%), not on the training data.
    held_out = "judge.evaluate(obs[240:], hits[240:], verbose=0)[0]"
    assert shown(kernel, f"abs(log.history['val_loss'][-1] - {held_out}) < 1e-5") == "True"


def test_validation_data_is_the_training_dataset(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "pairs = tf.data.Dataset.from_tensor_slices((obs, hits)).batch(32)\n"
        "log = judge.fit(pairs, epochs=1, verbose=0, validation_data=pairs)\n"
    )
    notes = copy_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "is the same dataset as its training data" in notes[0]


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        "log = judge.fit(obs[:240], hits[:240], epochs=1, verbose=0,"
        " validation_data=(obs[240:], hits[240:]))\n",
        "log = judge.fit(obs, hits, epochs=1, verbose=0, validation_split=0.2)\n",
    ):
        assert copy_notes(checked_report(run(kernel, cell))) == [], cell
