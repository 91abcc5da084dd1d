"""``keras.metrics.Accuracy()`` compiled for a model that outputs probabilities (issue
#25, our own probe cell): that metric counts predictions exactly equal to the labels,
so it stays near 0. Told from the compiled metrics and the output layer; the fix (the
string ``"accuracy"``, which Keras resolves from the shapes) is run in the kernel: the
accuracy fit reports is the share of thresholded predictions equal to the labels.
Look-alike: the string ``"accuracy"`` stays silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """rng = np.random.default_rng(1)
obs = rng.normal(size=(300, 5)).astype("float32")
hits = (obs[:, 0] > 0).astype("float32")
judge = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1, activation="sigmoid")])
"""
COMPILE = (
    'judge.compile(optimizer="adam", loss="binary_crossentropy", '
    "metrics=[keras.metrics.Accuracy()])"
)
FIT = "log = judge.fit(obs, hits, epochs=2, verbose=0)\n"


def exact_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "labels-and-loss"
        and "keras.metrics.Accuracy" in note["text"]
    ]


def test_exact_accuracy_on_probabilities(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = exact_notes(checked_report(run(kernel, f"{COMPILE}\n{FIT}")))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`judge` is compiled with the metric `accuracy`, a `keras.metrics.Accuracy`: it "
        "counts the predictions exactly equal to the labels, but the model outputs "
        "probabilities (sigmoid)"
    ), notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == (
        'judge.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])'
    )
    assert exact_notes(checked_report(run(kernel, f"{fix}\n{FIT}"))) == []
    share = "np.mean((judge.predict(obs, verbose=0).ravel() > 0.5) == hits)"
    check = f"print(abs(judge.evaluate(obs, hits, verbose=0)[1] - {share}) < 1e-6)"
    assert run(kernel, check).stdout.strip() == "True"
