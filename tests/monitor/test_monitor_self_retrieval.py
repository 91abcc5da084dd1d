"""Leave-one-out retrieval where each query retrieves itself (issue #25, silent bugs): a
similarity matrix of a set with itself whose row argmax is each row's own index is told
with a line masking the diagonal; the fix runs in the kernel and the neighbours are then
other items. A query set against a different gallery, and a masked diagonal, stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(7)
vecs = gen.normal(size=(30, 5)).astype("float32")
vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
kinds = gen.integers(0, 3, size=30)
"""


def self_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "the row's own index" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("on the line above it", 1)[1])[0]


def test_a_numpy_self_similarity(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """affinity = vecs @ vecs.T
closest = affinity.argmax(axis=1)
print("same kind:", np.mean(kinds[closest] == kinds))
"""
    notes = self_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`closest = affinity.argmax(axis=1)` (line 2 of this cell) picks, for 30"
    )
    fix = fix_of(notes[0])
    assert fix == "np.fill_diagonal(affinity, -np.inf)"
    fixed = cell.replace("closest = ", f"{fix}\nclosest = ")
    assert self_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert not np.any(closest == np.arange(30))"))


def test_a_tensorflow_self_similarity(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """table = tf.constant(vecs)
scores = tf.matmul(table, table, transpose_b=True)
best = tf.argmax(scores, axis=-1)
"""
    notes = self_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix.startswith("scores = tf.linalg.set_diag(scores, ")
    fixed = cell.replace("best = ", f"{fix}\nbest = ")
    assert self_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert not np.any(best.numpy() == np.arange(30))"))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """queries = vecs[:10] + 0.01
cross = queries @ vecs.T
hit = cross.argmax(axis=1)
own = vecs @ vecs.T
np.fill_diagonal(own, -np.inf)
other = own.argmax(axis=1)
"""
    assert self_notes(checked_report(run(kernel, cell))) == []


def test_an_argmax_converted_to_numpy(kernel: KernelSession) -> None:
    """The argmax read through ``.numpy()`` or ``np.asarray`` is the same pick."""
    run(kernel, DATA)
    cell = """codes = tf.math.l2_normalize(tf.constant(vecs) * 3.0, axis=1)
gram = tf.matmul(codes, codes, transpose_b=True)
match_ids = tf.argmax(gram, axis=1).numpy()
print("kind kept:", np.mean(kinds[match_ids] == kinds))
"""
    notes = self_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`match_ids = tf.argmax(gram, axis=1).numpy()` (line 3")
    fix = fix_of(notes[0])
    fixed = cell.replace("match_ids = ", f"{fix}\nmatch_ids = ")
    assert self_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert not np.any(match_ids == np.arange(30))"))
    second = """pts = vecs[:, ::-1].copy()
near = np.dot(pts, pts.T)
hits = np.asarray(np.argmax(near, axis=-1))
"""
    notes = self_notes(checked_report(run(kernel, second)))
    assert len(notes) == 1, notes
    assert fix_of(notes[0]) == "np.fill_diagonal(near, -np.inf)"
