"""Realistic notebook workflows in a real kernel: every report must be true and not noisy.

Each test pins a report that was false or noisy before: Keras internals named by
their role and explained without advice the user cannot follow, nested list
arguments read (not "cannot read signatures in this TensorFlow version"), a last
partial batch recognised, repeated reasons condensed, mode switches not told to
become tensors, and a re-run defining cell starting its count from scratch.
"""

from __future__ import annotations

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    note_texts,
    run,
    run_quiet,
    trace_for,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """
import numpy as np
import tensorflow as tf
import keras

tf.get_logger().setLevel("ERROR")  # TF's own retracing warning is not the monitor's output
features = np.random.rand(100, 4).astype("float32")
targets = np.random.rand(100, 1).astype("float32")
"""


KERNEL = KernelSetup(before_load=SETUP, after_load="")


def _no_unreadable_note(report: dict) -> None:
    assert not any("cannot read" in note for note in note_texts(report)), report["notes"]


FITTED_MODEL = """model = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)]
)
model.compile(optimizer="adam", loss="mse")
history = model.fit(features, targets, epochs=2, batch_size=32,
                    validation_data=(features[:20], targets[:20]), verbose=0)"""


def with_fitted_model(kernel: KernelSession) -> None:
    """The fitted ``model`` the first test makes, made here when this test runs without it
    (alone, or on another worker)."""
    indented = "\n".join("    " + line for line in FITTED_MODEL.splitlines())
    run(kernel, f"try:\n    model\nexcept NameError:\n{indented}")


def test_keras_fit_with_validation_names_each_step_once(kernel: KernelSession) -> None:
    report = run_quiet(kernel, FITTED_MODEL)
    # Before: four entries, two pairs with the same long qualified name, and Keras'
    # multi_step_on_iterator wrapper next to the step it always traces with. First
    # traces of the step functions Keras builds are what every fit() does: none listed.
    assert report["traces"] == []
    # Fitting again traces nothing.
    assert run_quiet(kernel, "history = model.fit(features, targets, verbose=0)")["traces"] == []


def test_keras_predict_last_batch_relaxation_is_not_a_finding(kernel: KernelSession) -> None:
    with_fitted_model(kernel)
    report = run_quiet(kernel, "predictions = model.predict(features, verbose=0)")
    _no_unreadable_note(report)  # Keras passes a List: it used to make every reason unknown
    # The last, smaller batch makes Keras relax its predict step's shape once ((32, 4) ->
    # (None, 4)): expected, like the step's first trace, so neither is a line of the report.
    assert report["traces"] == [], report["traces"]
    assert report["level"] == "none" and report["summary"] == ""
    # Another batch size reuses the relaxed trace.
    assert run_quiet(kernel, "predictions = model.predict(features[:7], verbose=0)")["traces"] == []


def test_keras_train_on_batch_retrace_gives_keras_advice(kernel: KernelSession) -> None:
    with_fitted_model(kernel)
    report = run_quiet(kernel, "loss = model.train_on_batch(features[:5], targets[:5])")
    [trace] = report["traces"]
    [reason] = trace["reasons"]  # one line for x, y and the sample weight, not three
    assert reason["kind"] == "shape"
    assert "train_on_batch" in reason["text"]
    assert "input_signature" not in reason["text"]  # cannot be given to Keras' function
    assert "pass a tensor instead" not in reason["text"]


def test_custom_loop_last_partial_batch(kernel: KernelSession) -> None:
    with_fitted_model(kernel)
    code = """optimizer = keras.optimizers.SGD()
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(32).prefetch(2)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for epoch in range(2):
    for xb, yb in dataset:
        loss = train_step(xb, yb)"""
    trace = trace_for(run_quiet(kernel, code), "train_step")
    assert trace["new_traces"] == 2
    first, last_batch = trace["reasons"]
    assert first["kind"] == "first_trace"
    # The last, partial batch costs one more trace: normal, told as information (one line
    # for the whole batch (x, y)), with no input_signature or drop_remainder to apply.
    assert (last_batch["kind"], last_batch["argument"], last_batch["before"]) == (
        "last_batch",
        "x",
        "(32, 4)",
    )
    assert last_batch["after"] == "(4, 4)" and last_batch["counts_as"] == "first_trace"
    assert "nothing to change" in last_batch["text"]
    assert "input_signature" not in last_batch["text"]
    assert "drop_remainder" not in last_batch["text"]
    assert trace["retraces"] == 0
    again = "for xb, yb in dataset:\n    loss = train_step(xb, yb)"
    assert run_quiet(kernel, again)["traces"] == []


