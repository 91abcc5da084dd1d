"""One fix per cause (issue #25): a cause the report explains is explained once.

A function retraced for several new Python values of one argument gets ONE reason naming
the argument as written at the call, every value (bounded), the cause and the fix once, and
still counts every retrace. A cell whose rebinding of a variable later raises gets the fix
in the rebinding entry; the error names the cause and points there. A None gradient is
blamed on NumPy only when the tape's block has a NumPy step, and is not told again in a note
when the error entry explains it."""

from __future__ import annotations

import re

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    checked_report,
    note_texts,
    run,
    run_quiet,
    trace_for,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")

BLEND = """@tf.function
def blend(img, alpha):
    return img * alpha + (1.0 - alpha)

pixels = tf.ones([2, 2])
"""


# ------------------------------------------------------------------ retraces
def test_a_retrace_for_five_values_is_one_reason_that_counts_them(kernel: KernelSession) -> None:
    run_quiet(kernel, BLEND)
    cell = "for opacity in [0.9, 0.7, 0.5, 0.3, 0.1]:\n    mixed = blend(pixels, opacity)"
    # TensorFlow's own retracing warning prints here: read the report without run_quiet.
    report = checked_report(run(kernel, cell))
    trace = trace_for(report, "blend")
    assert [r["kind"] for r in trace["reasons"]] == ["first_trace", "python_value"]
    merged = trace["reasons"][1]
    text = merged["text"]
    assert "`alpha` (`opacity` at the call)" in text
    assert "Values of `alpha` in this cell: 0.9, 0.7, 0.5, 0.3, 0.1." in text
    fix = "blend(pixels, tf.constant(opacity, tf.float32))"
    assert text.count(fix) == 1 and text.count("part of the trace key") == 1
    assert "same cause" not in text and "more retraces" not in text
    # Every retrace is still counted: the reason, the entry, the report.
    assert (merged["count"], merged["after"]) == (4, "0.1")
    assert (trace["new_traces"], trace["retraces"]) == (5, 4)
    assert report["counts"]["retraces"] == 4
    assert (report["level"], report["summary"]) == ("warning", "4 retraces")

    # The fix, run: one trace for the tensor (a new function object), none after.
    run_quiet(kernel, BLEND)
    fixed = cell.replace("blend(pixels, opacity)", fix)
    assert trace_for(run_quiet(kernel, fixed), "blend")["new_traces"] == 1
    assert run_quiet(kernel, fixed.replace("0.9, 0.7", "0.2, 0.4"))["traces"] == []


def test_many_values_are_listed_bounded_and_all_counted(kernel: KernelSession) -> None:
    run_quiet(kernel, BLEND)
    cell = "for k in range(20):\n    blend(pixels, k / 20)"
    trace = trace_for(checked_report(run(kernel, cell)), "blend")
    [merged] = [r for r in trace["reasons"] if r["kind"] == "python_value"]
    listed = ", ".join(str(k / 20) for k in range(12))
    assert f"Values of `alpha` in this cell: {listed} and 8 more." in merged["text"]
    assert merged["count"] == 19 and trace["retraces"] == 19


def test_two_arguments_are_two_causes_and_a_switch_stays_a_switch(kernel: KernelSession) -> None:
    cell = """@tf.function
def shade(img, gamma, bright=False):
    return img ** gamma if bright else img

for g in [1.0, 2.0, 3.0]:
    shade(tf.ones([2]), g)
shade(tf.ones([2]), 3.0, bright=True)"""
    trace = trace_for(checked_report(run(kernel, cell)), "shade")
    reasons = [(r["argument"], r["count"]) for r in trace["reasons"][1:]]
    assert reasons == [("gamma", 2), ("bright", 1)]
    assert trace["retraces"] == 3
    assert "few values" in trace["reasons"][2]["text"]

    # A look-alike: the same loop with a tensor argument, on a new function: no retrace.
    run_quiet(kernel, cell.split("\n\nfor")[0])
    calm_cell = "for g in [1.0, 2.0, 3.0]:\n    shade(tf.ones([2]), tf.constant(g))"
    calm = checked_report(run(kernel, calm_cell))
    assert (trace_for(calm, "shade")["new_traces"], calm["counts"]["retraces"]) == (1, 0)


