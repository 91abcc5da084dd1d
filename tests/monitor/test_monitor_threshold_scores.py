"""A probability threshold applied to raw scores (issue #25, silent bugs): ``raw > 0.5`` or
``np.round(margins)`` on the output of a layer without a sigmoid. Found after the cell
from its expressions and the values their names hold (values below 0 or above 1); the
note names the expression, the value's shape and dtype, and gives the cut on raw scores
(and on their sigmoid) in the learner's names. Each fix is run in the kernel: the
accuracy becomes the one Keras' ``BinaryAccuracy`` gives on the probabilities, and the
fixed cell gets no note. Correct look-alikes stay silent: a threshold on sigmoid outputs
or on a sigmoid model's output, a cut of data that is not used as predictions, a cut at
0 on raw scores, and a name bound again later in the cell."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "from-logits"

DATA = """rng = np.random.default_rng(3)
feats = rng.normal(size=(200, 4)).astype("float32")
rule = np.array([[1.0], [-2.0], [0.5], [0.0]], "float32")
truth = (feats @ rule[:, 0] > 0).astype("float32")
scorer = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
scorer.layers[0].set_weights([rule * 0.8, np.zeros(1, "float32")])
checker = keras.metrics.BinaryAccuracy()
checker.update_state(truth, tf.sigmoid(scorer(feats)[:, 0]))
expected = float(checker.result())
"""


def threshold_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_keras_scores_cut_at_one_half(kernel: KernelSession) -> None:
    run(kernel, DATA)
    assert shown(kernel, "expected") == "1.0"
    cell = """raw = scorer(feats)[:, 0]
guesses = tf.cast(raw > 0.5, tf.float32)
hit_rate = float(tf.reduce_mean(tf.cast(guesses == truth, tf.float32)))
"""
    notes = threshold_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`raw > 0.5` (line 2 of this cell) cuts `raw` at 0.5")
    assert "`raw`, a (200,) float32 tensor, has values below 0 and above 1" in text
    fixes = re.findall(r"`([^`]+)`", text.split("Cut the raw scores", 1)[1])
    assert fixes == ["raw > 0.0", "tf.sigmoid(raw) > 0.5"]
    assert float(shown(kernel, "hit_rate")) < 0.95  # the wrong number, no error
    for fix in fixes:
        report = checked_report(run(kernel, cell.replace("raw > 0.5", fix)))
        assert threshold_notes(report) == [], fix
        assert shown(kernel, "hit_rate == expected") == "True", fix


def test_numpy_margins_rounded(kernel: KernelSession) -> None:
    """Scores from a matrix product in the cell: told without a comparison; the fix rounds
    their sigmoid in NumPy, and the flags stay a NumPy array."""
    run(kernel, DATA)
    cell = """margins = feats @ rule[:, 0]
flags = np.round(margins)
"""
    notes = threshold_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`np.round(margins)` (line 2 of this cell) rounds `margins`")
    assert "a (200,) float32 NumPy array" in notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "np.round(1 / (1 + np.exp(-margins)))"
    assert float(shown(kernel, "np.mean(flags == truth)")) < 0.8
    fixed = cell.replace("np.round(margins)", fix)
    assert threshold_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "type(flags).__name__, float(np.mean(flags == truth))") == ("ndarray 1.0")


def test_a_column_flattened_in_numpy(kernel: KernelSession) -> None:
    """``col.numpy().ravel() > 0.5``: the values are read from ``col``, the fix keeps the
    NumPy expression as written."""
    run(kernel, DATA)
    run(kernel, "col = scorer(feats)\n")
    cell = "agree = np.mean((col.numpy().ravel() > 0.5) == truth)\n"
    notes = threshold_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`col.numpy().ravel() > 0.5` (line 1 of this cell) cuts")
    assert "but `col`, a (200, 1) float32 tensor, has values below 0 and above 1" in text
    first_fix = re.findall(r"`([^`]+)`", text.split("Cut the raw scores", 1)[1])[0]
    assert first_fix == "col.numpy().ravel() > 0.0"
    fixed = cell.replace("col.numpy().ravel() > 0.5", first_fix)
    assert threshold_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "float(agree) == expected") == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """raw = scorer(feats)[:, 0]