def test_partial_batch_with_one_dimensional_labels(kernel: KernelSession) -> None:
    """Integer class labels are 1-D: in an ``(x, y)`` batch they shrink with the inputs'
    rows, to the same size, and the partial batch is still told as information. A 1-D
    tensor that shrinks alone (a sequence) keeps the usual advice."""
    code = """pairs_ds = tf.data.Dataset.from_tensor_slices(
    (np.ones((50, 3), "float32"), np.arange(50) % 2)
).batch(16)
head = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
head_opt = keras.optimizers.SGD(0.01)
ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def class_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = ce(yb, head(xb, training=True))
    grads = tape.gradient(loss, head.trainable_variables)
    head_opt.apply_gradients(zip(grads, head.trainable_variables))
    return loss


for epoch in range(2):
    for xb, yb in pairs_ds:
        class_step(xb, yb)"""
    trace = trace_for(run_quiet(kernel, code), "class_step")
    kinds = [reason["kind"] for reason in trace["reasons"]]
    assert kinds == ["first_trace", "last_batch"], trace["reasons"]
    last = trace["reasons"][1]
    assert (last["before"], last["after"]) == ("(16, 3)", "(2, 3)")
    assert "xb" in last["text"] and "yb" in last["text"]
    assert trace["retraces"] == 0
    alone = """@tf.function
def running_total(seq):
    return tf.reduce_sum(seq)

for length in (10, 7):
    running_total(tf.ones((length,)))"""
    kinds = [r["kind"] for r in trace_for(run_quiet(kernel, alone), "running_total")["reasons"]]
    assert "last_batch" not in kinds, kinds


def test_partial_batch_then_another_size_gets_the_signature_advice(
    kernel: KernelSession,
) -> None:
    """A look-alike of the partial batch: sizes that keep changing (10, 7, then 5 rows) are
    not one last batch: the second new shape gets the input_signature advice, covering
    every size seen."""
    code = """@tf.function
def score_rows(block):
    return tf.reduce_sum(block * 2.0, axis=1)

for rows in (10, 7, 5):
    totals = score_rows(tf.ones((rows, 3)))"""
    trace = trace_for(run_quiet(kernel, code), "score_rows")
    kinds = [reason["kind"] for reason in trace["reasons"]]
    assert kinds[:2] == ["first_trace", "last_batch"], kinds
    advice = [r["text"] for r in trace["reasons"] if r["kind"] == "shape"]
    assert advice and "input_signature=[tf.TensorSpec(shape=[None, 3]" in advice[0], advice
    fix = advice[0].split("Fix: declare the shapes once, with None where the size varies: ")[1]
    decorator = fix.split(" (or use")[0]
    fixed = code.replace("@tf.function", decorator).replace("score_rows", "score_rows2")
    assert trace_for(run_quiet(kernel, fixed), "score_rows2")["new_traces"] == 1


def test_dataset_functions_only_user_tf_functions(kernel: KernelSession) -> None:
    code = """def plain(v):
    return v * 2.0

@tf.function
def decorated(v):
    return v * 3.0

pipeline = (tf.data.Dataset.from_tensor_slices(features).map(lambda v: v + 1.0).map(plain)
            .map(decorated).filter(lambda v: v[0] > 0.0).batch(10).prefetch(2))
batches = list(pipeline.as_numpy_iterator())"""
    report = run_quiet(kernel, code)
    # tf.data's own wrappers for lambdas/plain functions are not listed; the user's
    # tf.function is, once.
    assert [trace["function"] for trace in report["traces"]] == ["decorated"]
    assert [r["kind"] for r in report["traces"][0]["reasons"]] == ["first_trace"]


def test_list_and_namedtuple_arguments_are_read(kernel: KernelSession) -> None:
    code = """import collections
Pair = collections.namedtuple("Pair", "a b")

@tf.function
def total(xs):
    return tf.add_n(xs)

@tf.function
def pair_sum(p):
    return p.a + p.b

total([tf.ones(2), tf.ones(2)]); total([tf.ones(2), tf.ones(2), tf.ones(2)])
pair_sum(Pair(tf.ones(2), tf.ones(2))); pair_sum(Pair(tf.ones(3), 1.0))"""
    report = run_quiet(kernel, code)
    _no_unreadable_note(report)
    listed = trace_for(report, "total")["reasons"][1]
    assert (listed["kind"], listed["argument"]) == ("other", "xs")
    assert "structure of `xs` changed" in listed["text"]
    named = trace_for(report, "pair_sum")["reasons"][1]
    assert (named["kind"], named["argument"], named["before"], named["after"]) == (
        "shape",
        "p.a",
        "(2,)",
        "(3,)",
    )


