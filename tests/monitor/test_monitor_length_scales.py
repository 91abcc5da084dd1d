"""A squared distance divided by a length scale that is not squared, inside an ``exp``
(issue #25, silent bugs): told where the function is defined, with the line's fix, which
the test applies: the weight at one length scale's distance is then exp(-0.5).
Look-alikes stay silent: the square written, a distance that is not squared (a
Laplacian kernel), a ``gamma`` multiplying."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(before_load="import numpy as np\nimport tensorflow as tf\n", after_load="")
SECTION = "reducing-tensors"


def scale_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "length scale" in note["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])[0]


def test_bandwidth_not_squared_in_a_numpy_function(kernel: KernelSession) -> None:
    cell = (
        "def gauss_weights(pts, centre, bandwidth=0.3):\n"
        "    d2 = np.sum((pts - centre) ** 2, axis=-1)\n"
        "    return np.exp(-d2 / (2 * bandwidth))\n"
    )
    notes = scale_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "In `gauss_weights`, `np.exp(-d2 / (2 * bandwidth))` (line 3) divides a squared "
        "distance by `bandwidth`, a length scale, not by its square"
    ), text
    fix = fix_of(text)
    assert fix == "return np.exp(-d2 / (2 * bandwidth ** 2))"
    fixed = cell.replace("return np.exp(-d2 / (2 * bandwidth))", fix)
    assert scale_notes(checked_report(run(kernel, fixed))) == []
    weight = "float(gauss_weights(np.array([[0.3, 0.0]]), np.zeros(2))[0])"
    assert abs(value_of(kernel, weight) - math.exp(-0.5)) < 1e-9


def test_attribute_length_scale_in_a_tensorflow_method(kernel: KernelSession) -> None:
    cell = (
        "class SmoothKernel:\n"
        "    def __init__(self, length_scale):\n"
        "        self.length_scale = length_scale\n"
        "    def __call__(self, a, b):\n"
        "        sqd = tf.square(a[:, None] - b[None, :])\n"
        "        return tf.exp(-0.5 * sqd / self.length_scale)\n"
    )
    notes = scale_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix == "return tf.exp(-0.5 * sqd / self.length_scale ** 2)"
    fixed = cell.replace("return tf.exp(-0.5 * sqd / self.length_scale)", fix)
    assert scale_notes(checked_report(run(kernel, fixed))) == []
    weight = "float(SmoothKernel(2.0)(tf.constant([2.0]), tf.constant([0.0]))[0, 0])"
    assert abs(value_of(kernel, weight) - math.exp(-0.5)) < 1e-6


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cell = (
        "def laplace(a, b, ls=1.0):\n"
        "    d = tf.sqrt(tf.reduce_sum((a - b) ** 2, -1))\n"
        "    return tf.exp(-d / ls)\n"
        "def se(a, b, ls=1.0):\n"
        "    d2 = tf.reduce_sum((a - b) ** 2, -1)\n"
        "    return tf.exp(-0.5 * d2 / ls ** 2)\n"
        "def rbf_gamma(a, b, gamma=1.0):\n"
        "    return tf.exp(-gamma * tf.reduce_sum((a - b) ** 2, -1))\n"
        "def se2(a, b, lengthscale=1.0):\n"
        "    return tf.exp(-tf.reduce_sum(tf.square(a - b), -1) / (2.0 * tf.square(lengthscale)))\n"
    )
    assert scale_notes(checked_report(run(kernel, cell))) == []
