"""A whitening matrix scaled along the wrong axis (issue #25, silent bugs): eigenvectors
divided by their eigenvalues' roots lined up with the rows (``[:, np.newaxis]``,
``[:, tf.newaxis]``) make data whose covariance is far from the identity; told with the
vector lined up with the columns; the fix runs in the kernel and the data is then white.
The right axis, and a row scaling in a cell that does not whiten, stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(8)
mix = gen.normal(size=(3, 3)) * np.array([4.0, 1.0, 0.2])[:, None]
data_c = gen.normal(size=(400, 3)) @ mix
data_c = data_c - data_c.mean(axis=0)
lam, vecs = np.linalg.eigh(np.cov(data_c.T))
"""


def white_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "is not white" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("with the columns: ", 1)[1])[0]


def test_numpy_whitening_by_rows(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """whiten_mat = vecs * (1.0 / np.sqrt(lam))[:, np.newaxis]
sphered = data_c @ whiten_mat
"""
    notes = white_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`whiten_mat = vecs * (1.0 / np.sqrt(lam))[:, np.newaxis]` (line 1 of this cell) "
        "lines `(1.0 / np.sqrt(lam))[:, np.newaxis]` up with the ROWS of `vecs`"
    )
    fix = fix_of(notes[0])
    assert fix == "whiten_mat = vecs * (1.0 / np.sqrt(lam))[np.newaxis, :]"
    fixed = cell.replace(cell.splitlines()[0], fix)
    assert white_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert np.allclose(np.cov(sphered.T), np.eye(3), atol=1e-6)"))


def test_tensorflow_whitening_by_rows(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """xc = tf.constant(data_c, tf.float32)
vals, basis = tf.linalg.eigh(tf.transpose(xc) @ xc / 399.0)
scale = tf.math.rsqrt(vals + 1e-6)
proj_white = basis * scale[:, tf.newaxis]
z = tf.matmul(xc, proj_white)
"""
    notes = white_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix == "proj_white = basis * scale[tf.newaxis, :]"
    fixed = cell.replace("proj_white = basis * scale[:, tf.newaxis]", fix)
    assert white_notes(checked_report(run(kernel, fixed))) == []
    check = "zc = z.numpy()\nassert np.allclose(zc.T @ zc / 399.0, np.eye(3), atol=1e-3)"
    checked_report(run(kernel, check))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """white_w = vecs / np.sqrt(lam)[None, :]
white_z = data_c @ white_w
row_scaled = vecs * lam[:, None]
mapped = data_c @ row_scaled
"""
    assert white_notes(checked_report(run(kernel, cell))) == []
