"""A concordance index or AUC computed by hand over pairs with the scores compared the
wrong way round (issue #25, ``symptoms/concordance_direction.py``): the value comes out as
1 minus the right one, below 0.5. An AUC over (positive, negative) pairs with NumPy and a
C-index of predicted survival times with TensorFlow are told with the comparison turned
round; each fix, applied, gives the index above 0.5 and no note. Look-alikes stay silent:
the right direction, and scores that carry no information (about 0.5)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SCORES = """gen_s = np.random.default_rng(12)
labels_b = gen_s.uniform(size=400) < 0.4
scores_b = labels_b * 1.5 + gen_s.normal(size=400)
noise_b = gen_s.normal(size=400)
"""
AUC = """pos_s, neg_s = scores_b[labels_b], scores_b[~labels_b]
# AUC by hand: the share of (positive, negative) pairs ranked right
auc_by_pairs = np.mean(pos_s[:, None] < neg_s[None, :])
"""
SURVIVAL = """gen_t = np.random.default_rng(3)
hazard = np.exp(gen_t.normal(size=300)).astype("float32")
died_at = tf.constant(gen_t.exponential(1.0 / hazard).astype("float32"))
predicted_time = tf.constant((1.0 / hazard).astype("float32"))
earlier = tf.cast(died_at[:, None] < died_at[None, :], tf.float32)
ordered = tf.cast(predicted_time[:, None] > predicted_time[None, :], tf.float32) * earlier
cindex_t = tf.reduce_sum(ordered) / tf.reduce_sum(earlier)
"""


def pair_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "below 0.5" in n["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_auc_over_pairs_compared_the_wrong_way(kernel: KernelSession) -> None:
    run(kernel, SCORES)
    [text] = pair_notes(AUC, kernel)
    assert text.startswith("`auc_by_pairs` is 0.1"), text
    assert "counts a pair when `pos_s[:, None] < neg_s[None, :]` (`pos_s` is " in text
    assert value_of(kernel, "bool(auc_by_pairs < 0.4)") is True
    fix = fix_of(text)
    assert fix == "auc_by_pairs = np.mean(pos_s[:, None] > neg_s[None, :])"
    assert (
        pair_notes(
            AUC.replace("auc_by_pairs = np.mean(pos_s[:, None] < neg_s[None, :])", fix), kernel
        )
        == []
    )
    assert value_of(kernel, "bool(auc_by_pairs > 0.8)") is True


def test_c_index_of_predicted_times_with_tensorflow(kernel: KernelSession) -> None:
    [text] = pair_notes(SURVIVAL, kernel)
    assert text.startswith("`cindex_t` is 0."), text
    assert "higher means later (a predicted survival time)" in text
    fix = fix_of(text)
    assert fix == (
        "ordered = tf.cast(predicted_time[:, None] < predicted_time[None, :], tf.float32) * earlier"
    )
    fixed = SURVIVAL.replace(
        "ordered = tf.cast(predicted_time[:, None] > predicted_time[None, :], tf.float32) "
        "* earlier",
        fix,
    )
    assert pair_notes(fixed, kernel) == []
    assert value_of(kernel, "float(cindex_t) > 0.6") is True


def test_right_direction_and_uninformative_scores_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SCORES)
    right = AUC.replace("pos_s[:, None] < neg_s[None, :]", "pos_s[:, None] > neg_s[None, :]")
    assert pair_notes(right, kernel) == []
    chance = """pos_n, neg_n = noise_b[labels_b], noise_b[~labels_b]
auc_noise = np.mean(pos_n[:, None] > neg_n[None, :])
"""
    assert pair_notes(chance, kernel) == []
    assert value_of(kernel, "bool(0.4 < auc_noise < 0.6)") is True
