"""A rank counted the wrong way round for a distance (issue #25,
``symptoms/rank_counts.py``): 1 plus the number of candidates FARTHER than the right
answer ranks it upside down. Here a document search: the distance comes from the
learner's own function, named neutrally, whose source returns a norm; the printed fix is
put in the cell's place and run: the note is gone and a query equal to its answer ranks
it first. Correct look-alikes stay silent: distances counted with ``<``, similarity
scores counted with ``>``, a negated norm (a score) counted with ``>``."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "reducing-tensors"

SETUP = """import numpy as np
import tensorflow as tf
library = np.random.default_rng(3).normal(size=(12, 4))
queries = library[[2, 7, 9]] + 0.01
answers = [2, 7, 9]

def doc_gap(query, docs):
    return np.linalg.norm(docs - query, axis=1)

def closeness(query, docs):
    return -np.linalg.norm(docs - query, axis=1)
"""


def rank_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [
        note["text"]
        for note in report["notes"]
        if (note["course"] or {}).get("section") == SECTION and "upside down" in note["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


DOC_RANKS = """
def answer_rank(query, docs, answer):
    gaps = doc_gap(query, docs)
    answer_gap = gaps[answer]
    return int((gaps > answer_gap).sum()) + 1

found_ranks = [answer_rank(q, library, a) for q, a in zip(queries, answers)]
print("mean rank", np.mean(found_ranks))
"""


def test_distance_rank_counts_the_farther_documents(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = rank_notes(kernel, DOC_RANKS)
    assert text.startswith(
        "`return int((gaps > answer_gap).sum()) + 1` (line 5 of this cell, in "
        "`answer_rank`) ranks the true answer by counting the candidates with a larger "
        "value than it (`gaps > answer_gap`), but `gaps` is a distance (told by `doc_gap`)"
    ), text
    assert value_of(kernel, "found_ranks") == [12, 12, 12]
    fix = fix_of(text)
    assert fix == "return int((gaps < answer_gap).sum()) + 1"
    fixed = DOC_RANKS.replace("return int((gaps > answer_gap).sum()) + 1", fix)
    assert rank_notes(kernel, fixed) == []
    assert value_of(kernel, "found_ranks") == [1, 1, 1]


SIM_RANK = (
    "unit = library / np.linalg.norm(library, axis=1, keepdims=True)\n"
    "sims = tf.constant(unit @ unit[5])\n"
    "true_sim = sims[5]\n"
    "sim_rank = int(tf.reduce_sum(tf.cast(sims < true_sim, tf.int32))) + 1\n"
)


def test_similarity_rank_counts_the_smaller_scores(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = rank_notes(kernel, SIM_RANK)
    assert "but `sims` is a score (told by `sims`): a larger value is better" in text, text
    fix = fix_of(text)
    assert fix == "sim_rank = int(tf.reduce_sum(tf.cast(sims > true_sim, tf.int32))) + 1"
    assert rank_notes(kernel, SIM_RANK.replace(SIM_RANK.splitlines()[-1], fix)) == []
    # a unit vector is the most similar to itself (cosine 1): rank 1
    assert value_of(kernel, "sim_rank") == 1


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    for cell in (
        DOC_RANKS.replace("gaps > answer_gap", "gaps < answer_gap"),
        # a score: larger is better, counting the larger ones is right
        "def answer_rank(query, docs, answer):\n"
        "    near = closeness(query, docs)\n"
        "    answer_near = near[answer]\n"
        "    return int(np.sum(near > answer_near)) + 1\n"
        "found_ranks = [answer_rank(q, library, a) for q, a in zip(queries, answers)]\n",
        "sims = tf.constant(library @ queries[0])\n"
        "true_sim = sims[2]\n"
        "sim_rank = int(tf.reduce_sum(tf.cast(sims > true_sim, tf.int32))) + 1\n",
    ):
        assert rank_notes(kernel, cell) == [], cell
    assert value_of(kernel, "sim_rank") >= 1
