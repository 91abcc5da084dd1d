"""A value named for probabilities that holds a model's raw scores (issue #25,
``symptoms/probability_names.py``): the scores of a classifier whose last layer has no
activation, averaged over an ensemble or read straight from ``predict``, under a name that
says probabilities. Told with the softmax (a sigmoid for one unit) applied where the scores
enter the statement; each fix, applied, gives values in [0, 1] and no note. Look-alikes
stay silent: the same name given softmax outputs, and a name that does not say
probabilities."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "from-logits"
HEADS = """keras.utils.set_random_seed(6)
rows = np.random.default_rng(6).normal(size=(40, 5)).astype("float32")
heads = [
    keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"),
                      keras.layers.Dense(4)])
    for _ in range(3)
]
scorer = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
"""
ENSEMBLE = """member_scores = tf.stack([h(rows) for h in heads])
mean_probs = tf.reduce_mean(member_scores, axis=0)
"""
SINGLE = """p_pos = scorer.predict(rows, verbose=0)  # probability of the positive class
"""


def logit_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "named for" in n["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_ensemble_of_logits_named_probabilities(kernel: KernelSession) -> None:
    run(kernel, HEADS)
    [text] = logit_notes(ENSEMBLE, kernel)
    assert text.startswith("`mean_probs` is named for probabilities, but it holds values"), text
    assert "the last layer of `h` (each model of `heads`) has no activation" in text
    fix = fix_of(text)
    assert fix == "mean_probs = tf.reduce_mean(tf.nn.softmax(member_scores, axis=-1), axis=0)"
    fixed = ENSEMBLE.replace("mean_probs = tf.reduce_mean(member_scores, axis=0)", fix)
    assert logit_notes(fixed, kernel) == []
    assert value_of(kernel, "bool(np.allclose(tf.reduce_sum(mean_probs, axis=1), 1.0))") is True


def test_one_unit_scores_read_as_a_probability(kernel: KernelSession) -> None:
    run(kernel, HEADS)
    [text] = logit_notes(SINGLE, kernel)
    assert "`scorer.predict(rows, verbose=0)` gives raw scores (logits)" in text, text
    fix = fix_of(text)
    assert fix == "p_pos = tf.math.sigmoid(scorer.predict(rows, verbose=0)).numpy()"
    assert logit_notes(fix, kernel) == []
    assert value_of(kernel, "bool(((p_pos >= 0) & (p_pos <= 1)).all())") is True


def test_probabilities_and_other_names_stay_silent(kernel: KernelSession) -> None:
    run(kernel, HEADS)
    right = (
        "soft_probs = tf.reduce_mean(tf.nn.softmax(tf.stack([h(rows) for h in heads])), axis=0)\n"
    )
    assert logit_notes(right, kernel) == []
    scores = "avg_logits = tf.reduce_mean(tf.stack([h(rows) for h in heads]), axis=0)\n"
    assert logit_notes(scores, kernel) == []
    # Log-probabilities are negative by design.
    log_cell = "log_probs = tf.nn.log_softmax(heads[0](rows))\n"
    assert logit_notes(log_cell, kernel) == []


def test_summed_softmax_outputs_are_not_called_logits(kernel: KernelSession) -> None:
    """Probabilities added up over noisy passes exceed 1, but the model's scores went
    through a softmax (a sigmoid) first: no note, and no second softmax as a fix."""
    run(kernel, HEADS)
    summed = """vote_probs = 0
for shift in (0.0, 0.1, 0.2, 0.3, 0.4):
    vote_probs = vote_probs + tf.nn.softmax(heads[1](rows + shift), axis=-1).numpy()
"""
    assert logit_notes(summed, kernel) == []
    assert value_of(kernel, "bool(vote_probs.max() > 1.0)") is True
    one_unit = "pos_prob_total = sum(tf.math.sigmoid(scorer(rows * k)) for k in (1, 2, 3))\n"
    assert logit_notes(one_unit, kernel) == []
    # The same sum of raw scores is still told.
    raw = """second = heads[1]
vote_probs = 0
for shift in (0.0, 0.1, 0.2):
    vote_probs = vote_probs + second(rows + shift).numpy()
"""
    [text] = logit_notes(raw, kernel)
    assert "`second(rows + shift)` gives raw scores (logits)" in text, text
