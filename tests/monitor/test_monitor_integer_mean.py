"""An accuracy averaged in an integer dtype (issue #25, silent bugs):
``tf.reduce_mean(tf.cast(hits, tf.int32))`` truncates the mean of 0s and 1s to 0. Found
after the cell from its source (the cast of a comparison or of a boolean name, written in
the mean or assigned to a name the mean reads); the note names the call and gives it
with a float cast, in the learner's names. Each fix is run in the kernel and gives the
accuracy Keras' ``SparseCategoricalAccuracy`` gives, with no note. Correct look-alikes
stay silent: a float cast before the mean, NumPy's and ``keras.ops``' means of an
integer cast (they return floats), and an integer cast of values that are not booleans."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "dtype-casting"

# Seeded: `0 < expected < 1` depends on the model's initial weights (unseeded, an
# accuracy of exactly 0 or 1 came about once in 200,000 draws).
DATA = """keras.utils.set_random_seed(7)
rng = np.random.default_rng(7)
feats = rng.normal(size=(40, 5)).astype("float32")
model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4)])
logits = model(feats)
targets = tf.constant(np.argmax(logits.numpy() + rng.normal(scale=0.5, size=(40, 4)), axis=-1))
meter = keras.metrics.SparseCategoricalAccuracy()
meter.update_state(targets, logits)
expected = float(meter.result())
"""


def mean_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "averages" in note["text"]
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_mean_of_a_comparison_cast_to_int32(kernel: KernelSession) -> None:
    run(kernel, DATA)
    assert 0.0 < float(shown(kernel, "expected")) < 1.0
    call = "tf.reduce_mean(tf.cast(tf.argmax(logits, axis=-1) == targets, tf.int32))"
    cell = f"accuracy = {call}\n"
    notes = mean_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(f"`{call}` (line 1 of this cell) averages 0s and 1s in int32")
    assert shown(kernel, "int(accuracy)") == "0"  # the wrong number, no error
    fix = last_code(notes[0])
    assert fix == call.replace("tf.int32", "tf.float32")
    assert mean_notes(checked_report(run(kernel, f"accuracy = {fix}\n"))) == []
    assert shown(kernel, "float(accuracy) == expected") == "True"


def test_mean_of_a_name_holding_the_int_cast(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """hits = tf.cast(tf.equal(tf.argmax(logits, axis=-1), targets), "int64")
rate = tf.reduce_mean(hits)
"""
    notes = mean_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.reduce_mean(hits)` (line 2 of this cell) (`hits` is "
        '`tf.cast(tf.equal(tf.argmax(logits, axis=-1), targets), "int64")`) averages 0s '
        "and 1s in int64"
    )
    fix = last_code(text)
    assert fix == "tf.reduce_mean(tf.cast(hits, tf.float32))"
    fixed = cell.replace("tf.reduce_mean(hits)", fix)
    assert mean_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "float(rate) == expected") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """picked = tf.argmax(logits, axis=-1)
by_float = tf.reduce_mean(tf.cast(picked == targets, tf.float32))
by_numpy = np.mean(tf.cast(picked == targets, tf.int32).numpy())
by_ops = keras.ops.mean(tf.cast(picked == targets, tf.int32))
sizes = tf.constant([3.7, 4.2, 5.9])
whole_mean = tf.reduce_mean(tf.cast(sizes, tf.int32))
"""
    assert mean_notes(checked_report(run(kernel, cell))) == []
    means = "[float(by_float), float(by_numpy), float(by_ops)]"
    assert shown(kernel, f"all(abs(m - expected) < 1e-6 for m in {means})") == "True"