probs = tf.sigmoid(raw)
by_prob = tf.reduce_mean(tf.cast(tf.cast(probs > 0.5, tf.float32) == truth, tf.float32))
by_score = tf.reduce_mean(tf.cast(tf.cast(raw > 0.0, tf.float32) == truth, tf.float32))
bright = np.mean(feats > 0.5)
squashed = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
out = squashed(feats)[:, 0]
agree = np.mean(np.round(out.numpy()) == truth)
later = raw
cut = tf.cast(later > 0.5, tf.float32) == truth
later = probs
"""
    assert threshold_notes(checked_report(run(kernel, cell))) == []


def test_random_scores_in_data_synthesis_stay_silent(kernel: KernelSession) -> None:
    """Scores drawn with NumPy to make data, cut at 0.8 to make labels and compared: no
    model made them, so they are data, whatever their range (a false alarm before)."""
    cell = """scores = np.random.rand(300) * 2 - 0.5
passed = (scores > 0.8).astype(int)
again = passed.copy()
share = (passed == again).mean()
"""
    assert threshold_notes(checked_report(run(kernel, cell))) == []
    run(kernel, "made = np.random.default_rng(1).normal(size=200)")
    assert threshold_notes(checked_report(run(kernel, "flags = np.round(made) == 1"))) == []


MODELS = """rng = np.random.default_rng(5)
rows = rng.normal(size=(200, 4)).astype("float32")
rule = np.array([[1.0], [-2.0], [0.5], [0.0]], "float32")
hits = (rows @ rule[:, 0] > 0).astype("float32")
sigmoid_net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
sigmoid_net.compile(optimizer="adam", loss="binary_crossentropy")
sigmoid_net.layers[0].set_weights([rule, np.zeros(1, "float32")])
logit_net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
logit_net.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
logit_net.layers[0].set_weights([rule * 0.01, np.full(1, 0.3, "float32")])
ruler = keras.metrics.BinaryAccuracy()
ruler.update_state(hits, sigmoid_net(rows)[:, 0])
right = float(ruler.result())
"""


def test_probabilities_cut_at_zero(kernel: KernelSession) -> None:
    """``probs > 0`` on a sigmoid model's predictions is True for every example: the note
    names the model, its activation and the predict call; the cut at 0.5 gives Keras's
    accuracy."""
    run(kernel, MODELS)
    run(kernel, "probs = sigmoid_net.predict(rows, verbose=0)[:, 0]")
    cell = "guessed = (probs > 0).astype(int)\nrate = float(np.mean(guessed == hits))\n"
    notes = threshold_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`probs > 0` (line 1 of this cell) cuts `probs` at 0"), text
    assert "comes from `sigmoid_net.predict(rows, verbose=0)[:, 0]`" in text
    assert "`sigmoid_net` ends with activation 'sigmoid'" in text
    assert "True for every example" in text
    assert shown(kernel, "guessed.all()") == "True"
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "probs > 0.5"
    report = checked_report(run(kernel, cell.replace("probs > 0", fix)))
    assert threshold_notes(report) == []
    assert shown(kernel, "rate == right") == "True"


def test_logits_of_a_from_logits_model_cut_at_one_half(kernel: KernelSession) -> None:
    """A model with no activation compiled with from_logits=True outputs raw scores, even
    when these few happen to lie in [0, 1]: a cut at 0.5 is told from the model, and the
    cut at 0 matches Keras's accuracy at threshold 0."""
    run(kernel, MODELS)
    cell = """outs = logit_net.predict(rows, verbose=0)[:, 0]
chosen = (outs > 0.5).astype("float32")
"""
    assert shown(kernel, "float(logit_net(rows).numpy().min()) > 0") == "True"
    notes = threshold_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert "comes from `logit_net.predict(rows, verbose=0)[:, 0]`" in text
    assert "`logit_net` ends with no activation and is compiled with from_logits=True" in text
    fix = re.findall(r"`([^`]+)`", text.split("Cut the raw scores", 1)[1])[0]
    assert fix == "outs > 0.0"
    report = checked_report(run(kernel, cell.replace("outs > 0.5", fix)))
    assert threshold_notes(report) == []
    run(kernel, "m = keras.metrics.BinaryAccuracy(threshold=0.0)\nm.update_state(hits, outs)\n")
    assert shown(kernel, "abs(float(m.result()) - float(np.mean(chosen == hits))) < 1e-6") == "True"


