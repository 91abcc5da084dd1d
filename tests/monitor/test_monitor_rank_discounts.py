"""A ranking metric that sorts ascending where its rank discount needs the best first
(issue #25, ``symptoms/rank_discounts.py``): an ideal DCG of gains sorted ascending, a
reciprocal rank read from an ascending order of scores whose masked entries were filled
with a very negative number. Written here with other names, NumPy and TensorFlow, top
level and in a ``def``; each printed fix is put in the cell's place and run: the note is
gone and the metric is right (a perfect ranking scores 1). Correct look-alikes (a
descending sort, a reversed one, distances ranked ascending) stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "reducing-tensors"

SETUP = (
    "import numpy as np\n"
    "import tensorflow as tf\n"
    "stars = np.array([[4.0, 0.0, 2.0, 1.0, 3.0], [1.0, 3.0, 0.0, 0.0, 2.0]], np.float32)\n"
    "valid = np.array([[True] * 5, [True, True, True, True, False]])\n"
)


def discount_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [
        note["text"]
        for note in report["notes"]
        if (note["course"] or {}).get("section") == SECTION and "discount" in note["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


NUMPY_NDCG = """
def graded_ndcg(pred, gains):
    picked = np.take_along_axis(gains, np.argsort(-pred, axis=1), axis=1)
    weights = 1.0 / np.log2(np.arange(2, gains.shape[1] + 2))
    best_case = np.sort(gains, axis=1)
    return np.mean(np.sum(picked * weights, axis=1) / np.sum(best_case * weights, axis=1))

perfect = graded_ndcg(stars, stars)
"""


def test_ideal_dcg_of_gains_sorted_ascending(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = discount_notes(kernel, NUMPY_NDCG)
    assert text.startswith(
        "`best_case = np.sort(gains, axis=1)` (line 5, in `graded_ndcg`) orders `gains` "
        "from the smallest up"
    ), text
    assert "`best_case * weights` (line 6)" in text
    assert value_of(kernel, "bool(perfect > 1.0)") is True
    fix = fix_of(text)
    assert fix == "best_case = -np.sort(-gains, axis=1)"
    fixed = NUMPY_NDCG.replace("best_case = np.sort(gains, axis=1)", fix)
    assert discount_notes(kernel, fixed) == []
    assert value_of(kernel, "round(float(perfect), 6)") == 1.0


TF_MRR = """
def reciprocal_rank(logits, labels, keep):
    logits = tf.where(keep, logits, float("-inf"))
    ranked = tf.argsort(logits, axis=-1)
    labels_ranked = tf.gather(labels, ranked, batch_dims=1)
    found = labels_ranked >= 3.0
    where = tf.argmax(tf.cast(found, tf.int32), axis=-1)
    return tf.reduce_mean(1.0 / tf.cast(where + 1, tf.float32))

rr_perfect = float(reciprocal_rank(stars, stars, valid))
"""


def test_reciprocal_rank_from_an_ascending_order(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = discount_notes(kernel, TF_MRR)
    assert "`ranked = tf.argsort(logits, axis=-1)` (line 4, in `reciprocal_rank`)" in text
    assert "the masked ones" in text
    assert value_of(kernel, "bool(rr_perfect < 1.0)") is True
    fix = fix_of(text)
    assert fix == 'ranked = tf.argsort(logits, axis=-1, direction="DESCENDING")'
    fixed = TF_MRR.replace("ranked = tf.argsort(logits, axis=-1)", fix)
    assert discount_notes(kernel, fixed) == []
    assert value_of(kernel, "rr_perfect") == 1.0


def test_top_level_numpy_order_by_scores(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = (
        "masked = np.where(valid, stars, -1e12)\n"
        "idx = np.argsort(masked, axis=1)\n"
        "row_gains = np.take_along_axis(stars, idx, axis=1)\n"
        "dcg = np.sum(row_gains * (1.0 / np.arange(1, 6)), axis=1)\n"
    )
    [text] = discount_notes(kernel, cell)
    fix = fix_of(text)
    assert fix == "idx = np.argsort(-masked, axis=1)"
    fixed = cell.replace("idx = np.argsort(masked, axis=1)", fix)
    assert discount_notes(kernel, fixed) == []
    # The best entry of each row is first now.
    assert value_of(kernel, "row_gains[:, 0].tolist()") == [4.0, 3.0]


def test_correct_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    # Sorted descending, or ascending then reversed.
    assert (
        discount_notes(
            kernel,
            "ideal = tf.sort(stars, axis=1, direction='DESCENDING')\n"
            "disc = 1.0 / tf.math.log(tf.range(2.0, 7.0))\n"
            "idcg = tf.reduce_sum(ideal * disc, axis=1)\n",
        )
        == []
    )
    assert (
        discount_notes(
            kernel,
            "ideal = np.sort(stars, axis=1)[:, ::-1]\n"
            "idcg = np.sum(ideal / np.log2(np.arange(2, 7)), axis=1)\n",
        )
        == []
    )
    # Distances are ranked ascending: the nearest first is right.
    assert (
        discount_notes(
            kernel,
            "dist = np.abs(stars - 2.0)\n"
            "near = np.argsort(dist, axis=1)\n"
            "hits = np.take_along_axis(stars, near, axis=1) >= 3.0\n"
            "first_hit = np.argmax(hits, axis=1)\n"
            "mrr = np.mean(1.0 / (first_hit + 1))\n",
        )
        == []
    )