SIGNATURE_FIX = re.compile(r"(@tf\.function\(input_signature=.*?\)\]\))")


def test_shape_retraces_are_one_reason_whose_fix_takes_every_shape(kernel: KernelSession) -> None:
    encoder = "@tf.function\ndef encode(tokens):\n    return tf.reduce_sum(tokens, axis=1)\n"
    cell = "for rows, width in [(2, 5), (3, 5), (3, 7)]:\n    encode(tf.ones((rows, width)))"
    run_quiet(kernel, encoder)
    trace = trace_for(checked_report(run(kernel, cell)), "encode")
    [shape] = [r for r in trace["reasons"] if r["kind"] == "shape"]
    assert "Shapes in this cell: `tokens` (2, 5), (3, 5), (3, 7)." in shape["text"]
    assert (shape["count"], trace["retraces"], shape["after"]) == (2, 2, "(3, 7)")
    # The last retrace changed only the width; the fix still frees both sizes, because
    # the first two calls differed in the rows: it accepts every call the cell made.
    decorator = SIGNATURE_FIX.search(shape["text"])
    assert decorator is not None
    assert "shape=[None, None]" in decorator.group(1)
    fixed = encoder.replace("@tf.function", decorator.group(1))
    run_quiet(kernel, fixed)
    applied = trace_for(checked_report(run(kernel, cell)), "encode")
    assert (applied["new_traces"], applied["retraces"]) == (1, 0)


def test_a_batch_of_two_tensors_counts_one_retrace_per_trace(kernel: KernelSession) -> None:
    step = (
        "@tf.function\ndef fit_step(features, labels):\n"
        "    return tf.reduce_sum(features) + tf.reduce_sum(labels)\n"
    )
    cell = "for size in [4, 6, 8]:\n    fit_step(tf.ones((size, 3)), tf.ones((size,)))"
    run_quiet(kernel, step)
    report = checked_report(run(kernel, cell))
    trace = trace_for(report, "fit_step")
    # Three traces: the first and two retraces, however many arguments changed in each.
    assert (trace["new_traces"], trace["retraces"], report["counts"]["retraces"]) == (3, 2, 2)
    [shape] = [r for r in trace["reasons"] if r["kind"] == "shape"]
    assert "`features` (4, 3), (6, 3), (8, 3); `labels` (4,), (6,), (8,)" in shape["text"]
    decorator = SIGNATURE_FIX.search(shape["text"])
    assert decorator is not None
    run_quiet(kernel, step.replace("@tf.function", decorator.group(1)))
    applied = trace_for(checked_report(run(kernel, cell)), "fit_step")
    assert (applied["new_traces"], applied["retraces"]) == (1, 0)


# ---------------------------------------------------------- rebinding + error
FIT_LINE = """hours = tf.constant([1.0, 2.0, 3.0])
score = tf.constant([3.0, 5.0, 7.0])
gain = tf.Variable(1.0)
base = tf.Variable(0.0)
step = 0.05
"""
LOOP = """for it in range(4):
    with tf.GradientTape() as g_tape:
        err = tf.reduce_mean((gain * hours + base - score) ** 2)
    dg, db = g_tape.gradient(err, [gain, base])
    gain = gain - step * dg
    base.assign_sub(step * db)
"""


def test_an_error_from_a_rebinding_points_to_the_rebinding(kernel: KernelSession) -> None:
    run_quiet(kernel, FIT_LINE)
    execution = run(kernel, LOOP, ok=False)
    report = checked_report(execution)
    [rebound] = report["variables"]
    assert rebound["name"] == "gain" and "`gain.assign_sub(step * dg)`" in rebound["text"]
    error = report["error"]
    text = error["explanation"]
    assert "`dg` is None" in text and "`gain`" in text
    assert "See the rebinding above for the fix." in text
    assert "assign_sub" not in text  # the fix is given once, in the rebinding entry
    assert error["course"]["section"] == "rebinding-variables"
    assert not note_texts(report)

    # The fix, run: no entry.
    run_quiet(kernel, FIT_LINE)
    fixed = run_quiet(kernel, LOOP.replace("gain = gain - step * dg", "gain.assign_sub(step * dg)"))
    assert fixed["variables"] == [] and fixed["error"] is None


