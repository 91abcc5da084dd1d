"""A PCA computed on data whose columns were never centred (issue #25, silent bugs): a
"scatter" matrix made as X.T @ X and an SVD whose singular values give the explained
variance, on columns with large means, are told with a centring line and the statement
reading the centred data; the fix runs in the kernel and gives the real covariance. Data
already centred and an image compressed by an SVD stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(11)
feats = gen.normal(size=(120, 2)) * [3.0, 1.0] + [50.0, 80.0]
"""


def centring_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "are not centred" in note["text"]]


def fixes_of(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Centre the columns first", 1)[1])


def test_a_scatter_matrix_of_raw_columns(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """scatter_m = feats.T @ feats / len(feats)
vals, dirs = np.linalg.eigh(scatter_m)
"""
    notes = centring_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`scatter_m = feats.T @ feats / len(feats)` (line 1 of this cell) multiplies `feats` "
        "by its own transpose, and the columns of `feats` are not centred: their means (50"
    )
    centring, statement = fixes_of(notes[0])
    assert centring == "feats_centred = feats - feats.mean(axis=0)"
    assert statement == "scatter_m = feats_centred.T @ feats_centred / len(feats_centred)"
    fixed = cell.replace("scatter_m = feats.T @ feats / len(feats)", f"{centring}\n{statement}")
    assert centring_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert np.allclose(scatter_m, np.cov(feats.T, bias=True))"))


def test_an_svd_read_as_explained_variance(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """table = tf.constant(feats, tf.float32)
sv, left, right = tf.linalg.svd(table)
explained = sv ** 2 / tf.reduce_sum(sv ** 2)
"""
    notes = centring_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    centring, statement = fixes_of(notes[0])
    assert centring == "table_centred = table - tf.reduce_mean(table, axis=0)"
    assert statement == "sv, left, right = tf.linalg.svd(table_centred)"
    fixed = cell.replace("sv, left, right = tf.linalg.svd(table)", f"{centring}\n{statement}")
    assert centring_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert abs(float(explained[0]) - 0.9) < 0.06"))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """fc = feats - feats.mean(axis=0)
cov_est = fc.T @ fc / (len(fc) - 1)
u_, s_, vt_ = np.linalg.svd(fc, full_matrices=False)
explained_ratio = s_ ** 2 / np.sum(s_ ** 2)
picture = gen.uniform(100, 200, size=(40, 30))
pu, ps, pvt = np.linalg.svd(picture)
rank5 = (pu[:, :5] * ps[:5]) @ pvt[:5]
gram = feats @ feats.T
"""
    assert centring_notes(checked_report(run(kernel, cell))) == []
