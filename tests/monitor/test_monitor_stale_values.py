"""Python values read while tracing are frozen into the graph: a later change is reported.

Each bad cell is the way learners meet it (a global threshold tuned in a later cell,
the TF guide's ``foo = 1 ... foo = 100``, a module attribute); the corrected twin
applies the report's advice and must get no such entry, and give the new result.
"""

from __future__ import annotations

import re

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    run_quiet,
    trace_for,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """
import tensorflow as tf

tf.get_logger().setLevel("ERROR")
values = tf.constant([0.2, 0.7, 1.2, 1.6])
"""


KERNEL = KernelSetup(before_load=SETUP, after_load="")


def _stale(report: dict) -> list[dict]:
    return [r for t in report["traces"] for r in t["reasons"] if r["kind"] == "stale_value"]


def _snippets(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_global_threshold_changed_in_a_later_cell(kernel: KernelSession) -> None:
    define = """threshold = 0.5

@tf.function
def count_above(x):
    return tf.reduce_sum(tf.cast(x > threshold, tf.int32))

count_above(values)"""
    assert _stale(run_quiet(kernel, define)) == []

    report = run_quiet(kernel, "threshold = 1.0\nn_above = count_above(values)")
    trace = trace_for(report, "count_above")
    assert (trace["new_traces"], trace["total_traces"]) == (0, 1)
    assert trace["course"]["section"] == "frozen-python-values"
    [reason] = trace["reasons"]
    assert (reason["kind"], reason["argument"], reason["before"], reason["after"]) == (
        "stale_value",
        "threshold",
        "0.5",
        "1.0",
    )
    assert reason["text"].startswith(
        "`count_above` still uses threshold = 0.5 from its trace; it is now 1.0."
    )
    # True: the graph still counts values above 0.5.
    assert value_of(kernel, "int(n_above)") == 3

    # Same change, later cell: said once. Another new value: said again.
    assert run_quiet(kernel, "count_above(values)")["traces"] == []
    [again] = _stale(run_quiet(kernel, "threshold = 1.5\ncount_above(values)"))
    assert (again["before"], again["after"]) == ("0.5", "1.5")

    # Fix 1 from the report: a parameter, called with a tensor of the function's dtype.
    # The call as the cell wrote it (`count_above(values)`), with the new argument.
    call = next(s for s in _snippets(reason["text"]) if s.startswith("count_above(values, "))
    assert call == "count_above(values, tf.constant(threshold, tf.float32))"
    fixed = f"""@tf.function
def count_above(x, threshold):
    return tf.reduce_sum(tf.cast(x > threshold, tf.float32))

threshold = 0.5
first = {call}
threshold = 1.0
second = {call}"""
    report = run_quiet(kernel, fixed)
    assert _stale(report) == []
    assert trace_for(report, "count_above")["new_traces"] == 1  # a tensor: no retrace
    assert value_of(kernel, "[float(first), float(second)]") == [3.0, 2.0]

    # Fix 2 from the report: a tf.Variable, changed with assign.
    create = next(s for s in _snippets(reason["text"]) if s.startswith("threshold = tf.Variable"))
    assign = next(s for s in _snippets(reason["text"]) if s.startswith("threshold.assign"))
    fixed = f"""{create}

@tf.function
def count_above(x):
    return tf.reduce_sum(tf.cast(x > threshold, tf.int32))

first = count_above(values)
{assign}
second = count_above(values)"""
    assert _stale(run_quiet(kernel, fixed)) == []
    assert value_of(kernel, "[int(first), int(second)]") == [3, 2]


def test_tf_guide_foo_in_one_cell(kernel: KernelSession) -> None:
    code = """foo = 1

@tf.function
def add_foo(x):
    return x + foo

first = add_foo(tf.constant(1))
foo = 100
second = add_foo(tf.constant(1))"""
    report = run_quiet(kernel, code)
    trace = trace_for(report, "add_foo")
    assert trace["new_traces"] == 1
    [reason] = [r for r in trace["reasons"] if r["kind"] == "stale_value"]
    assert (reason["argument"], reason["before"], reason["after"]) == ("foo", "1", "100")
    assert "`add_foo` still uses foo = 1 from its trace; it is now 100." in reason["text"]
    # An int function: the tensor to pass is an int32 one.
    assert "`add_foo(tf.constant(1), tf.constant(foo, tf.int32))`" in reason["text"]
    assert value_of(kernel, "[int(first), int(second)]") == [2, 2]


def test_no_report_when_a_retrace_picked_the_value_up_or_for_non_values(
    kernel: KernelSession,
) -> None:
    code = """limit = 2.0
activation = tf.nn.relu
import math

@tf.function
def clipped(x):
    return tf.minimum(activation(x), limit) * math.pi

clipped(tf.ones([2]))"""
    run_quiet(kernel, code)
    # A new shape retraces with the new value: nothing is stale for that trace.
    report = run_quiet(kernel, "limit = 3.0\nclipped(tf.ones([3]))")
    assert [r["kind"] for r in trace_for(report, "clipped")["reasons"]] == ["shape"]
    # Functions and modules are not values the learner tunes.
    report = run_quiet(kernel, "activation = tf.nn.sigmoid\nclipped(tf.ones([3]))")
    assert report["traces"] == []
    # 2.0 -> 2 is the same number for the graph.
    run_quiet(kernel, "limit = 3\nclipped(tf.ones([3]))")
    assert _stale(run_quiet(kernel, "clipped(tf.ones([3]))")) == []


def test_module_attribute_changed_later(kernel: KernelSession) -> None:
    define = """class Scaler(tf.Module):
    def __init__(self, factor):
        self.factor = factor

    @tf.function
    def __call__(self, x):
        return x * self.factor

scaler = Scaler(2.0)
scaler(tf.ones([2]))"""
    run_quiet(kernel, define)
    report = run_quiet(kernel, "scaler.factor = 3.0\nscaled = scaler(tf.ones([2]))")
    [reason] = _stale(report)
    assert (reason["argument"], reason["before"], reason["after"]) == ("self.factor", "2.0", "3.0")
    assert "`Scaler.__call__` still uses self.factor = 2.0 from its trace" in reason["text"]
    assert value_of(kernel, "scaled.numpy().tolist()") == [2.0, 2.0]

    create = next(s for s in _snippets(reason["text"]) if s.startswith("self.factor = "))
    assign = next(s for s in _snippets(reason["text"]) if s.startswith("scaler.factor.assign"))
    assert (create, assign) == ("self.factor = tf.Variable(2.0)", "scaler.factor.assign(3.0)")
    fixed = f"""class Scaler(tf.Module):
    def __init__(self):
        {create}

    @tf.function
    def __call__(self, x):
        return x * self.factor

scaler = Scaler()
scaler(tf.ones([2]))
{assign}
scaled = scaler(tf.ones([2]))"""
    assert _stale(run_quiet(kernel, fixed)) == []
    assert value_of(kernel, "scaled.numpy().tolist()") == [3.0, 3.0]