def test_an_error_without_the_rebinding_in_the_cell_keeps_its_fix(kernel: KernelSession) -> None:
    run_quiet(kernel, FIT_LINE)
    # `gain` became a tensor in an earlier cell: this cell's report has no rebinding entry.
    run_quiet(kernel, "gain = gain - step * 1.0")
    report = checked_report(run(kernel, LOOP, ok=False))
    assert report["variables"] == []
    text = report["error"]["explanation"]
    assert "See the rebinding above" not in text
    assert "`gain.assign_sub(step * dg)`" in text


# -------------------------------------------------------------- None gradient
LINE = """px = np.linspace(0.0, 1.0, 8).astype("float32")
py = 3.0 * px + 1.0
m = tf.Variable(0.5)
c = tf.Variable(0.0)
"""


def test_no_numpy_blame_without_numpy_in_the_tape(kernel: KernelSession) -> None:
    # The cell builds its data with NumPy (line 1), but its tape block has no NumPy step.
    cell = (
        LINE
        + """guess = m * px + c
with tf.GradientTape() as rec:
    cost = tf.reduce_mean((guess - py) ** 2)
gm, gc = rec.gradient(cost, [m, c])
"""
    )
    [note] = note_texts(run_quiet(kernel, cell))
    assert note.startswith("tape.gradient at line 8 returned None for `m`, `c`: ")
    assert "NumPy" not in note
    # The value computed before the tape is named (more precise than "outside the block").
    assert (
        "`cost` is computed inside the block from `guess`, but `guess` is computed at line 5 "
        "(`guess = m * px + c`), before the block began"
    ) in note, note
    # The same cell with the prediction inside the tape: silent.
    fixed = cell.replace(
        "guess = m * px + c\nwith tf.GradientTape() as rec:\n",
        "with tf.GradientTape() as rec:\n    guess = m * px + c\n",
    )
    assert fixed != cell
    assert note_texts(run_quiet(kernel, fixed)) == []


def test_numpy_in_the_tape_is_named(kernel: KernelSession) -> None:
    run_quiet(kernel, LINE)
    cell = """with tf.GradientTape() as rec:
    guess = np.clip(m * px + c, 0.0, 10.0)
    cost = tf.reduce_mean((guess - py) ** 2)
grads = rec.gradient(cost, [m, c])
"""
    [note] = note_texts(run_quiet(kernel, cell))
    assert "through NumPy" in note


def test_a_none_gradient_the_error_explains_gets_no_note(kernel: KernelSession) -> None:
    run_quiet(kernel, LINE)
    cell = """guess = m * px + c
with tf.GradientTape() as rec:
    cost = tf.reduce_mean((guess - py) ** 2)
gm, gc = rec.gradient(cost, [m, c])
m.assign_sub(0.1 * gm)
"""
    report = checked_report(run(kernel, cell, ok=False))
    text = report["error"]["explanation"]
    assert "`gm` is None" in text and "move `guess = m * px + c` inside" in text
    assert note_texts(report) == []


def test_numpy_in_a_helper_the_tape_calls_is_named_and_kept_beside_the_error(
    kernel: KernelSession,
) -> None:
    # The NumPy step is in the learner's own loss helper, called inside the tape: the note
    # names NumPy, and it stays when the cell then raises on the None gradient, because
    # the error alone cannot tell that cause.
    run_quiet(kernel, LINE)
    helper = """def squared_error(pred, target):
    gap = np.asarray(pred) - np.asarray(target)
    return tf.constant(float((gap**2).mean()))
"""
    run_quiet(kernel, helper)
    cell = """with tf.GradientTape() as rec:
    cost = squared_error(m * px + c, py)
gm, gc = rec.gradient(cost, [m, c])
m.assign_sub(0.1 * gm)
"""
    report = checked_report(run(kernel, cell, ok=False))
    assert report["error"] is not None
    [note] = note_texts(report)
    assert "through NumPy" in note and "`m`, `c`" in note
    # The helper in TensorFlow ops: the gradients exist, the step runs, no note.
    run_quiet(
        kernel,
        "def squared_error(pred, target):\n    return tf.reduce_mean((pred - target) ** 2)\n",
    )
    assert note_texts(run_quiet(kernel, cell)) == []
