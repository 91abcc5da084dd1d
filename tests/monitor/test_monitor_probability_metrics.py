"""A Keras probability metric given values that are not probabilities, and a percentile
asked for with a fraction (issue #25, ``symptoms/probability_metrics.py`` and
``symptoms/quantile_scale.py``).

A Recall updated with distances, a BinaryAccuracy called on raw scores and an AUC given
gaps above 1 are told with the fix in the learner's names (the learner's own cut of the
same values, a cut at 0 for raw scores, the values scaled into [0, 1] for an AUC); each
fix, applied, gives the figure computed by hand and no note. ``np.percentile`` given 0.95,
``np.nanpercentile`` given an array of fractions and a ``q=`` list of fractions are told;
each fix gives the quantile. Look-alikes stay silent: probabilities, a metric with its own
threshold or ``from_logits=True``, 0/1 predictions, percentiles in percent, quantiles in
fractions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """keras.utils.set_random_seed(11)
rng = np.random.default_rng(11)
dist = rng.gamma(2.0, 1.5, 300).astype("float32")
is_fraud = (dist + rng.normal(0, 1, 300) > 5).astype("int32")
gaps = (dist * 2.0).astype("float32")
features = rng.normal(size=(240, 5)).astype("float32")
labels = (features[:, 0] - features[:, 1] > 0).astype("float32")
clf = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
clf.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
clf.fit(features, labels, epochs=3, verbose=0)
raw = tf.squeeze(clf(features), -1)
latency_ms = rng.lognormal(3.0, 0.5, 1000)
heights = rng.normal(170.0, 8.0, 500)
"""


def notes_about(code: str, kernel: KernelSession, word: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if word in n["text"]]


def test_recall_given_distances_is_cut_where_the_learner_cut_them(
    kernel: KernelSession,
) -> None:
    run(kernel, DATA)
    run(kernel, "cutoff = float(np.median(dist)) * 1.5\nflags = dist > cutoff")
    cell = (
        "rec = keras.metrics.Recall()\nrec.update_state(is_fraud, dist)\nr0 = float(rec.result())"
    )
    [text] = notes_about(cell, kernel, "Recall")
    assert text.startswith(
        "`rec.update_state(is_fraud, dist)` (line 2 of this cell) gives the Keras Recall "
        "`rec` `dist`"
    )
    assert "not probabilities" in text and "`dist > 0.5` decides" in text
    fix = fix_in(text)
    assert fix == "rec.update_state(is_fraud, dist > cutoff)"
    fixed = f"rec = keras.metrics.Recall()\n{fix}\nr1 = float(rec.result())"
    assert notes_about(fixed, kernel, "Recall") == []
    hand = "float(np.sum(flags & (is_fraud == 1)) / np.sum(is_fraud == 1))"
    assert value_of(kernel, f"abs(r1 - {hand}) < 1e-6") is True
    assert value_of(kernel, f"abs(r0 - {hand}) > 0.01") is True


CUT_DATA = """score_rng = np.random.default_rng(5)
is_spam = (score_rng.random(200) < 0.2).astype("float32")
spam_score = (score_rng.random(200) * 3 + is_spam * 2).astype("float32")
spam_threshold = 2.6
raw_out = tf.constant(score_rng.normal(size=200) + 2 * is_spam - 1, tf.float32)
"""


def test_recall_given_scores_is_cut_at_the_learners_named_threshold(
    kernel: KernelSession,
) -> None:
    """No ``V > T`` written yet: a name that says it is a cut, holding a number between
    the values' extremes, is the cut the fix uses."""
    run(kernel, DATA)
    run(kernel, CUT_DATA)
    cell = "spam_rec = keras.metrics.Recall()\nspam_rec.update_state(is_spam, spam_score)\n"
    [text] = notes_about(cell, kernel, "Recall")
    assert "`spam_score`" in text and "not probabilities" in text, text
    fix = fix_in(text)
    assert fix == "spam_rec.update_state(is_spam, spam_score > spam_threshold)"
    fixed = f"spam_rec = keras.metrics.Recall()\n{fix}\n"
    assert notes_about(fixed, kernel, "Recall") == []
    hand = "float(np.sum((spam_score > spam_threshold) & (is_spam == 1)) / np.sum(is_spam == 1))"
    assert value_of(kernel, f"abs(float(spam_rec.result()) - {hand}) < 1e-6") is True


def test_precision_given_logits_is_cut_at_zero(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, CUT_DATA)
    cell = "spam_prc = keras.metrics.Precision()\nspam_prc.update_state(is_spam, raw_out)\n"
    [text] = notes_about(cell, kernel, "Precision")
    fix = fix_in(text)
    assert fix == "spam_prc.update_state(is_spam, raw_out > 0)"
    fixed = f"spam_prc = keras.metrics.Precision()\n{fix}\n"
    assert notes_about(fixed, kernel, "Precision") == []
    hand = "float(np.sum((raw_out.numpy() > 0) & (is_spam == 1)) / np.sum(raw_out.numpy() > 0))"
    assert value_of(kernel, f"abs(float(spam_prc.result()) - {hand}) < 1e-6") is True


