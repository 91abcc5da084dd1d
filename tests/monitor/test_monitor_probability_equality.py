"""Probabilities compared with labels by equality (issue #25, silent bugs, found by our
own probe cells): ``np.mean(probs == ys)`` with a sigmoid model's outputs counts the
pairs where a probability is exactly 0 or 1, so the accuracy is near 0. Told from the
values after the cell; the fix cuts the probabilities at 0.5 and is run in the kernel:
the accuracy is Keras's own. Look-alikes stay silent: a threshold written, rounded
probabilities, two label arrays."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "from-logits"

DATA = """rng = np.random.default_rng(1)
obs = rng.normal(size=(300, 5)).astype("float32")
hits = (obs[:, 0] > 0).astype("float32")
judge = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1, activation="sigmoid")])
judge.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
judge.fit(obs, hits, epochs=3, verbose=0)
probs = judge.predict(obs, verbose=0).ravel()
keras_acc = judge.evaluate(obs, hits, verbose=0)[1]
"""


def equality_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
        and "of probabilities" in note["text"]
    ]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_probabilities_compared_with_labels(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "acc = np.mean(probs == hits)\n"
    notes = equality_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`probs == hits` (line 1 of this cell) compares `probs`, a (300,) float32 array of "
        "probabilities (from "
    ), notes[0]
    assert "so only 0 of the 300 pairs are equal" in notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "(probs > 0.5) == hits"
    assert equality_notes(checked_report(run(kernel, cell.replace("probs == hits", fix)))) == []
    assert shown(kernel, "abs(acc - keras_acc) < 1e-6") == "True"


def test_a_tensor_of_probabilities(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "odds = tf.constant(probs)\nlabels = hits.astype('int64')\nn_right = tf.reduce_sum(tf.cast(odds == labels, tf.int32))\n"  # noqa: E501
    notes = equality_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "tf.cast(odds > 0.5, labels.dtype) == labels"
    assert equality_notes(checked_report(run(kernel, cell.replace("odds == labels", fix)))) == []
    assert shown(kernel, "abs(int(n_right) / 300 - keras_acc) < 1e-6") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        "ok = np.mean((probs > 0.5) == hits)\n",
        "rounded = np.round(probs)\nok = np.mean(rounded == hits)\n",
        "same = np.mean(hits == hits[::-1])\n",
    ):
        assert equality_notes(checked_report(run(kernel, cell))) == [], cell
