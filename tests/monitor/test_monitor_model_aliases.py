"""A trained Keras model given a second name and trained under it (issue #25, silent
bugs): ``tuned = reference_net`` copies nothing, so fitting ``tuned`` overwrites
``reference_net``. Told in the cell that trains the second name; the printed fix
(``clone_model`` and ``set_weights`` where the name is made, compile, then fit) is run and
the reference model's weights stay as they were, with no note. Look-alikes stay silent: a
second name only read, an alias of a model never trained, a clone."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "clone-model"

TRAIN_REFERENCE = """gen = np.random.default_rng(12)
rows = gen.normal(size=(96, 5)).astype("float32")
target = rows @ gen.normal(size=(5, 1)).astype("float32")
reference_net = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4), keras.layers.Dense(1)])
reference_net.compile(optimizer="adam", loss="mse")
reference_net.fit(rows, target, epochs=2, verbose=0)
kept = [w.copy() for w in reference_net.get_weights()]
"""
ALIAS = "tuned = reference_net\n"
TUNE = """tuned.compile(optimizer=keras.optimizers.SGD(0.05), loss="mae")
tuned.fit(rows[:48], target[:48] * 2.0, epochs=3, verbose=0)
"""
UNCHANGED = "all(np.array_equal(a, b) for a, b in zip(kept, reference_net.get_weights()))"


def alias_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "copied nothing" in n["text"]
    ]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_a_trained_model_aliased_then_trained(kernel: KernelSession) -> None:
    run(kernel, TRAIN_REFERENCE)
    assert alias_notes(checked_report(run(kernel, ALIAS))) == []
    notes = alias_notes(checked_report(run(kernel, TUNE)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`tuned` is `reference_net`: `tuned = reference_net` gave")
    assert shown(kernel, UNCHANGED) == "False"  # what the note says: it trained both
    clone, weights = re.findall(r"`([^`]+)`", notes[0])[-4:-2]
    assert clone == "tuned = keras.models.clone_model(reference_net)"
    assert weights == "tuned.set_weights(reference_net.get_weights())"
    run(kernel, TRAIN_REFERENCE)
    assert alias_notes(checked_report(run(kernel, f"{clone}\n{weights}\n"))) == []
    assert alias_notes(checked_report(run(kernel, TUNE))) == []
    assert shown(kernel, UNCHANGED) == "True"


def test_the_alias_trained_in_the_same_cell(kernel: KernelSession) -> None:
    notes = alias_notes(checked_report(run(kernel, TRAIN_REFERENCE + ALIAS + TUNE)))
    assert len(notes) == 1, notes


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, TRAIN_REFERENCE)
    # A second name only read.
    report = checked_report(
        run(
            kernel,
            "frozen_ref = reference_net\nscore = frozen_ref.evaluate(rows, target, verbose=0)\n",
        )
    )
    assert alias_notes(report) == []
    # An alias of a model never trained, then trained under the new name.
    fresh = (
        "draft = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])\n"
        "final = draft\n"
        "final.compile(optimizer='sgd', loss='mse')\n"
        "final.fit(rows, target, epochs=1, verbose=0)\n"
    )
    assert alias_notes(checked_report(run(kernel, fresh))) == []
    # A clone with the weights, trained.
    cloned = (
        "branch = keras.models.clone_model(reference_net)\n"
        "branch.set_weights(reference_net.get_weights())\n"
        "branch.compile(optimizer='sgd', loss='mse')\n"
        "branch.fit(rows, target, epochs=1, verbose=0)\n"
    )
    assert alias_notes(checked_report(run(kernel, cloned))) == []
    assert shown(kernel, UNCHANGED) == "True"
