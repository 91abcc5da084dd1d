"""Hits/recall at a cut-off counted with ``<`` on ranks that start at 1 (issue #25,
``symptoms/hits_cutoffs.py``): a rank equal to the cut-off is left out, so the figure at
cut-off 1 is 0. Written here as a TensorFlow function called in a loop over cut-offs and
as a NumPy expression at the top level, with other names and data; each printed fix is
put in the cell's place and run: the note is gone and the figure is the share of ranks
up to the cut-off. Correct look-alikes stay silent: ranks from 0 with ``<``, ``<=``, a
rank threshold that is not a metric."""

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
    "item_positions = tf.constant([1, 4, 2, 1, 7, 3, 1, 12, 5, 2], dtype=tf.int32)\n"
    "query_ranks = np.array([3, 1, 6, 3, 2, 9, 3, 1])\n"
)


def cutoff_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [
        note["text"]
        for note in report["notes"]
        if (note["course"] or {}).get("section") == SECTION and "cut-off" in note["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


TF_RECALL = """
def recall_at(positions, cutoff):
    return float(tf.reduce_mean(tf.cast(positions < cutoff, tf.float32)))

recalls = {}
for cutoff in [1, 5]:
    recalls[cutoff] = recall_at(item_positions, cutoff)
    print(f"recall@{cutoff}: {recalls[cutoff]:.2f}")
"""


def test_recall_at_cutoffs_in_a_function(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = cutoff_notes(kernel, TF_RECALL)
    assert text.startswith(
        "`return float(tf.reduce_mean(tf.cast(positions < cutoff, tf.float32)))` (line 3 of "
        "this cell, in `recall_at`) counts the ranks strictly below `cutoff`, but the ranks "
        "start at 1 (the smallest in `item_positions` is 1)"
    ), text
    assert "At the cut-off 1 the figure is 0 whatever the model does, although 3 of the 10 " in (
        text
    )
    assert value_of(kernel, "recalls[1]") == 0.0
    fix = fix_of(text)
    assert fix == "return float(tf.reduce_mean(tf.cast(positions <= cutoff, tf.float32)))"
    fixed = TF_RECALL.replace(
        "return float(tf.reduce_mean(tf.cast(positions < cutoff, tf.float32)))", fix
    )
    assert cutoff_notes(kernel, fixed) == []
    assert value_of(kernel, "[round(recalls[1], 6), round(recalls[5], 6)]") == [0.3, 0.8]


NUMPY_HITS = "hit_rate_3 = (query_ranks < 3).mean()\nprint('HR@3', hit_rate_3)\n"


def test_top_level_hit_rate(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = cutoff_notes(kernel, NUMPY_HITS)
    assert "At the cut-off 3 the 3 ranks in `query_ranks` equal to 3 are not counted" in text
    fix = fix_of(text)
    assert fix == "hit_rate_3 = (query_ranks <= 3).mean()"
    assert (
        cutoff_notes(kernel, NUMPY_HITS.replace("hit_rate_3 = (query_ranks < 3).mean()", fix)) == []
    )
    assert value_of(kernel, "float(hit_rate_3)") == 6 / 8


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    for cell in (
        # ranks counted from 0: ``<`` is right
        "zero_based_ranks = query_ranks - 1\nhits_at_2 = np.mean(zero_based_ranks < 2)\n",
        "hits_at_2 = np.mean(query_ranks <= 2)\n",
        # a threshold on ranks that is no hit rate
        "shortlisted = np.sum(query_ranks < 3)\nprint('shortlisted', shortlisted)\n",
    ):
        assert cutoff_notes(kernel, cell) == [], cell