def test_binary_accuracy_called_on_raw_scores_is_cut_at_zero(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "acc = keras.metrics.BinaryAccuracy()\nscore = float(acc(labels, raw))"
    [text] = notes_about(cell, kernel, "BinaryAccuracy")
    assert "raw scores cut at 0" in text
    fix = fix_in(text)
    assert fix == "acc(labels, raw > 0)"
    fixed = f"acc = keras.metrics.BinaryAccuracy()\nscore = float({fix})"
    assert notes_about(fixed, kernel, "BinaryAccuracy") == []
    hand = "float(np.mean((tf.sigmoid(raw).numpy() > 0.5) == (labels == 1)))"
    assert value_of(kernel, f"abs(score - {hand}) < 1e-6") is True


def test_auc_given_values_above_one_is_scaled(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "roc = keras.metrics.AUC()\nroc.update_state(is_fraud, gaps)\nbad = float(roc.result())"
    [text] = notes_about(cell, kernel, "AUC")
    assert "same bucket" in text
    fix = fix_in(text)
    assert fix == "roc.update_state(is_fraud, gaps / np.max(gaps))"
    fixed = f"roc = keras.metrics.AUC()\n{fix}\ngood = float(roc.result())"
    assert notes_about(fixed, kernel, "AUC") == []
    # The AUC by ranks: the share of (positive, negative) pairs ordered rightly.
    exact = "float(np.mean(gaps[is_fraud == 1][:, None] > gaps[is_fraud == 0][None, :]))"
    assert value_of(kernel, f"abs(good - {exact}) < 0.02") is True
    assert value_of(kernel, f"abs(bad - {exact}) > 0.05") is True


def test_probability_metrics_stay_silent_on_look_alikes(kernel: KernelSession) -> None:
    run(kernel, DATA)
    fine = (
        "probs = tf.sigmoid(raw)\n"
        "pm = keras.metrics.Precision()\n"
        "pm.update_state(labels, probs)\n"
        "pz = keras.metrics.Precision(thresholds=0.0)\n"
        "pz.update_state(labels, raw)\n"
        "al = keras.metrics.AUC(from_logits=True)\n"
        "al.update_state(labels, raw)\n"
        "ba = keras.metrics.BinaryAccuracy()\n"
        "ba.update_state(labels, tf.cast(raw > 0, tf.int32))\n"
        "bt = keras.metrics.BinaryAccuracy(threshold=0.0)\n"
        "bt.update_state(labels, raw)\n"
    )
    report = checked_report(run(kernel, fine))
    assert [n["text"] for n in report["notes"] if "not probabilities" in n["text"]] == []


def test_percentile_given_a_fraction(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = notes_about("limit = np.percentile(latency_ms, 0.95)", kernel, "percent")
    assert text.startswith(
        "`np.percentile(latency_ms, 0.95)` (line 1 of this cell) gives `percentile` q = "
        "`0.95`, a fraction"
    )
    fix = fix_in(text)
    assert fix == "limit = np.percentile(latency_ms, 95)"
    assert notes_about(fix, kernel, "percent") == []
    assert value_of(kernel, "bool(abs(limit - np.quantile(latency_ms, 0.95)) < 1e-9)") is True


def test_nanpercentile_given_an_array_of_fractions(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "levels = np.array([0.1, 0.5, 0.9])\nbands = np.nanpercentile(heights, levels)"
    [text] = notes_about(cell, kernel, "percent")
    fix = fix_in(text)
    assert fix == "bands = np.nanquantile(heights, levels)"
    assert notes_about(fix, kernel, "percent") == []
    assert value_of(kernel, "bool(bands[0] < 165 < 175 < bands[2])") is True


def test_percentile_keyword_list_of_fractions(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "low, high = np.percentile(latency_ms, q=[0.25, 0.75])"
    [text] = notes_about(cell, kernel, "percent")
    fix = fix_in(text)
    assert fix == "low, high = np.percentile(latency_ms, q=[25, 75])"
    run(kernel, fix)
    assert value_of(kernel, "bool(abs(high - np.quantile(latency_ms, 0.75)) < 1e-9)") is True


def test_percentiles_stay_silent_on_look_alikes(kernel: KernelSession) -> None:
    run(kernel, DATA)
    fine = (
        "a = np.percentile(latency_ms, 95)\n"
        "b = np.quantile(latency_ms, 0.95)\n"
        "c = np.percentile(heights, 1)\n"
        "d = np.percentile(heights, [0, 50, 100])\n"
        "e = np.percentile(heights, q=np.linspace(5, 95, 10))\n"
    )
    assert notes_about(fine, kernel, "percent") == []
