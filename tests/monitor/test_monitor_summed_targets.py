"""``tape.gradient`` of a target with several entries used as if it kept them apart
(issue #25, silent bugs): kept as a Jacobian (by its name, or a cell that says
"Jacobian"), or multiplied by a vector as a Hessian-vector product. The note names the
target, its shape, the sum that was differentiated, and the fix, which the test runs and
checks against the values meant. Look-alikes stay silent: a loss summed on purpose, a
scalar target, the product with ``output_gradients``, a cell that already calls
``jacobian``."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(before_load="import numpy as np\nimport tensorflow as tf\n", after_load="")
SECTION = "gradient-tape"


def tape_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "SUM" in note["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])[0]


def test_gradient_kept_as_a_jacobian(kernel: KernelSession) -> None:
    cell = (
        "theta = tf.Variable([0.5, -1.0])\n"
        "with tf.GradientTape() as gt:\n"
        "    resid = tf.stack([2.0 * theta[0] + theta[1], tf.sin(theta[0]), theta[1] ** 2])\n"
        "jac_resid = gt.gradient(resid, theta)\n"
    )
    notes = tape_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`jac_resid = gt.gradient(resid, theta)` (line 4 of this cell):")
    assert "`resid` has 3 entries, shape (3,)" in text, text
    assert "shaped like `theta` (2,), not the (3, 2) Jacobian" in text, text
    fix = fix_of(text)
    assert fix == "jac_resid = gt.jacobian(resid, theta)"
    fixed = checked_report(run(kernel, cell.replace(cell.splitlines()[3], fix)))
    assert tape_notes(fixed) == []
    rows = value_of(kernel, "[[round(float(v), 4) for v in row] for row in jac_resid.numpy()]")
    assert rows == [[2.0, 1.0], [round(math.cos(0.5), 4), 0.0], [0.0, -2.0]]

    # Said in a comment, a batch of points: batch_jacobian is named too.
    batch = (
        "pts = tf.constant([[0.0, 1.0], [1.0, 2.0], [2.0, 0.5], [3.0, 1.5]])\n"
        "mix = tf.constant([[1.0, 0.0, 2.0], [0.5, -1.0, 1.0]])\n"
        "with tf.GradientTape() as probe:\n"
        "    probe.watch(pts)\n"
        "    feats = tf.tanh(pts @ mix)\n"
        "# the Jacobian of the features with respect to the inputs\n"
        "sens = probe.gradient(feats, pts)\n"
    )
    notes = tape_notes(checked_report(run(kernel, batch)))
    assert len(notes) == 1, notes
    assert "not the (4, 3, 4, 2) Jacobian" in notes[0], notes[0]
    assert "`probe.batch_jacobian(feats, pts)` gives one per row" in notes[0], notes[0]
    fix = fix_of(notes[0])
    assert fix == "sens = probe.jacobian(feats, pts)"
    assert tape_notes(checked_report(run(kernel, batch.replace(batch.splitlines()[-1], fix)))) == []
    assert value_of(kernel, "tuple(sens.shape)") == [4, 3, 4, 2]


def test_gradient_of_a_gradient_times_a_vector(kernel: KernelSession) -> None:
    cell = (
        "params = tf.Variable([0.3, -0.2, 0.8])\n"
        "direction = tf.constant([0.0, 1.0, 2.0])\n"
        "def energy(p):\n"
        "    return tf.reduce_sum(p[:-1] * p[1:]) + tf.reduce_sum(p ** 4)\n"
        "with tf.GradientTape() as t2:\n"
        "    with tf.GradientTape() as t1:\n"
        "        e = energy(params)\n"
        "    grad_e = t1.gradient(e, params)\n"
        "curv = t2.gradient(grad_e, params) * direction\n"
    )
    notes = tape_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`curv = t2.gradient(grad_e, params) * direction` (line 9")
    assert "row sums of the Hessian" in text, text
    fix = fix_of(text)
    assert fix == "curv = t2.gradient(grad_e, params, output_gradients=direction)"
    fixed = checked_report(run(kernel, cell.replace(cell.splitlines()[-1], fix)))
    assert tape_notes(fixed) == []
    check = (
        "with tf.GradientTape() as h2:\n"
        "    with tf.GradientTape() as h1:\n"
        "        e2 = energy(params)\n"
        "    g2 = h1.gradient(e2, params)\n"
        "hess = h2.jacobian(g2, params)\n"
        "gap = float(tf.reduce_max(tf.abs(tf.linalg.matvec(hess, direction) - curv)))\n"
    )
    run(kernel, check)
    assert value_of(kernel, "gap") < 1e-5


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cell = (
        "w_lin = tf.Variable([[0.5], [-0.3]])\n"
        "xb = tf.constant([[1.0, 2.0], [0.5, 1.0], [2.0, 0.0]])\n"
        "yb = tf.constant([[1.0], [0.0], [2.0]])\n"
        "with tf.GradientTape(persistent=True) as lt:\n"
        "    lt.watch(xb)\n"
        "    per_example = tf.square(xb @ w_lin - yb)\n"
        "    total = tf.reduce_sum(per_example)\n"
        "grads = lt.gradient(per_example, w_lin)\n"
        "J = lt.gradient(total, w_lin)\n"
        "full = lt.jacobian(per_example, xb)\n"
        "# the Jacobian is `full`; the summed gradient is wanted here\n"
        "summed = lt.gradient(per_example, xb)\n"
        "del lt\n"
        "with tf.GradientTape() as o2:\n"
        "    with tf.GradientTape() as o1:\n"
        "        q = tf.reduce_sum(w_lin ** 3)\n"
        "    gq = o1.gradient(q, w_lin)\n"
        "hv = o2.gradient(gq, w_lin, output_gradients=tf.ones_like(gq))\n"
        "scaled = grads * 0.5\n"
    )
    assert tape_notes(checked_report(run(kernel, cell))) == []
