"""Eigenvectors or singular vectors taken from the wrong end of their documented order
(issue #25, silent bugs): ``eigh`` sorts ascending, an SVD descending; a slice named
dominant, main or principal components that keeps the other end is told with the
statement taking the wanted end; the fix runs in the kernel and keeps the right
directions. Correct ends, a reversed decomposition and a smallest-end slice stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(3)
pts = gen.normal(size=(200, 4)) * np.array([5.0, 2.0, 0.5, 0.1])
pts = pts - pts.mean(axis=0)
"""


def order_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "of that order" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("first: ", 1)[1])[0]


def test_eigh_read_from_its_first_column(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """scatter = pts.T @ pts / len(pts)
lam, vecs = np.linalg.eigh(scatter)
dominant = vecs[:, 0]
print("spread along it:", np.var(pts @ dominant))
"""
    notes = order_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`dominant = vecs[:, 0]` (line 3 of this cell) keeps the vectors of the smallest "
        "values of `np.linalg.eigh`, but `dominant` says dominant: `np.linalg.eigh` returns "
        "its values in ascending order"
    )
    fix = fix_of(notes[0])
    assert fix == "dominant = vecs[:, -1]"
    fixed = cell.replace("dominant = vecs[:, 0]", fix)
    assert order_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert abs(abs(dominant[0]) - 1.0) < 0.05"))


def test_svd_read_from_its_tail(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """sv, left, right = tf.linalg.svd(tf.constant(pts, tf.float32))
pcs = tf.transpose(right[:, -2:])
"""
    notes = order_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    said = "but `pcs` says principal components: `tf.linalg.svd` returns its values in descending"
    assert said in notes[0]
    fix = fix_of(notes[0])
    assert fix == "pcs = tf.transpose(right[:, :2])"
    assert order_notes(checked_report(run(kernel, cell.replace(cell.splitlines()[1], fix)))) == []
    checked_report(run(kernel, "assert abs(abs(float(pcs[0, 0])) - 1.0) < 0.05"))
    rows = """u_, s_, vh_ = np.linalg.svd(pts, full_matrices=False)
main_axes = vh_[-2:]
"""
    notes = order_notes(checked_report(run(kernel, rows)))
    assert len(notes) == 1, notes
    assert fix_of(notes[0]) == "main_axes = vh_[:2]"
    eig_top = """def project(data, k=2):
    w, v = tf.linalg.eigh(tf.transpose(data) @ data)
    top_dirs = v[:, :k]
    return data @ top_dirs
"""
    notes = order_notes(checked_report(run(kernel, eig_top)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix == "top_dirs = v[:, -k:][:, ::-1]"
    fixed = eig_top.replace("top_dirs = v[:, :k]", fix)
    assert order_notes(checked_report(run(kernel, fixed))) == []
    checked_report(
        run(
            kernel,
            "z = project(tf.constant(pts, tf.float32))\n"
            "assert float(tf.math.reduce_std(z[:, 0])) > 4",
        )
    )


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """u_, s_, vh_ = np.linalg.svd(pts, full_matrices=False)
w, v = np.linalg.eigh(np.cov(pts.T))
principal = v[:, -1]
null_dir = vh_[-1]
top_sv = s_[:2]
smallest_pair = w[:2]
w, v = w[::-1], v[:, ::-1]
leading = v[:, :3]
spectral_coords = v[:, 1:3]
"""
    assert order_notes(checked_report(run(kernel, cell))) == []
