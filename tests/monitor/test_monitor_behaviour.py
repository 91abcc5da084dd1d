"""How the monitor behaves in a kernel: load order, loading twice, hostile objects,
silence, memory, ``%tfcoach`` and ``last_report()``.

One kernel for the whole module, started *without* TensorFlow: the tests run in
file order and the TensorFlow import happens in one of them, after loading.
"""

from __future__ import annotations

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    checked_report,
    run,
    run_quiet,
    trace_for,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

HOSTILE = '''
class Hostile:
    """Every protocol a namespace scan might touch raises."""

    def __getattribute__(self, name):
        raise RuntimeError("hostile __getattribute__")

    def __getattr__(self, name):
        raise RuntimeError("hostile __getattr__")

    def __eq__(self, other):
        raise RuntimeError("hostile __eq__")

    def __hash__(self):
        raise RuntimeError("hostile __hash__")

    def __repr__(self):
        raise RuntimeError("hostile __repr__")

    def __bool__(self):
        raise RuntimeError("hostile __bool__")

    def __len__(self):
        raise RuntimeError("hostile __len__")

    @property
    def __class__(self):
        raise RuntimeError("hostile __class__")

hostile = Hostile()
hostile_list = [hostile]
'''


# The tests load the monitor themselves.
KERNEL = KernelSetup(load_monitor=False)


def test_loading_without_tensorflow_imports_nothing(kernel: KernelSession) -> None:
    report = run_quiet(kernel, "%load_ext jupyterlab_tfcoach")
    assert report["traces"] == report["variables"] == report["notes"] == []
    report = run_quiet(kernel, "values = [1, 2, 3]")
    assert report["traces"] == [] and report["error"] is None
    assert value_of(kernel, "'tensorflow' in __import__('sys').modules") is False


def test_loading_twice_is_harmless(kernel: KernelSession) -> None:
    # IPython itself says "already loaded"; our own loader is idempotent too.
    run(kernel, "%load_ext jupyterlab_tfcoach")
    run_quiet(
        kernel,
        "import jupyterlab_tfcoach\njupyterlab_tfcoach.load_ipython_extension(get_ipython())",
    )
    count = value_of(
        kernel,
        "sum(1 for cb in get_ipython().events.callbacks['post_run_cell'] "
        "if getattr(cb, '__qualname__', '') == 'Monitor.post_run_cell')",
    )
    assert count == 1
    # checked_report (via run_quiet) asserts exactly one report per cell.
    run_quiet(kernel, "values.append(4)")


def test_hostile_objects_do_not_matter(kernel: KernelSession) -> None:
    report = run_quiet(kernel, HOSTILE)
    assert report["error"] is None and report["notes"] == []
    assert run_quiet(kernel, "more = hostile_list * 2")["error"] is None
    # AutoGraph itself trips over such globals when it converts a tf.function later.
    run_quiet(kernel, "del Hostile, hostile, hostile_list, more")


def test_tensorflow_imported_after_loading(kernel: KernelSession) -> None:
    code = """import numpy as np
import tensorflow as tf
import keras

@tf.function
def late(x):
    return x * 3.0

result = late(tf.ones([2]))
"""
    report = run_quiet(kernel, code)
    trace = trace_for(report, "late")
    assert (trace["new_traces"], trace["total_traces"]) == (1, 1)
    assert trace["reasons"][0]["kind"] == "first_trace"

    trace = trace_for(run_quiet(kernel, "result = late(tf.ones([3]))"), "late")
    [reason] = trace["reasons"]
    assert (reason["kind"], reason["before"], reason["after"]) == ("shape", "(2,)", "(3,)")
    assert "call at line 1" in reason["text"]


def test_hostile_objects_with_tensorflow_loaded(kernel: KernelSession) -> None:
    code = """class BrokenModule(tf.Module):
    def __init__(self):
        super().__init__()
        self.v = tf.Variable(1.0)

    @property
    def trainable_variables(self):
        raise RuntimeError("hostile trainable_variables")

broken = BrokenModule()
w = tf.Variable(1.0)
"""
    run_quiet(kernel, code)
    report = run_quiet(kernel, HOSTILE + "\nw = w - 1.0\nbroken.v = broken.v * 2.0")
    # The hostile objects are skipped and the broken module's trainable_variables is never
    # read; the rebinding of its attribute is seen as it happens, the rest still reported.
    assert [(c["name"], c["change"]) for c in report["variables"]] == [
        ("broken.v", "attribute_rebound"),
        ("w", "rebound_to_tensor"),
    ]
    run_quiet(kernel, "del Hostile, hostile, hostile_list, broken, BrokenModule")


def test_deleted_model_is_garbage_collected(kernel: KernelSession) -> None:
    code = """import gc, weakref

def train_and_forget():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((8, 3)), np.ones((8, 1)), epochs=1, verbose=0)

    @tf.function
    def uses(x):
        return model(x)

    uses(tf.ones([2, 3]))
    return weakref.ref(model), weakref.ref(model.layers[0].kernel), weakref.ref(uses)

refs = train_and_forget()
"""
    report = run_quiet(kernel, code)
    assert trace_for(report, "train_and_forget.<locals>.uses")["new_traces"] == 1
    # One more cell so the monitor snapshots a namespace with those objects gone.
    run_quiet(kernel, "gc.collect()")
    assert value_of(kernel, "[gc.collect() >= 0] + [r() is None for r in refs]") == [
        True,
        True,
        True,
        True,
    ]


def test_model_held_by_name_then_deleted_is_collected(kernel: KernelSession) -> None:
    code = """held = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="dense_held")])
held.compile(optimizer="sgd", loss="mse")
history = held.fit(np.ones((8, 3)), np.ones((8, 1)), epochs=1, verbose=0)
held_ref = weakref.ref(held)
"""
    run_quiet(kernel, code)
    run_quiet(kernel, 'held.get_layer("dense_held").trainable = False')
    run_quiet(kernel, "del held, history")
    assert value_of(kernel, "[gc.collect() >= 0, held_ref() is None]") == [True, True]


def test_tfcoach_magic_prints_the_last_report(kernel: KernelSession) -> None:
    run_quiet(kernel, "result = late(tf.ones([5]))")
    execution = run(kernel, "%tfcoach")
    text = execution.stdout
    assert "tfcoach report for cell" in text
    assert "late (defined at Cell In[" in text
    assert "shape: Retraced" in text
    assert "TensorFlow 2." in text and "watching" in text
    assert checked_report(execution)["traces"] == []


def test_last_report_matches_the_published_one(kernel: KernelSession) -> None:
    run_quiet(kernel, "w2 = tf.Variable(2.0)")
    published = run_quiet(kernel, "w2 = w2 * 2.0")
    assert [c["name"] for c in published["variables"]] == ["w2"]
    kept = value_of(kernel, "__import__('jupyterlab_tfcoach.monitor').monitor.last_report()")
    assert kept == published


def test_reload_extension_keeps_reporting(kernel: KernelSession) -> None:
    run(kernel, "%reload_ext jupyterlab_tfcoach")
    trace = trace_for(run_quiet(kernel, "result = late(tf.ones([6]))"), "late")
    assert trace["reasons"][0]["kind"] == "shape"
    count = value_of(
        kernel,
        "sum(1 for cb in get_ipython().events.callbacks['post_run_cell'] "
        "if getattr(cb, '__qualname__', '') == 'Monitor.post_run_cell')",
    )
    assert count == 1