def test_model_output_look_alikes_stay_silent(kernel: KernelSession) -> None:
    """Raw scores cut at 0, a regression model's outputs in [0, 1] cut at 0.5, and
    probabilities cut at 0.5: nothing to tell."""
    run(kernel, MODELS)
    cell = """scores = logit_net.predict(rows, verbose=0)[:, 0]
by_score = (scores > 0).astype(int)
chance = sigmoid_net.predict(rows, verbose=0)[:, 0]
by_chance = (chance > 0.5).astype(int)
fitter = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
fitter.compile(optimizer="adam", loss="mse")
fitter.layers[0].set_weights([rule * 0.01, np.full(1, 0.5, "float32")])
amounts = fitter.predict(rows, verbose=0)[:, 0]
large = (amounts > 0.5).astype(int)
"""
    assert threshold_notes(checked_report(run(kernel, cell))) == []


def test_distances_cut_below_a_margin_stay_silent(kernel: KernelSession) -> None:
    """A model that outputs distances (never negative, often above 1) cut with ``< 0.5``
    to call pairs similar: not raw scores, so no logits advice (a cut at 0 would call no
    pair similar)."""
    cell = """left = keras.Input((3,))
right = keras.Input((3,))
gap = keras.layers.Lambda(
    lambda ab: keras.ops.sqrt(keras.ops.sum(keras.ops.square(ab[0] - ab[1]), axis=1, keepdims=True))
)([left, right])
pair_net = keras.Model([left, right], gap)
pa = np.random.default_rng(1).normal(size=(64, 3)).astype("float32")
pb = pa + np.random.default_rng(2).normal(scale=2.0, size=(64, 3)).astype("float32")
pair_dist = pair_net.predict([pa, pb], verbose=0)
similar = (pair_dist < 0.5).astype(int)
"""
    report = checked_report(run(kernel, cell))
    assert threshold_notes(report) == []


def test_own_sigmoid_cut_at_zero_inside_a_function(kernel: KernelSession) -> None:
    """``tf.sigmoid`` written by the learner, then a cut at 0, inside a ``def`` (its
    locals are gone after the cell: the source alone tells it)."""
    run(kernel, DATA)
    cell = """def rate(batch, labels):
    odds = tf.math.sigmoid(tf.matmul(batch, rule * 0.8))
    picked = tf.cast(odds[:, 0] > 0.0, tf.float32)
    return float(tf.reduce_mean(tf.cast(picked == labels, tf.float32)))

score = rate(feats, truth)
"""
    [text] = threshold_notes(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`odds[:, 0] > 0.0` (line 3 of this cell, in `rate`) cuts `odds[:, 0]` at 0 as if "
        "it held raw scores, but `odds` comes from `tf.math.sigmoid(tf.matmul(batch, rule * "
        "0.8))`: probabilities, never below 0"
    ), text
    assert shown(kernel, "score") == shown(kernel, "float(truth.mean())")  # the symptom
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "odds[:, 0] > 0.5"
    fixed = cell.replace("odds[:, 0] > 0.0", fix)
    assert threshold_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "score == expected") == "True"
    # Look-alike: the raw product cut at 0 (the right cut for scores).
    raw = cell.replace("tf.math.sigmoid(", "(")
    assert threshold_notes(checked_report(run(kernel, raw))) == []


def test_own_softmax_cut_at_zero_at_the_top_level(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """shares = keras.ops.softmax(tf.concat([-scorer(feats), scorer(feats)], axis=1))
chosen = keras.ops.cast(0 < shares[:, 1], "float32")
"""
    [text] = threshold_notes(checked_report(run(kernel, cell)))
    assert "`shares` comes from `keras.ops.softmax(" in text, text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "keras.ops.argmax(shares, axis=-1)"
    run(kernel, f"chosen = {fix}")
    matched = "float(np.mean(keras.ops.convert_to_numpy(chosen) == truth))"
    assert shown(kernel, f"{matched} == expected") == "True"
    # Look-alike: the class of the highest share, compared with the labels.
    picked = "chosen = keras.ops.argmax(shares, axis=-1)\nhits = chosen == truth\n"
    assert threshold_notes(checked_report(run(kernel, picked))) == []
