"""A retrace names the argument as the learner wrote it at the call, not only the
parameter (issue #25): ``nudge(w_batch, step_size)`` retracing for a new Python float says
``step_size``, gives the fix in that call, explains the cause once and lists the values."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, run_quiet, trace_for

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")

DEFINE = """@tf.function
def nudge(weights_in, rate):
    return weights_in * (1.0 - rate)

w_batch = tf.ones([4])
"""


def test_the_call_site_argument_and_its_values_are_named_once(kernel: KernelSession) -> None:
    run_quiet(kernel, DEFINE)
    cell = "for step_size in [0.3, 0.2, 0.1, 0.05]:\n    out = nudge(w_batch, step_size)"
    report = run_quiet(kernel, cell)
    trace = trace_for(report, "nudge")
    # The report still counts every retrace: its counts, summary and level.
    assert (report["counts"]["retraces"], report["summary"]) == (3, "3 retraces")
    assert report["level"] == "warning"
    reasons = trace["reasons"]
    # One cause, one entry: the three retraces for new floats are one reason that counts them.
    assert [r["kind"] for r in reasons] == ["first_trace", "python_value"]
    explained = reasons[1]
    assert (explained["count"], explained["after"]) == (3, "0.05")
    assert (trace["new_traces"], trace["retraces"]) == (4, 3)
    # The parameter and the argument as written at the call, with every value taken.
    assert "`rate` (`step_size` at the call)" in explained["text"]
    assert "Values of `rate` in this cell: 0.3, 0.2, 0.1, 0.05." in explained["text"]
    fix = "nudge(w_batch, tf.constant(step_size, tf.float32))"
    assert explained["text"].count(f"`{fix}`") == 1
    # The cause is explained once.
    assert explained["text"].count("part of the trace key") == 1
    assert "same cause" not in explained["text"]

    # The fix, run (on a new function object: TF warns about the retraces above once its
    # own counter sees them): one trace for the tensor, then none for any new rate.
    run_quiet(kernel, DEFINE)
    fixed = cell.replace("nudge(w_batch, step_size)", fix)
    assert trace_for(run_quiet(kernel, fixed), "nudge")["new_traces"] == 1
    assert run_quiet(kernel, fixed.replace("0.3, 0.2", "0.7, 0.9"))["traces"] == []


def test_a_call_from_a_helper_names_the_helpers_argument(kernel: KernelSession) -> None:
    run_quiet(kernel, DEFINE)
    run_quiet(kernel, "def shrink(values, amount):\n    return nudge(values, rate=amount)\n")
    run_quiet(kernel, "shrink(w_batch, 0.5)")
    trace = trace_for(run_quiet(kernel, "shrink(w_batch, 0.25)"), "nudge")
    [reason] = trace["reasons"]
    assert reason["kind"] == "python_value"
    # The innermost cell line calling the function: the helper's `rate=amount`.
    assert "`rate` (`amount` at the call)" in reason["text"]
    assert "`nudge(values, rate=tf.constant(amount, tf.float32))`" in reason["text"]


def test_an_argument_written_as_the_parameter_is_not_named_twice(kernel: KernelSession) -> None:
    run_quiet(kernel, DEFINE)
    run_quiet(kernel, "rate = 0.5\nnudge(w_batch, rate)")
    trace = trace_for(run_quiet(kernel, "rate = 0.25\nnudge(w_batch, rate)"), "nudge")
    [reason] = trace["reasons"]
    assert "at the call" not in reason["text"]
    assert reason["text"].endswith("`nudge(w_batch, tf.constant(rate, tf.float32))`.")
