"""A per-example gather written without ``batch_dims`` (issue #25, silent bugs):
``tf.gather(scores, pick, axis=1)`` with ``scores`` ``(n, k, d)`` and one index per example
in ``pick`` ``(n,)`` gives every row all ``n`` indices, a ``(n, n, d)`` result. The note
names both operands, the result's name and shape, and the call with ``batch_dims=1``,
which the test runs: the result is then each row's own pick. Look-alikes stay silent:
``batch_dims=1`` already, a lookup along axis 0, a square matrix's columns reordered by a
permutation, and a few columns chosen by index."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

SECTION = "joining-indexing"
DATA = """scores = tf.random.stateless_normal((16, 5, 3), seed=(1, 2))
pick = tf.random.stateless_uniform((16,), seed=(3, 4), maxval=5, dtype=tf.int32)
"""


def gather_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "batch_dims" in note["text"]
    ]


def test_one_index_per_example_without_batch_dims(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "chosen = tf.gather(scores, pick, axis=1)\nspread = float(tf.math.reduce_std(chosen))\n"
    notes = gather_notes(checked_report(run(kernel, cell)))
    assert value_of(kernel, "chosen.shape.as_list()") == [16, 16, 3]  # the symptom
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.gather(scores, pick, axis=1)` (line 1 of this cell) gives every row of "
        "`scores`, a (16, 5, 3) float32 tensor, all 16 indices of `pick`, a (16,) int32 tensor"
    ), text
    assert "`chosen` is (16, 16, 3)" in text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "chosen = tf.gather(scores, pick, axis=1, batch_dims=1)"
    fixed = checked_report(run(kernel, cell.replace(cell.splitlines()[0], fix)))
    assert gather_notes(fixed) == []
    assert value_of(kernel, "chosen.shape.as_list()") == [16, 3]
    own = "bool(tf.reduce_all(chosen[7] == scores[7, int(pick[7])]))"
    assert value_of(kernel, own) is True


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "chosen = tf.gather(scores, pick, axis=1, batch_dims=1)\n"
        "table = tf.random.stateless_normal((40, 8), seed=(5, 6))\n"
        "rows = tf.gather(table, pick)\n"
        "dist = tf.random.stateless_normal((16, 16), seed=(7, 8))\n"
        "order = tf.random.shuffle(tf.range(16))\n"
        "reordered = tf.gather(tf.gather(dist, order), order, axis=1)\n"
        "cols = tf.constant([0, 2])\n"
        "some = tf.gather(scores, cols, axis=2)\n"
        "total = float(tf.reduce_sum(chosen) + tf.reduce_sum(rows) + tf.reduce_sum(some))\n"
    )
    assert gather_notes(checked_report(run(kernel, cell))) == []
