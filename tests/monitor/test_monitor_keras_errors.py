"""Keras errors about where weights live, as learners hit them, each next to the corrected
cell: a read-only layer weight, variables created on every call, state added after build."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, checked_report, run, run_quiet, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


def _error(kernel: KernelSession, code: str) -> dict:
    execution = run(kernel, code, ok=False)
    assert execution.reply["status"] == "error"
    report = checked_report(execution)
    assert report["error"] is not None, execution.reply["evalue"]
    return report


def test_read_only_dense_kernel(kernel: KernelSession) -> None:
    run_quiet(kernel, "dense = keras.layers.Dense(2)\ndense.build((None, 3))")
    report = _error(kernel, "dense.kernel = dense.kernel * 0.5")
    error = report["error"]
    assert error["course"]["section"] == "rebinding-variables"
    [fix] = re.findall(r"instead: `([^`]+)`", error["explanation"])
    assert fix == "dense.kernel.assign(dense.kernel * 0.5)"
    before = value_of(kernel, "float(tf.reduce_sum(dense.kernel))")
    report = run_quiet(kernel, fix)
    assert report["error"] is None and report["variables"] == []
    after = value_of(kernel, "float(tf.reduce_sum(dense.kernel))")
    assert after == pytest.approx(before * 0.5, rel=1e-5)


MODULE = """class Net(tf.Module):
    def __init__(self):
        self.w = None

    def __call__(self, x):
        self.w = tf.Variable(tf.ones((3, 1)))
        return x @ self.w

net = Net()
opt = keras.optimizers.SGD(0.1)
xs = tf.ones((2, 3))
for _ in range(2):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(net(xs))
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))
"""


def test_module_creating_its_variable_on_every_call(kernel: KernelSession) -> None:
    report = _error(kernel, MODULE)
    assert "create them once" in report["error"]["explanation"]
    assert "`if self.w is None:`" in report["error"]["explanation"]
    # Training stopped part-way: no "never applied" advice about the new variable.
    assert [e for e in report["variables"] if e["change"] == "stopped_learning"] == []
    fixed = MODULE.replace(
        "        self.w = tf.Variable(tf.ones((3, 1)))\n",
        "        if self.w is None:\n            self.w = tf.Variable(tf.ones((3, 1)))\n",
    )
    report = run_quiet(kernel, fixed)
    assert report["error"] is None and report["variables"] == []
    assert value_of(kernel, "float(tf.reduce_sum(net.w)) < 3.0")


def test_layer_added_to_a_built_model(kernel: KernelSession) -> None:
    code = """class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.layers.Dense(4)

    def call(self, x):
        return self.body(x)

reg = Regressor()
reg(tf.ones((2, 3)))
"""
    run_quiet(kernel, code)
    report = _error(kernel, "reg.head = keras.layers.Dense(1)")
    explanation = report["error"]["explanation"]
    # The line facts every entry starts with, then the rule in the learner's statement.
    assert explanation.startswith(
        "Line 1 of this cell: `keras.layers.Dense(1)` raised ValueError. "
        "`reg.head = ...` adds a new layer"
    )
    assert "`__init__()`" in explanation
    fixed = code.replace(
        "        self.body = keras.layers.Dense(4)\n",
        "        self.body = keras.layers.Dense(4)\n        self.head = keras.layers.Dense(1)\n",
    ).replace("return self.body(x)", "return self.head(self.body(x))")
    report = run_quiet(kernel, fixed)
    assert report["error"] is None
