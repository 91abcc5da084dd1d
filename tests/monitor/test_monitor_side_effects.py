"""Python side effects in a traced function run once per trace: named in the report, with the fix.

Each bad cell is written the way learners write it; its corrected twin applies the
advice taken from the report and must get no such entry (and really count calls).
"""

from __future__ import annotations

import ast
import re
import types

import pytest

from jupyterlab_tfcoach.monitor.traces import body_scan as fx
from tests.harness import (
    KernelSession,
    KernelSetup,
    checked_report,
    run,
    trace_for,
    value_of,
)

SETUP = """
import numpy as np
import tensorflow as tf
import keras

tf.get_logger().setLevel("ERROR")
features = np.random.rand(64, 3).astype("float32")
targets = np.random.rand(64, 1).astype("float32")
"""


KERNEL = KernelSetup(before_load=SETUP, after_load="")


def _report(kernel: KernelSession, code: str) -> dict:
    # These cells may print (that is the point of some): run them, check the report.
    return checked_report(run(kernel, f"{code}\npass"))


def _side_effects(trace: dict) -> dict[str, dict]:
    return {r["argument"]: r for r in trace["reasons"] if r["kind"] == "side_effect"}


def _snippets(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def _no_side_effects(report: dict) -> None:
    for trace in report["traces"]:
        assert not _side_effects(trace), trace


BAD_LOOP = """steps_done = 0
loss_history = []
w = tf.Variable(tf.zeros([3, 1]))
opt = keras.optimizers.SGD(0.1)
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(16, drop_remainder=True)

@tf.function
def train_step(x, y):
    global steps_done
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((x @ w - y) ** 2)
    opt.apply_gradients([(tape.gradient(loss, w), w)])
    steps_done += 1
    loss_history.append(loss)
    print("step", steps_done)
    return loss

for xb, yb in dataset:
    train_step(xb, yb)"""


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_custom_loop_counter_list_and_print(kernel: KernelSession) -> None:
    report = _report(kernel, BAD_LOOP)
    trace = trace_for(report, "train_step")
    assert trace["course"]["section"] == "side-effects"
    assert trace["reasons"][0]["kind"] == "first_trace"
    found = _side_effects(trace)
    assert set(found) == {"steps_done", "loss_history", "print"}
    for reason in found.values():
        assert (reason["before"], reason["after"]) == (None, None)
        assert "runs only while TensorFlow traces it" in reason["text"]
        assert "0x" not in reason["text"]
    # What the report says is true: 4 batches, one trace, one count, one entry.
    assert value_of(kernel, "[steps_done, len(loss_history)]") == [1, 1]

    counter = found["steps_done"]["text"]
    assert counter.startswith("`steps_done += 1` in `train_step`")
    assert "`steps_done = tf.Variable(0)`" in counter
    assert "`steps_done.assign_add(1)`" in counter
    appended = found["loss_history"]["text"]
    # The call as the loop writes it, so the snippet runs where it is pasted.
    assert "`loss_history.append(float(train_step(xb, yb)))`" in appended
    assert "tf.TensorArray" in appended
    assert "`tf.print(...)`" in found["print"]["text"]

    # The corrected twin, built from the report's own snippets.
    create = next(s for s in _snippets(counter) if s.startswith("steps_done = tf.Variable"))
    update = next(s for s in _snippets(counter) if s.startswith("steps_done.assign_add"))
    append = next(s for s in _snippets(appended) if s.startswith("loss_history.append(float"))
    fixed = f"""{create}
loss_history = []

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((x @ w - y) ** 2)
    opt.apply_gradients([(tape.gradient(loss, w), w)])
    {update}
    tf.print("step", steps_done)
    return loss

for xb, yb in dataset:
    {append}"""
    report = _report(kernel, fixed)
    _no_side_effects(report)
    assert trace_for(report, "train_step")["course"]["section"] == "tracing"
    assert value_of(kernel, "[int(steps_done.numpy()), len(loss_history)]") == [4, 4]
    assert value_of(kernel, "all(type(v) is float for v in loss_history)") is True


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_side_effects_told_once_and_again_only_for_new_code(
    kernel: KernelSession,
) -> None:
    code = """log = []

@tf.function
def double(x):
    log.append(x)
    return x * 2

double(tf.ones([2])); double(tf.ones([3])); double(tf.ones([4]))"""
    trace = trace_for(_report(kernel, code), "double")
    assert trace["new_traces"] == 3
    # Three traces, one side-effect line; the shape retraces are still explained.
    assert [r["kind"] for r in trace["reasons"]].count("side_effect") == 1
    [shape] = [r for r in trace["reasons"] if r["kind"] == "shape"]
    assert shape["count"] == 2 and trace["retraces"] == 2
    assert value_of(kernel, "len(log)") == 3
    # Reusing a trace: no entry. A new trace in a later cell: the retrace is explained,
    # the side effect the first cell explained is not said again (it was noise in every
    # later cell of a learner's notebook).
    assert _report(kernel, "double(tf.ones([4]))")["traces"] == []
    trace = trace_for(_report(kernel, "double(tf.ones([5]))"), "double")
    assert list(_side_effects(trace)) == []
    assert [r["kind"] for r in trace["reasons"]] == ["shape"]
    assert value_of(kernel, "len(log)") == 4
    # The learner edits the function and keeps the append: new code, told again.
    edited = code.replace("return x * 2", "return x * 3")
    trace = trace_for(_report(kernel, edited), "double")
    assert list(_side_effects(trace)) == ["log"]


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_nonlocal_counter_and_things_that_are_not_side_effects(kernel: KernelSession) -> None:
    code = """def make_step():
    calls = 0

    @tf.function
    def step(x):
        nonlocal calls
        calls += 1
        return x + 1

    return step, lambda: calls

step, calls_made = make_step()
for _ in range(3):
    step(tf.ones([2]))"""
    trace = trace_for(_report(kernel, code), "make_step.<locals>.step")
    [reason] = _side_effects(trace).values()
    assert reason["argument"] == "calls"
    assert "`calls = tf.Variable(0)` once in the enclosing function" in reason["text"]
    assert "`calls.assign_add(1)`" in reason["text"]
    assert value_of(kernel, "calls_made()") == 1

    # tf.print, a list built inside, a print in the function tf.py_function runs at call
    # time, a local counter, and a variable's assign_add: nothing to report.
    clean = """total = tf.Variable(0.0)

def log_value(v):
    print("value", float(v))
    return v

@tf.function
def clean_step(x):
    parts = []
    count = 0
    for i in range(3):
        parts.append(x * i)
        count += 1
    total.assign_add(tf.reduce_sum(x))
    tf.print("sum", total)
    y = tf.py_function(log_value, [tf.reduce_sum(x)], tf.float32)
    return tf.add_n(parts) + y + count

clean_step(tf.ones([2]))"""
    report = _report(kernel, clean)
    trace = trace_for(report, "clean_step")
    assert [r["kind"] for r in trace["reasons"]] == ["first_trace"]


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_tf_module_method_counter_and_list(kernel: KernelSession) -> None:
    code = """class Accumulator(tf.Module):
    def __init__(self):
        self.calls = 0
        self.sums = []

    @tf.function
    def __call__(self, x):
        self.calls += 1
        total = tf.reduce_sum(x)
        self.sums.append(total)
        return total

acc = Accumulator()
for _ in range(3):
    acc(tf.ones([2]))"""
    trace = trace_for(_report(kernel, code), "Accumulator.__call__")
    found = _side_effects(trace)
    assert set(found) == {"self.calls", "self.sums"}
    counter = found["self.calls"]["text"]
    assert "`self.calls = tf.Variable(0)` in `__init__`" in counter
    assert "`self.calls.assign_add(1)`" in counter
    appended = found["self.sums"]["text"]
    # The object is named as the notebook names it.
    assert "`acc.sums.append(float(acc(tf.ones([2]))))`" in appended
    assert value_of(kernel, "[acc.calls, len(acc.sums)]") == [1, 1]

    create = next(s for s in _snippets(counter) if s.startswith("self.calls = "))
    update = next(s for s in _snippets(counter) if s.startswith("self.calls.assign_add"))
    append = next(s for s in _snippets(appended) if s.startswith("acc.sums.append(float"))
    fixed = f"""class Accumulator(tf.Module):
    def __init__(self):
        {create}
        self.sums = []

    @tf.function
    def __call__(self, x):
        {update}
        return tf.reduce_sum(x)

acc = Accumulator()
for _ in range(3):
    {append}"""
    report = _report(kernel, fixed)
    _no_side_effects(report)
    assert value_of(kernel, "[int(acc.calls.numpy()), acc.sums]") == [3, [2.0, 2.0, 2.0]]


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_a_module_that_builds_its_variables_on_the_first_trace_is_quiet(
    kernel: KernelSession,
) -> None:
    code = """class Scaled(tf.Module):
    def __init__(self, units):
        super().__init__()
        self.units = units
        self.built = False

    @tf.function(reduce_retracing=True)
    def __call__(self, x):
        if not self.built:
            self.w = tf.Variable(tf.ones([x.shape[-1], self.units]))
            self.built = True
        return x @ self.w

scaled = Scaled(3)
first = scaled(tf.ones([2, 4]))
second = scaled(tf.ones([5, 4]))"""
    report = _report(kernel, code)
    _no_side_effects(report)
    assert value_of(kernel, "[len(scaled.trainable_variables), list(second.shape)]") == [1, [5, 3]]
    # The same once-only flag around a helper that makes the variables: quiet too. A flag
    # set on every trace without a test is still told.
    delegated = """class Stack(tf.Module):
    def __init__(self):
        super().__init__()
        self.ready = False
        self.seen = False

    def make(self, width):
        self.w = tf.Variable(tf.ones([width, 2]))

    @tf.function(reduce_retracing=True)
    def __call__(self, x):
        if not self.ready:
            self.make(x.shape[-1])
            self.ready = True
        self.seen = True
        return x @ self.w

stack = Stack()
stack(tf.ones([2, 3]))
stack(tf.ones([4, 3]))"""
    trace = trace_for(_report(kernel, delegated), "Stack.__call__")
    assert set(_side_effects(trace)) == {"self.seen"}


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_keras_custom_train_step_appending_to_self(kernel: KernelSession) -> None:
    code = """class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.batch_losses = []

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self(x, training=True) - y) ** 2)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.batch_losses.append(loss)
        return {"loss": loss}

regressor = Regressor()
regressor.compile(optimizer="sgd")
history = regressor.fit(features, targets, batch_size=16, epochs=2, verbose=0)"""
    report = _report(kernel, code)
    [trace] = report["traces"]
    assert "train step" in trace["function"]
    [reason] = trace["reasons"]  # the first trace itself is not worth a line
    assert (reason["kind"], reason["argument"]) == ("side_effect", "self.batch_losses")
    assert reason["text"].startswith("`self.batch_losses.append(...)` in `Regressor.train_step`")
    assert '`return {"loss": loss}`' in reason["text"]
    # 8 batches, but the list only grew while tracing.
    assert value_of(kernel, "len(regressor.batch_losses) < 8") is True

    fixed = code.replace("        self.batch_losses.append(loss)\n", "")
    report = _report(kernel, fixed)
    assert report["traces"] == []
    assert value_of(kernel, "len(history.history['loss'])") == 2


# ----------------------------------------------------------- code inspection
def _facts(function: types.FunctionType) -> fx.CodeFacts:
    return fx.code_facts(function.__code__)


counter_global = 0
outer_list: list[int] = []
outer_dict: dict[str, int] = {}


def test_scan_finds_effects_not_reads_of_the_same_names() -> None:
    def body(x: int) -> int:
        global counter_global
        counter_global += 2
        outer_list.extend([x])
        outer_dict["k"] = x
        [print(v) for v in (1, 2)]  # a comprehension runs while tracing too
        return x

    facts = _facts(body)
    assert {(e.action, e.name) for e in facts.effects} == {
        (fx.COUNTER, "counter_global"),
        (fx.MUTATION, "outer_list"),
        (fx.SUBSCRIPT, "outer_dict"),
        (fx.PRINT, "print"),
    }
    counter = next(e for e in facts.effects if e.action == fx.COUNTER)
    assert (counter.detail, counter.operand) == ("+=", "2")
    assert ("global", "counter_global") not in facts.reads
    assert facts.parameters == ("x",)
    assert fx.code_facts(body.__code__) is facts  # cached per code object


def test_a_flag_tested_and_set_once_is_not_a_side_effect() -> None:
    # ``if not self.built: <create variables>; self.built = True`` creates the variables
    # once, on the first trace, as tf.function asks: a flag tested by a condition and set to
    # a constant means "do this once", which a trace keeps. Set without a test, it is not.
    namespace: dict[str, object] = {}
    exec(
        "import types\n"
        "tf = types.SimpleNamespace(Variable=lambda v: v)\n"
        "class Guarded:\n"
        "    def __call__(self, x):\n"
        "        if not self.built:\n"
        "            self.w = tf.Variable(x)\n"
        "            self.built = True\n"
        "        return x\n"
        "class Delegated:\n"
        "    def __call__(self, x):\n"
        "        if self.ready == False:\n"
        "            self.make_weights(x)\n"
        "            self.ready = True\n"
        "        return x\n"
        "class LongGuarded:\n"
        "    def __call__(self, x):\n"
        "        if not self.built:\n"
        + "".join(f"            self.w{i} = tf.Variable(x)\n" for i in range(40))
        + "            self.built = True\n"
        "        return x\n"
        "class Unguarded:\n"
        "    def __call__(self, x):\n"
        "        self.seen = True\n"
        "        return x\n",
        namespace,
    )
    stores = {
        name: {e.name for e in _facts(namespace[name].__call__).effects if e.action == fx.STORE}  # type: ignore[attr-defined]
        for name in ("Guarded", "LongGuarded", "Delegated", "Unguarded")
    }
    # The created weight is a store too: reported only if it holds a plain value.
    # (A long body makes the jump over it take an EXTENDED_ARG prefix.)
    assert stores == {
        "Guarded": {"w"},
        "LongGuarded": {f"w{i}" for i in range(40)},
        "Delegated": set(),
        "Unguarded": {"seen"},
    }


def test_scan_ignores_nested_functions_and_shadowed_print() -> None:
    def body(x: int) -> int:
        def later() -> None:
            print("at call time")  # what tf.py_function would run
            outer_list.append(1)

        return x

    assert _facts(body).effects == ()

    namespace = {"print": lambda *a: None, "tf": types.SimpleNamespace(print=print)}
    exec("def shadowed(x):\n    print(x)\n    tf.print(x)\n    return x", namespace)
    shadowed = namespace["shadowed"]
    facts = _facts(shadowed)
    assert [e.action for e in facts.effects] == [fx.PRINT]  # tf.print is not print
    assert fx.live_effects(facts, fx.Scope(shadowed, None)) == []  # print is the user's


def test_live_effects_check_types_without_running_user_code() -> None:
    class Hostile:
        def __getattribute__(self, name: str) -> object:
            raise RuntimeError(name)

    namespace: dict[str, object] = {"items": Hostile(), "count": 0}
    exec("def body(x):\n    global count\n    count += 1\n    items.append(x)", namespace)
    body = namespace["body"]
    assert isinstance(body, types.FunctionType)
    live = fx.live_effects(_facts(body), fx.Scope(body, None))
    # ``items`` is not a list: its append is not a Python list growing at trace time.
    assert [e.name for e in live] == ["count"]


def test_signature_texts_never_show_memory_addresses() -> None:
    from jupyterlab_tfcoach.monitor.traces import signatures

    class Odd:
        def __str__(self) -> str:
            return "Odd[<weakref at 0x7f2a1c3b9cb0; to 'Thing' at 0x7f2a1c3b9d00>]"

    leaves: signatures.Signature = {}
    signatures._flatten("arg", Odd(), leaves, 0)
    assert leaves["arg"].value == "Odd[<weakref; to 'Thing'>]"


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_numpy_random_inside_a_tf_function_is_frozen(kernel: KernelSession) -> None:
    code = """@tf.function
def add_noise(x):
    return x + np.random.normal(0.0, 1.0)

noisy = [float(add_noise(tf.constant(0.0))) for _ in range(3)]"""
    trace = trace_for(_report(kernel, code), "add_noise")
    found = _side_effects(trace)
    assert set(found) == {"np.random.normal"}
    text = found["np.random.normal"]["text"]
    assert "the graph keeps them as a constant" in text
    # The user's own call, drawn in the graph: pasted as printed, it runs.
    [draw] = [s for s in _snippets(text) if s.startswith("tf.random.")]
    assert draw == "tf.random.normal([], 0.0, 1.0)"
    # What the report says is true: three calls, one number.
    assert value_of(kernel, "len(set(noisy))") == 1
    fixed = code.replace("np.random.normal(0.0, 1.0)", draw)
    _no_side_effects(_report(kernel, fixed))
    assert value_of(kernel, "len(set(noisy))") == 3
    # A user object called np is not NumPy: nothing said.
    clean = """class Fake:
    class random:
        @staticmethod
        def normal(a, b):
            return 0.5

fake_np = Fake()

@tf.function
def shift(x):
    return x + fake_np.random.normal(0.0, 1.0)

shift(tf.constant(0.0))"""
    _no_side_effects(_report(kernel, clean))


@pytest.mark.parametrize(
    ("numpy_call", "tf_call"),
    [
        ("np.random.rand()", "tf.random.uniform([])"),
        ("np.random.rand(2, 3)", "tf.random.uniform([2, 3])"),
        ("np.random.randn(4)", "tf.random.normal([4])"),
        ("np.random.normal(0.0, 0.1)", "tf.random.normal([], 0.0, 0.1)"),
        ("np.random.normal(scale=2.0, size=3)", "tf.random.normal([3], 0.0, 2.0)"),
        ("np.random.uniform(-1, 1, size=(2, 2))", "tf.random.uniform((2, 2), -1, 1)"),
        ("random.gauss(0.0, 0.5)", "tf.random.normal([], 0.0, 0.5)"),
    ],
)
def test_numpy_draws_become_tensorflow_draws(numpy_call: str, tf_call: str) -> None:
    from jupyterlab_tfcoach.monitor.traces.body_advice import tf_random_equivalent

    call = ast.parse(numpy_call, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
    assert tf_random_equivalent(call.func.attr, call, numpy_call) == tf_call


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_the_tensorflow_draws_run(kernel: KernelSession) -> None:
    calls = [
        "tf.random.uniform([])",
        "tf.random.uniform([2, 3])",
        "tf.random.normal([4])",
        "tf.random.normal([], 0.0, 0.1)",
        "tf.random.normal([3], 0.0, 2.0)",
        "tf.random.uniform((2, 2), -1, 1)",
    ]
    shapes = value_of(kernel, "[" + ", ".join(f"{c}.shape.as_list()" for c in calls) + "]")
    assert shapes == [[], [2, 3], [4], [], [3], [2, 2]]
