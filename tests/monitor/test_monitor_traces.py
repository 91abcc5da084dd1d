"""Trace reports in a real kernel: first traces, retrace reasons, recreations, Keras, counts."""

from __future__ import annotations

import pytest

from tests.harness import (
    LOAD_FOR_PANEL,
    KernelSession,
    KernelSetup,
    note_texts,
    run,
    run_quiet,
    trace_for,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """
import numpy as np
import tensorflow as tf
import keras

@tf.function
def early(x):
    return x + 1

early(tf.constant([1.0, 2.0]))
"""


# TensorFlow imported *before* the extension loads (the usual notebook order).
KERNEL = KernelSetup(before_load=SETUP, after_load="")


def test_function_created_before_loading_is_found_and_diffed(kernel: KernelSession) -> None:
    report = run_quiet(kernel, "early(tf.constant([1.0, 2.0, 3.0]))")
    trace = trace_for(report, "early")
    assert (trace["new_traces"], trace["total_traces"]) == (1, 2)
    [reason] = trace["reasons"]
    assert (reason["kind"], reason["argument"], reason["before"], reason["after"]) == (
        "shape",
        "x",
        "(2,)",
        "(3,)",
    )


def test_first_trace_then_shape_retrace_names_the_fix(kernel: KernelSession) -> None:
    report = run_quiet(
        kernel, "@tf.function\ndef scale(x):\n    return x * 2.0\n\nscale(tf.ones([2]))"
    )
    trace = trace_for(report, "scale")
    assert (trace["new_traces"], trace["total_traces"]) == (1, 1)
    assert [r["kind"] for r in trace["reasons"]] == ["first_trace"]
    assert trace["defined_at"].startswith("Cell In[") and trace["defined_at"].endswith("line 1")
    assert trace["course"]["section"] == "tracing"

    report = run_quiet(kernel, "y = 1\nscale(tf.ones([3]))\nscale(tf.ones([4]))")
    trace = trace_for(report, "scale")
    assert (trace["new_traces"], trace["total_traces"]) == (2, 3)
    # Two retraces, one cause: one reason that counts both and lists the shapes.
    assert [(r["kind"], r["before"], r["after"], r["count"]) for r in trace["reasons"]] == [
        ("shape", "(2,)", "(4,)", 2),
    ]
    assert trace["retraces"] == 2
    text = trace["reasons"][0]["text"]
    assert "Shapes in this cell: `x` (2,), (3,), (4,)." in text
    # Where each trace came from, and the fix once shapes keep changing.
    assert "(calls at line 2, line 3)" in text
    assert "input_signature" in text and "reduce_retracing=True" in text
    assert trace["course"]["section"] == "retracing"

    # No new trace: no entry.
    assert run_quiet(kernel, "scale(tf.ones([4]))")["traces"] == []


def test_dtype_python_value_and_kind_reasons(kernel: KernelSession) -> None:
    run_quiet(kernel, "@tf.function\ndef mul(x, n):\n    return x * n\n\nmul(tf.ones([2]), 1.0)")

    trace = trace_for(run_quiet(kernel, "mul(tf.ones([2], tf.float64), 1.0)"), "mul")
    assert [(r["kind"], r["argument"], r["before"], r["after"]) for r in trace["reasons"]] == [
        ("dtype", "x", "float32", "float64")
    ]

    trace = trace_for(run_quiet(kernel, "mul(tf.ones([2]), 2.0)"), "mul")
    [reason] = trace["reasons"]
    assert (reason["kind"], reason["argument"], reason["before"], reason["after"]) == (
        "python_value",
        "n",
        "1.0",
        "2.0",
    )
    assert "pass a tensor" in reason["text"]
    # A tensor of the dtype the function already works in (x is float32).
    assert reason["text"].endswith("tf.constant(n, tf.float32).")

    trace = trace_for(run_quiet(kernel, "mul(tf.ones([2]), tf.constant(2.0))"), "mul")
    [reason] = trace["reasons"]
    assert (reason["kind"], reason["argument"]) == ("kind", "n")
    assert "Python value" in reason["before"] and "tensor float32" in reason["after"]
    assert trace["total_traces"] == 4


def test_nested_argument_leaves_are_diffed(kernel: KernelSession) -> None:
    run_quiet(
        kernel, "@tf.function\ndef pair(p):\n    return p[0] + p[1]\n\npair((tf.ones([2]), 1.0))"
    )
    trace = trace_for(run_quiet(kernel, "pair((tf.ones([5]), 1.0))"), "pair")
    assert [(r["kind"], r["argument"]) for r in trace["reasons"]] == [("shape", "p[0]")]


def test_recreation_in_a_loop_is_not_a_retrace(kernel: KernelSession) -> None:
    report = run_quiet(
        kernel,
        "def body(x):\n    return x + 1\n\nfor _ in range(3):\n    tf.function(body)(tf.ones([2]))",
    )
    trace = trace_for(report, "body")
    assert trace["new_traces"] == 3
    kinds = [r["kind"] for r in trace["reasons"]]
    assert kinds == ["first_trace", "other", "other"]
    assert all("Recreated" in r["text"] for r in trace["reasons"][1:])
    assert not {"shape", "dtype", "python_value", "kind"} & set(kinds)
    assert any("recreated 2 times" in note for note in note_texts(report))


def test_variable_creating_module_double_first_trace_is_one_trace(kernel: KernelSession) -> None:
    code = """
class Scaler(tf.Module):
    def __init__(self):
        self.w = None

    @tf.function
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.ones([3]))
        return x * self.w

scaler = Scaler()
scaler(tf.ones([3]))
"""
    trace = trace_for(run_quiet(kernel, code), "Scaler.__call__")
    assert (trace["new_traces"], trace["total_traces"]) == (1, 1)
    [reason] = trace["reasons"]
    assert reason["kind"] == "first_trace" and "twice" in reason["text"]
    # TensorFlow itself counted two traces for that one call.
    assert value_of(kernel, "scaler.__call__.experimental_get_tracing_count()") == 2
    assert run_quiet(kernel, "scaler(tf.ones([3]))")["traces"] == []


def test_keras_fit_freeze_and_compile_again(kernel: KernelSession) -> None:
    code = """model = keras.Sequential(
    [keras.Input((3,)), keras.layers.Dense(4, name="hidden"), keras.layers.Dense(1, name="out")]
)
model.compile(optimizer="sgd", loss="mse")
features = np.random.rand(32, 3).astype("float32")
targets = np.random.rand(32, 1).astype("float32")
history = model.fit(features, targets, epochs=1, batch_size=32, verbose=0)
"""
    report = run_quiet(kernel, code)
    # The first trace of Keras' own step function is what every fit() does: not listed.
    assert report["traces"] == []

    report = run_quiet(kernel, 'model.get_layer("hidden").trainable = False')
    [flag] = [v for v in report["variables"] if v["change"] == "trainable_flag"]
    assert flag["name"] == "model.get_layer('hidden').trainable"
    assert (flag["before"], flag["after"]) == (True, False)
    assert "until compile() runs again" in flag["text"]
    assert flag["course"]["section"] == "trainable-weights"
    # Its weights leaving the count (4 -> 2) is the same change: one entry, not two (and the
    # stale train step still trains them, so "no longer updated" would be wrong).
    assert [v["change"] for v in report["variables"]] == ["trainable_flag"]

    report = run_quiet(
        kernel,
        'model.compile(optimizer="sgd", loss="mse")\n'
        "history = model.fit(features, targets, epochs=1, batch_size=32, verbose=0)",
    )
    assert report["variables"] == []
    # A new step function after compile(): a first trace, not a retrace, so not listed.
    assert report["traces"] == []

    report = run_quiet(
        kernel, "history = model.fit(features, targets, epochs=1, batch_size=32, verbose=0)"
    )
    assert report["traces"] == []


def test_run_functions_eagerly_says_nothing_traces(kernel: KernelSession) -> None:
    run_quiet(kernel, "@tf.function\ndef eager_fn(x):\n    return x - 1\n")
    report = run_quiet(
        kernel,
        "tf.config.run_functions_eagerly(True)\neager_fn(tf.ones([2]))\neager_fn(tf.ones([3]))",
    )
    assert report["traces"] == []
    assert any("run_functions_eagerly(True)" in note for note in note_texts(report))
    report = run_quiet(kernel, "tf.config.run_functions_eagerly(False)\neager_fn(tf.ones([2]))")
    assert trace_for(report, "eager_fn")["reasons"][0]["kind"] == "first_trace"
    assert not any("run_functions_eagerly" in note for note in note_texts(report))


def test_trace_counts_identical_with_and_without_the_monitor(kernel: KernelSession) -> None:
    define = """
def make_{name}():
    @tf.function
    def fn(x, n):
        return x * n

    class Holder(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def unused(self, x):
            return x

        @tf.function
        def __call__(self, x):
            return x + 1.0

    return fn, Holder()

{name}_fn, {name}_holder = make_{name}()
"""
    calls = """
{name}_fn(tf.ones([2]), 1); {name}_fn(tf.ones([3]), 1); {name}_fn(tf.ones([3]), 2)
{name}_fn(tf.ones([3], tf.int32), 2); {name}_fn(tf.ones([3]), tf.constant(2.0))
{name}_holder(tf.ones([2])); {name}_holder(tf.ones([2, 2]))
"""
    counts = (
        "[{name}_fn.experimental_get_tracing_count(), "
        "{name}_holder.__call__.experimental_get_tracing_count(), "
        "{name}_holder.unused.experimental_get_tracing_count()]"
    )
    run(kernel, define.format(name="watched"))
    run(kernel, calls.format(name="watched"))
    run(kernel, "%tfcoach")
    with_monitor = value_of(kernel, counts.format(name="watched"))

    run(kernel, "%unload_ext jupyterlab_tfcoach")
    try:
        hooked = value_of(
            kernel,
            "hasattr(type(watched_fn).__call__, '__tfcoach_original__') "
            "or hasattr(type(watched_fn).__init__, '__tfcoach_original__')",
        )
        assert hooked is False
        run(kernel, define.format(name="bare"))
        run(kernel, calls.format(name="bare"))
        without_monitor = value_of(kernel, counts.format(name="bare"))
    finally:
        run(kernel, LOAD_FOR_PANEL)
    assert with_monitor == without_monitor == [5, 2, 0]


def test_python_number_advice_names_the_function_dtype(kernel: KernelSession) -> None:
    code = """@tf.function
def decay(weights, lr):
    return weights * (1.0 - lr)

weights = tf.ones([3])
for lr in [0.1, 0.05]:
    decay(weights, lr)
decay(weights, 1)"""
    trace = trace_for(run_quiet(kernel, code), "decay")
    values = trace["reasons"][1:]
    # Both retraces (0.05, then the int 1) are one cause: one reason counting both.
    assert [(r["kind"], r["after"], r["count"]) for r in values] == [("python_value", "1", 2)]
    assert trace["retraces"] == 2
    assert "Values of `lr` in this cell: 0.1, 0.05, 1." in values[0]["text"]
    assert "tf.constant(lr, tf.float32)" in values[0]["text"]

    # The advice, run: one more trace for the tensor, then none for any rate.
    fixed = "for lr in [0.1, 0.05, 1, 0.01]:\n    decay(weights, tf.constant(lr, tf.float32))"
    assert trace_for(run_quiet(kernel, fixed), "decay")["new_traces"] == 1
    assert run_quiet(kernel, fixed)["traces"] == []

    # An int passed to a float function gets the float dtype too: tf.constant(2) is int32.
    run_quiet(kernel, code.split("\n\nweights")[0] + "\n\ndecay(weights, 0.5)")
    [int_reason] = trace_for(run_quiet(kernel, "decay(weights, 2)"), "decay")["reasons"]
    assert int_reason["after"] == "2" and "tf.constant(lr, tf.float32)" in int_reason["text"]


def test_variable_length_sequence_is_not_a_partial_batch(kernel: KernelSession) -> None:
    code = """@tf.function
def count_tokens(tokens):
    return tf.reduce_sum(tf.cast(tokens > 0, tf.int32))

count_tokens(tf.constant([5, 1, 0, 7, 2]))
count_tokens(tf.constant([3, 0, 4]))"""
    trace = trace_for(run_quiet(kernel, code), "count_tokens")
    reason = trace["reasons"][1]
    assert (reason["kind"], reason["before"], reason["after"]) == ("shape", "(5,)", "(3,)")
    assert "drop_remainder" not in reason["text"] and "batch" not in reason["text"]
    decorator = "@tf.function(input_signature=[tf.TensorSpec(shape=[None], dtype=tf.int32)])"
    assert decorator in reason["text"]

    # The advice, run: one trace for every length.
    fixed = f"""{decorator}
def count_tokens(tokens):
    return tf.reduce_sum(tf.cast(tokens > 0, tf.int32))

for length in (5, 3, 7, 1):
    count_tokens(tf.range(length))"""
    trace = trace_for(run_quiet(kernel, fixed), "count_tokens")
    assert trace["new_traces"] == 1 and [r["kind"] for r in trace["reasons"]] == ["first_trace"]


def test_variables_and_objects_are_described_not_repr(kernel: KernelSession) -> None:
    # Five traces in a row: TF's own retracing warning would print.
    run(kernel, 'tf.get_logger().setLevel("ERROR")')
    code = """@tf.function
def apply(model, v):
    return v * 2.0

class Settings:
    pass

def new_model():
    return keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])

first_model = new_model()
apply(first_model, tf.Variable([1.0, 2.0, 3.0]))
apply(first_model, tf.Variable([1.0, 2.0]))
apply(new_model(), tf.Variable([1.0, 2.0]))
# Both kept alive: a dead object's id may be reused by the next one, which TF's
# weak-reference trace key could then take for the same object.
settings_a, settings_b = Settings(), Settings()
apply(settings_a, tf.Variable([1.0, 2.0]))
apply(settings_b, tf.Variable([1.0, 2.0]))"""
    trace = trace_for(run_quiet(kernel, code), "apply")
    texts = [r["text"] for r in trace["reasons"]]
    for reason in trace["reasons"]:
        for value in (reason["text"], reason["before"] or "", reason["after"] or ""):
            assert "0x" not in value and "VariableSpec" not in value and "Weakref" not in value
    variable, model, kinds, settings = trace["reasons"][1:]
    assert (variable["before"], variable["after"]) == (
        "a tf.Variable float32 of shape (3,)",
        "a tf.Variable float32 of shape (2,)",
    )
    assert model["after"].startswith("a different `Sequential` object")
    assert "objects are traced by identity: each new one traces again" in model["text"]
    assert kinds["argument"] == "model"  # a Sequential, then a Settings object
    assert "a different `Settings` object" in settings["after"]
    assert len(texts) == 5


def test_a_helper_retraced_inside_another_functions_trace_is_no_retrace(
    kernel: KernelSession,
) -> None:
    """A tf.function called from inside another one's trace is inlined into that graph,
    once per outer trace, whatever its input shapes: the input_signature the retrace advice
    gives would change nothing, so no retrace is told for it (the outer's first trace is)."""
    run_quiet(
        kernel,
        "@tf.function\ndef jitter(t):\n    return t + tf.random.normal(tf.shape(t))\n\n"
        "jitter(tf.ones([4, 3]))\n",
    )
    report = run_quiet(
        kernel,
        "@tf.function\ndef smooth_pass(batch):\n    return tf.reduce_mean(jitter(batch) ** 2)\n\n"
        "for rows in (tf.ones([16, 3]), tf.zeros([16, 3])):\n    smooth_pass(rows)\n",
    )
    assert [t["function"] for t in report["traces"] if t.get("retraces")] == []
    assert trace_for(report, "smooth_pass")["new_traces"] == 1
    # Called on its own with a new shape, it is a retrace as before.
    report = run_quiet(kernel, "jitter(tf.ones([7, 3]))\n")
    assert trace_for(report, "jitter")["retraces"] == 1
