"""A batch of maps min-max scaled with one minimum and maximum for the whole batch (issue
#25, silent bugs): saliency maps and relevance maps scaled without an axis, one of them
squashed by a stronger one, are told with the reductions over every axis but the first;
the fix runs in the kernel and every map then spans [0, 1]. A training set scaled as a
whole, maps already scaled per example and maps of one strength stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(2)
strength = np.array([1.0, 12.0, 0.2])[:, None, None]
sal = np.abs(gen.normal(size=(3, 6, 6))) * strength
scales = np.array([3.0, 0.1, 1.0, 0.5])[:, None, None, None]
r = tf.constant(np.abs(gen.normal(size=(4, 5, 5, 1))) * scales, tf.float32)
"""


def batch_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "for the whole batch of" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("keepdims=True: ", 1)[1])[0]


def test_numpy_saliency_maps(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "saliency_maps = (sal - sal.min()) / (sal.max() - sal.min())\n"
    notes = batch_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`saliency_maps = (sal - sal.min()) / (sal.max() - sal.min())` (line 1 of this cell) "
        "scales `saliency_maps` with one minimum and one maximum for the whole batch of 3 maps"
    )
    fix = fix_of(notes[0])
    assert fix == (
        "saliency_maps = (sal - sal.min(axis=(1, 2), keepdims=True)) / "
        "(sal.max(axis=(1, 2), keepdims=True) - sal.min(axis=(1, 2), keepdims=True))"
    )
    assert batch_notes(checked_report(run(kernel, fix + "\n"))) == []
    checked_report(run(kernel, "assert np.allclose(saliency_maps.reshape(3, -1).max(axis=1), 1.0)"))


def test_tensorflow_relevance_maps(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "relevance = (r - tf.reduce_min(r)) / (tf.reduce_max(r) - tf.reduce_min(r) + 1e-9)\n"
    notes = batch_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert "tf.reduce_max(r, axis=(1, 2, 3), keepdims=True)" in fix
    assert batch_notes(checked_report(run(kernel, fix + "\n"))) == []
    checked_report(
        run(
            kernel,
            "assert np.allclose(tf.reduce_max(relevance, axis=(1, 2, 3)).numpy(), 1.0, atol=1e-5)",
        )
    )


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """pixels = gen.uniform(0, 255, size=(10, 4, 4))
pixels = (pixels - pixels.min()) / (pixels.max() - pixels.min())
low = sal.min(axis=(1, 2), keepdims=True)
heat_each = (sal - low) / (sal.max(axis=(1, 2), keepdims=True) - low)
even = np.stack([np.linspace(0.0, 1.0, 16).reshape(4, 4)] * 3)
even_maps = (even - even.min()) / (even.max() - even.min())
"""
    assert batch_notes(checked_report(run(kernel, cell))) == []
