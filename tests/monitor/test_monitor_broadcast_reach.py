"""A broadcast whose operands are computed on the spot and whose result a reduction reads
only through later names (issue #25, silent bugs): ``low = pred[:, 1] + shift - 2.0 *
sigma`` with ``pred[:, 1]`` ``(N,)`` and ``sigma`` ``(N, 1)`` is ``(N, N)``; ``hit = truth
>= low`` and ``np.mean(hit)`` then average every pair. The operands are followed through
an index of whole slices and numbers and through arithmetic with a scalar name; the
reduction is followed through the names that feed it. The entry offers only the fix
that the later line also agrees with (widening would broadcast again beside ``truth``);
the test runs it. Look-alikes stay silent: the band built from ``sigma[:, 0]``, and a
pairwise table widened on purpose with ``[:, None]``."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(5)
pred = gen.normal(size=(40, 2))
sigma = np.abs(gen.normal(size=(40, 1))) + 0.5
shift = 0.25
truth = pred[:, 1] + shift + 0.1 * gen.normal(size=40)
"""


def broadcast_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "broadcasting"
    ]


def test_band_from_a_column_reduced_two_names_later(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "low = pred[:, 1] + shift - 2.0 * sigma\nhit = truth >= low\nrate = float(np.mean(hit))\n"
    )
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert value_of(kernel, "list(low.shape)") == [40, 40]  # the symptom
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`pred[:, 1] + shift - 2.0 * sigma` (line 1 of this cell) broadcasts `2.0 * sigma`, "
        "a (40, 1) NumPy array, against `pred[:, 1] + shift`, a (40,) NumPy array"
    ), text
    assert "the result is (40, 40) (kept in `low`)" in text
    assert "`truth` on line 2 of this cell, beside `low`, is (40,) too" in text
    fixes = re.findall(r"`([^`]+)`", text.split("Make the shapes agree: ", 1)[1])
    assert fixes[0] == "pred[:, 1] + shift - (2.0 * sigma)[:, 0]"
    fixed = checked_report(run(kernel, cell.replace(cell.splitlines()[0], f"low = {fixes[0]}")))
    assert broadcast_notes(fixed) == []
    assert value_of(kernel, "list(low.shape)") == [40]
    assert value_of(kernel, "rate") == 1.0  # every truth inside its own band


def test_tensor_band_reduced_through_a_mask(kernel: KernelSession) -> None:
    """Tensors, a rank-0 tensor as the scalar, the reduction two names away."""
    run(kernel, DATA)
    cell = (
        "centre = tf.constant(pred)\n"
        "width = tf.constant(sigma)\n"
        "level = tf.constant(0.25, tf.float64)\n"
        "top = centre[:, 1] + level + width\n"
        "under = tf.constant(truth) <= top\n"
        "share = float(tf.reduce_mean(tf.cast(under, tf.float32)))\n"
    )
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "`centre[:, 1] + level + width` (line 4 of this cell) broadcasts `width`" in notes[0]
    fixes = re.findall(r"`([^`]+)`", notes[0].split("Make the shapes agree: ", 1)[1])
    assert fixes[0] == "centre[:, 1] + level + tf.squeeze(width, axis=-1)"
    fixed = checked_report(run(kernel, cell.replace("centre[:, 1] + level + width", fixes[0])))
    assert broadcast_notes(fixed) == []
    assert value_of(kernel, "top.shape.as_list()") == [40]


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "low = pred[:, 1] + shift - 2.0 * sigma[:, 0]\n"
        "hit = truth >= low\n"
        "rate = float(np.mean(hit))\n"
        "table = pred[:, 1][:, None] - truth\n"
        "closest = np.mean(np.abs(table).min(axis=1))\n"
        "scaled = pred[:, 0] * shift + truth\n"
        "spread = float(np.mean(scaled))\n"
    )
    assert broadcast_notes(checked_report(run(kernel, cell))) == []
    assert value_of(kernel, "rate") == 1.0