def test_many_python_floats_are_condensed(kernel: KernelSession) -> None:
    code = """@tf.function
def shift(x, a):
    return x + a

for i in range(12):
    shift(tf.ones([2]), float(i))"""
    trace = trace_for(run_quiet(kernel, code), "shift")
    assert (trace["new_traces"], trace["total_traces"]) == (12, 12)
    reasons = trace["reasons"]
    # Eleven retraces for one cause: one reason, the fix once, every value, all counted.
    assert [r["kind"] for r in reasons] == ["first_trace", "python_value"]
    merged = reasons[1]
    assert merged["text"].count("tf.constant(a, tf.float32)") == 1
    values = ", ".join(f"{i}.0" for i in range(12))
    assert f"Values of `a` in this cell: {values}." in merged["text"]
    assert (merged["count"], merged["after"]) == (11, "11.0")
    assert trace["retraces"] == 11


def test_mode_switch_strings_and_bools_are_not_told_to_become_tensors(
    kernel: KernelSession,
) -> None:
    code = """@tf.function
def run_mode(x, mode, training=False):
    return x if mode == "a" else -x

run_mode(tf.ones([1]), "a")
run_mode(tf.ones([1]), "b")
run_mode(tf.ones([1]), "b", training=True)"""
    reasons = trace_for(run_quiet(kernel, code), "run_mode")["reasons"]
    assert [(r["kind"], r["argument"]) for r in reasons] == [
        ("first_trace", None),
        ("python_value", "mode"),
        ("python_value", "training"),
    ]
    for reason in reasons[1:]:
        assert "tf.constant" not in reason["text"] and "few values" in reason["text"]


def test_rerun_defining_cell_starts_from_scratch(kernel: KernelSession) -> None:
    cell = "@tf.function\ndef again(x):\n    return x + 1\n\nagain(tf.ones([2]))"
    first = trace_for(run_quiet(kernel, cell), "again")
    assert (first["new_traces"], first["total_traces"]) == (1, 1)
    rerun = trace_for(run_quiet(kernel, cell), "again")
    # A new object for the same code: one trace, not "2 in total".
    assert (rerun["new_traces"], rerun["total_traces"]) == (1, 1)
    assert [r["kind"] for r in rerun["reasons"]] == ["first_trace"]
    assert "recreated" in rerun["reasons"][0]["text"]
    retrace = trace_for(run_quiet(kernel, "again(tf.ones([3]))"), "again")
    assert (retrace["new_traces"], retrace["total_traces"]) == (1, 2)


def test_recreations_in_a_loop_are_condensed(kernel: KernelSession) -> None:
    code = (
        "fns = [tf.function(lambda x, i=i: x * i) for i in range(20)]\n"
        "for fn in fns:\n    fn(tf.ones([2]))"
    )
    report = run_quiet(kernel, code)
    [trace] = report["traces"]
    assert trace["new_traces"] == 20
    assert len(trace["reasons"]) == 5  # first trace, 3 recreations, one summary
    assert "16 more recreations" in trace["reasons"][-1]["text"]
    assert any("recreated 19 times" in note for note in note_texts(report))


def test_hundred_functions_are_capped_with_a_note(kernel: KernelSession) -> None:
    define = (
        "hundred = []\nfor i in range(100):\n"
        "    exec(f'@tf.function\\ndef many_{i}(x):\\n    return x * {i}\\n'\n"
        "         f'hundred.append(many_{i})')"
    )
    assert run_quiet(kernel, define)["traces"] == []  # defining traces nothing
    report = run_quiet(kernel, "for fn in hundred:\n    fn(tf.ones([2]))")
    assert len(report["traces"]) == 30
    [note] = [n for n in note_texts(report) if "more tf.functions traced" in n]
    assert note.startswith("70 more tf.functions traced") and "(70 traces)" in note
    assert run_quiet(kernel, "for fn in hundred:\n    fn(tf.ones([2]))")["traces"] == []


def test_quiet_cells_stay_quiet(kernel: KernelSession) -> None:
    """Errors, interrupts, hostile objects and a big namespace: no output from the monitor."""
    run_quiet(
        kernel, "for i in range(3000):\n    globals()[f'obj_{i}'] = object() if i % 3 else [i]"
    )
    hostile = """class Hostile:
    def __getattr__(self, name):
        raise RuntimeError(name)
    def __eq__(self, other):
        raise RuntimeError("eq")
    def __hash__(self):
        raise RuntimeError("hash")
    def __repr__(self):
        raise RuntimeError("repr")
hostile = Hostile()"""
    assert run_quiet(kernel, hostile)["variables"] == []
    execution = run(kernel, "raise KeyboardInterrupt", ok=False)
    assert execution.reply["status"] == "error"
    assert execution.report["error"] is None  # nothing to explain, nothing invented
    assert not [m for m in execution.iopub if m["header"]["msg_type"] == "stream"]
