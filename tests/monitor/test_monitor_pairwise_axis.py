"""A norm of pairwise differences over a points axis (issue #25, silent bugs,
``symptoms/pairwise_axis.py``): ``a[:, None] - b[None]`` (or ``expand_dims``) holds every
pair's difference with the coordinates last; a norm over axis 0 or 1 gives one number per
coordinate. Told with the shape and the call with ``axis=-1``; each fix runs and gives
the pair distances. Correct look-alikes (the last axis, a 3-D array that is not pairwise
differences) stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
stations = np.random.default_rng(4).random((7, 3)).astype("float32")
sensors = np.random.default_rng(5).random((11, 3)).astype("float32")
"""
KERNEL = KernelSetup(after_load=SETUP)


def pair_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "the difference of every pair" in n["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("norm over the coordinates:", 1)[1])[0]


TF_CELL = """gaps = tf.expand_dims(stations, 1) - tf.expand_dims(sensors, 0)
spans = tf.norm(gaps, axis=0)
closest = tf.argmin(spans, axis=1)
"""


def test_a_tensorflow_norm_over_the_first_points_axis(kernel: KernelSession) -> None:
    [text] = pair_notes(checked_report(run(kernel, TF_CELL)))
    assert text.startswith(
        "`tf.norm(gaps, axis=0)` (line 2 of this cell) takes the norm over axis 0 of `gaps`, "
        "(7, 11, 3)"
    ), text
    assert "so `spans` is (11, 3), one number per coordinate" in text
    fix = fix_of(text)
    assert fix == "spans = tf.norm(gaps, axis=-1)"
    fixed = TF_CELL.replace("spans = tf.norm(gaps, axis=0)", fix)
    assert pair_notes(checked_report(run(kernel, fixed))) == []
    check = """wanted = np.sqrt(((stations[:, None, :] - sensors[None, :, :]) ** 2).sum(-1))
print(tuple(spans.shape), np.allclose(spans.numpy(), wanted, atol=1e-5))"""
    assert run(kernel, check).stdout.strip() == "(7, 11) True"


def test_a_numpy_norm_with_new_axes(kernel: KernelSession) -> None:
    cell = """offsets = sensors[:, np.newaxis, :] - stations[np.newaxis, :, :]
lengths = np.linalg.norm(offsets, axis=-2)
"""
    [text] = pair_notes(checked_report(run(kernel, cell)))
    assert "so `lengths` is (11, 3)" in text
    fix = fix_of(text)
    assert fix == "lengths = np.linalg.norm(offsets, axis=-1)"
    run(kernel, fix)
    assert run(kernel, "print(lengths.shape)").stdout.strip() == "(11, 7)"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cell = """offsets = sensors[:, None, :] - stations[None, :, :]
good = np.linalg.norm(offsets, axis=-1)
also_good = np.linalg.norm(offsets, axis=2)
volume = np.random.default_rng(6).random((4, 5, 3))
per_slice = np.linalg.norm(volume, axis=1)
"""
    assert pair_notes(checked_report(run(kernel, cell))) == []


def test_an_inline_difference_with_keras_ops(kernel: KernelSession) -> None:
    cell = """from keras import ops
reach = ops.norm(stations[:, None] - sensors[None], axis=1)
"""
    [text] = pair_notes(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`ops.norm(stations[:, None] - sensors[None], axis=1)` (line 2 of this cell) takes "
        "the norm over axis 1 of `stations[:, None] - sensors[None]`, (7, 11, 3)"
    ), text
    assert "so `reach` is (7, 3)" in text
    fix = fix_of(text)
    assert fix == "reach = ops.norm(stations[:, None] - sensors[None], axis=-1)"
    run(kernel, fix)
    assert run(kernel, "print(tuple(reach.shape))").stdout.strip() == "(7, 11)"
    # An inline difference of a matrix and one point: no pair table, silent.
    one = "single = ops.norm(stations - sensors[0][None], axis=1)\n"
    assert pair_notes(checked_report(run(kernel, one))) == []
