"""A tensor given ``assign_add`` / ``assign_sub`` / ``assign`` as if it were a variable: the
entry says which op made the immutable tensor, gives the rebinding form, and rewrites the
statement that made it with variables. Each fix runs in the kernel; correct look-alikes
(variables from the start, the rebinding form) get no error entry (issue #25)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")

_MADE = (
    "layer_w = [tf.Variable(tf.ones((3, 2))), tf.Variable(tf.zeros((2,)))]\n"
    "def part_grads(k):\n"
    "    with tf.GradientTape() as tape:\n"
    "        out = tf.reduce_sum(tf.ones((1, 3)) * float(k) @ layer_w[0] + layer_w[1])\n"
    "    return tape.gradient(out, layer_w)\n"
)


def _line_replaced(cell: str, explanation: str) -> str:
    fix = explanation.split("Fix: ", 1)[1]
    number = int(fix.split("on line ", 1)[1].split(" ", 1)[0])
    lines = cell.split("\n")
    lines[number - 1] = fix_of(explanation)
    return "\n".join(lines)


def test_a_list_of_zeros_tensors_summed_in_place(kernel: KernelSession) -> None:
    runs_cleanly(kernel, _MADE)
    cell = (
        "sums = [tf.zeros_like(p) for p in layer_w]\n"
        "for k in range(3):\n"
        "    for s, part in zip(sums, part_grads(k)):\n"
        "        s.assign_add(part * 0.5)\n"
    )
    explanation = failing(kernel, cell)["explanation"]
    assert "`s` is a tensor, an item of `sums`, as `tf.zeros_like` returns" in explanation
    assert "immutable" in explanation and "no `assign_add`" in explanation
    # The rebinding form, in the learner's names.
    assert (
        "`sums = [s + part * 0.5 for s, part in zip(sums, part_grads(k))]` in place of the loop"
        in explanation
    )
    assert "on line 1 " in explanation
    assert fix_of(explanation) == (
        "sums = [tf.Variable(tf.zeros_like(p), trainable=False) for p in layer_w]"
    )
    runs_cleanly(kernel, _line_replaced(cell, explanation))
    # Each step's 0.5 * gradient summed: 0.5 * (0 + 1 + 2) for the bias.
    assert value_of(kernel, "sums[1].numpy().tolist()") == [1.5, 1.5]
    # The rebinding form the entry names runs too, and is quiet.
    runs_cleanly(
        kernel,
        "sums = [tf.zeros_like(p) for p in layer_w]\n"
        "for k in range(3):\n"
        "    sums = [s + part * 0.5 for s, part in zip(sums, part_grads(k))]\n",
    )
    assert value_of(kernel, "sums[1].numpy().tolist()") == [1.5, 1.5]


def test_one_tensor_moved_with_assign_sub_keeps_a_trainable_variable(
    kernel: KernelSession,
) -> None:
    cell = (
        "theta = tf.fill((4,), 2.0)\n"
        "for _ in range(5):\n"
        "    with tf.GradientTape() as tape:\n"
        "        tape.watch(theta)\n"
        "        cost = tf.reduce_sum(theta ** 2)\n"
        "    theta.assign_sub(0.1 * tape.gradient(cost, theta))\n"
    )
    explanation = failing(kernel, cell)["explanation"]
    assert "`theta` is a tensor, as `tf.fill` returns" in explanation
    assert "`theta = theta - 0.1 * tape.gradient(cost, theta)`" in explanation
    # Moved along its gradient: a trainable variable, not trainable=False.
    assert fix_of(explanation) == "theta = tf.Variable(tf.fill((4,), 2.0))"
    runs_cleanly(kernel, _line_replaced(cell, explanation))
    assert value_of(kernel, "round(float(theta[0]), 4)") == pytest.approx(2.0 * 0.8**5, abs=1e-4)


def test_variables_from_the_start_are_quiet(kernel: KernelSession) -> None:
    runs_cleanly(kernel, _MADE)
    runs_cleanly(
        kernel,
        "totals = [tf.Variable(tf.zeros_like(p), trainable=False) for p in layer_w]\n"
        "for k in range(2):\n"
        "    for t, part in zip(totals, part_grads(k)):\n"
        "        t.assign_add(part)\n",
    )
