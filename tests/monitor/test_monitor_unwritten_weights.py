"""New weights computed and never written into the model that is then scored (issue #25,
``symptoms/discarded_weights.py``, ``unwritten_notes``).

A blend or an average of models' weights, assigned to a name the cell never reads again,
then the model evaluated or used to predict without ``set_weights``: the score is of the
old weights. The note names the assignment, the model and the scoring call; the fix,
applied, writes the new weights in. Look-alikes stay silent: a snapshot of the model's own
weights, new weights written back, new weights read later in the cell."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """keras.utils.set_random_seed(4)
gen = np.random.default_rng(4)
feats = gen.normal(size=(80, 5)).astype("float32")
marks = (feats[:, 0] > 0).astype("int32")

def make_net():
    inputs = keras.Input(shape=(5,))
    hidden = keras.layers.Dense(6, activation="tanh")(inputs)
    return keras.Model(inputs, keras.layers.Dense(2, activation="softmax")(hidden))

pilot, copilot = make_net(), make_net()
for net in (pilot, copilot):
    net.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
pilot.fit(feats[:40], marks[:40], epochs=1, verbose=0)
copilot.fit(feats[40:], marks[40:], epochs=1, verbose=0)

def layerwise_mean(weight_lists):
    return [np.mean(np.stack(group), axis=0) for group in zip(*weight_lists)]
"""

WORDS = "nothing writes them into it"


def notes_with(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if WORDS in n["text"]]


BLEND = """blended = [(a + b) / 2 for a, b in zip(pilot.get_weights(), copilot.get_weights())]
print(pilot.evaluate(feats, marks, verbose=0))"""


def test_a_blend_never_set_before_the_model_is_evaluated(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = notes_with(BLEND, kernel)
    assert text.startswith(
        "`blended = [(a + b) / 2 for a, b in zip(pilot.get_weights(), copilot.get_weights())]` "
        "(line 1 of this cell) computes 4 arrays shaped like `pilot`'s weights ((5, 6), (6,), "
        "(6, 2), (2,))"
    ), text
    assert "`pilot.evaluate(feats, marks, verbose=0)` (line 2) scores `pilot`'s old weights" in text
    fix = fix_in(text)
    assert fix == "pilot.set_weights(blended)"
    lines = BLEND.split("\n")
    assert notes_with("\n".join([lines[0], fix, lines[1]]), kernel) == []
    assert value_of(kernel, "bool(np.allclose(pilot.get_weights()[0], blended[0]))") is True


def test_rounds_of_averages_never_set(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """scores = []
for round_no in range(2):
    merged = layerwise_mean([pilot.get_weights(), copilot.get_weights()])
    probs = pilot.predict(feats, verbose=0)
    scores.append(float(np.mean(probs.argmax(axis=1) == marks)))"""
    [text] = notes_with(cell, kernel)
    assert "`merged = layerwise_mean([pilot.get_weights(), copilot.get_weights()])`" in text
    assert "(line 3 of this cell)" in text and "`pilot.set_weights(merged)`" in text


def test_snapshots_written_back_and_read_weights_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        # A snapshot of the model's own weights.
        "start = pilot.get_weights()\nprint(pilot.evaluate(feats, marks, verbose=0))",
        # The new weights written back.
        "avg = layerwise_mean([pilot.get_weights(), copilot.get_weights()])\n"
        "pilot.set_weights(avg)\nprint(pilot.evaluate(feats, marks, verbose=0))",
        # The new weights kept and read later in the cell (put into another model).
        "avg2 = layerwise_mean([pilot.get_weights(), copilot.get_weights()])\n"
        "print(pilot.evaluate(feats, marks, verbose=0))\nprint(len(avg2))",
        # New weights computed after the scoring: nothing scored the old ones by mistake.
        "print(pilot.evaluate(feats, marks, verbose=0))\n"
        "later = layerwise_mean([pilot.get_weights(), copilot.get_weights()])",
    ):
        assert notes_with(cell, kernel) == [], cell
