"""Gradient accumulators applied in a loop and never set back to zero: the note names the
list, the two lines and the function, and its reset, written under the apply line, makes
each update apply only its own micro-batches. Correct look-alikes (a reset after applying,
accumulators made anew each round) stay silent (issue #25)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

_MADE = (
    "reg = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])\n"
    "sgd = keras.optimizers.SGD(0.01)\n"
    "rows = np.random.default_rng(3).normal(size=(96, 5)).astype('float32')\n"
    "goal = rows.sum(axis=1, keepdims=True)\n"
    "def part(xb, yb):\n"
    "    with tf.GradientTape() as tape:\n"
    "        err = tf.reduce_mean((reg(xb) - yb) ** 2)\n"
    "    return tape.gradient(err, reg.trainable_variables)\n"
)

_RUN = (
    "def run_epoch(pieces=3):\n"
    "    for j in range(12):\n"
    "        g = part(rows[j * 8:(j + 1) * 8], goal[j * 8:(j + 1) * 8])\n"
    "        for s, gj in zip(sums, g):\n"
    "            s.assign_add(gj / pieces)\n"
    "        if (j + 1) % pieces == 0:\n"
    "            sgd.apply_gradients(zip(sums, reg.trainable_variables))\n"
)

_MAKE_SUMS = (
    "sums = [tf.Variable(tf.zeros_like(w), trainable=False) for w in reg.trainable_variables]\n"
)


def _notes(kernel: KernelSession, cell: str) -> list[str]:
    return [t for t in note_texts(checked_report(run(kernel, cell))) if "back to zero" in t]


def test_accumulators_never_zeroed_are_named_with_the_reset(kernel: KernelSession) -> None:
    run(kernel, _MADE)
    told = _notes(kernel, _MAKE_SUMS + _RUN)
    assert len(told) == 1
    text = told[0]
    assert "`run_epoch` adds each batch's gradients into `sums`" in text
    assert "`s.assign_add(gj / pieces)`, line 6" in text
    assert "`sgd.apply_gradients(zip(sums, reg.trainable_variables))`, line 8" in text
    assert "under line 8, at its indentation (12 spaces)" in text
    reset = "for a in sums: a.assign(tf.zeros_like(a))"
    assert f"write `{reset}`" in text
    # The fix, written where the note says: quiet, and the sums are zero after each apply.
    lines = (_MAKE_SUMS + _RUN).split("\n")
    lines.insert(8, " " * 12 + reset)
    fixed = "\n".join(lines)
    assert _notes(kernel, fixed) == []
    run(kernel, "run_epoch()")
    assert value_of(kernel, "float(sum(float(tf.reduce_sum(tf.abs(a))) for a in sums))") == 0.0


def test_the_unreset_sums_grow_and_the_note_is_true(kernel: KernelSession) -> None:
    run(kernel, _MADE)
    _notes(kernel, _MAKE_SUMS + _RUN)
    run(kernel, "run_epoch()")
    # Without the reset the sums hold every micro-batch's gradient, not the last three.
    assert value_of(kernel, "float(tf.reduce_sum(tf.abs(sums[1])))") > 0.0


def test_correct_look_alikes_are_quiet(kernel: KernelSession) -> None:
    run(kernel, _MADE)
    # Zeroed with an assign of each item right after applying.
    reset_after = _RUN.replace(
        "            sgd.apply_gradients(zip(sums, reg.trainable_variables))\n",
        "            sgd.apply_gradients(zip(sums, reg.trainable_variables))\n"
        "            for acc in sums:\n"
        "                acc.assign(tf.zeros_like(acc))\n",
    )
    assert _notes(kernel, _MAKE_SUMS + reset_after) == []
    # Made anew each round inside the loop.
    remade = (
        "def rounds():\n"
        "    for r in range(4):\n"
        "        totals = [tf.Variable(tf.zeros_like(w)) for w in reg.trainable_variables]\n"
        "        for k in range(3):\n"
        "            for t, gk in zip(totals, part(rows[:8], goal[:8])):\n"
        "                t.assign_add(gk)\n"
        "        sgd.apply_gradients(zip(totals, reg.trainable_variables))\n"
    )
    assert _notes(kernel, remade) == []
    # Applied once, after the accumulation loop (the caller resets between calls).
    once = (
        _MAKE_SUMS + "for j in range(3):\n"
        "    for s, gj in zip(sums, part(rows[:8], goal[:8])):\n"
        "        s.assign_add(gj / 3)\n"
        "sgd.apply_gradients(zip(sums, reg.trainable_variables))\n"
    )
    assert _notes(kernel, once) == []
