"""The monitor never runs a user's properties on the objects it snapshots.

A learner's ``tf.Module`` or Keras layer may override ``trainable_variables``,
``trainable``, ``variables`` or ``weights``, or add a property that raises. The monitor
reads what TensorFlow and Keras store instead, after every cell, so none of them runs
on its behalf, and its detection (a variable rebound to a tensor, a count that changed,
a frozen layer under an old train step, a gradient never applied) still works on them.

Each property counts the calls made while a frame of the monitor is on the stack, other
than a hook passing the user's own call through (TensorFlow and Keras call some of them
while the user trains: those are not the monitor's).
"""

from __future__ import annotations

import pytest

from tests.harness import (
    IMPORTS,
    KernelSession,
    KernelSetup,
    changes_of,
    note_texts,
    run,
    run_quiet,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    after_load=f"""{IMPORTS}
import collections
import os
import sys

x = np.random.rand(32, 3).astype("float32")
y = np.random.rand(32, 1).astype("float32")
monitor_calls = collections.Counter()
_monitor_dir = os.path.join("jupyterlab_tfcoach", "monitor") + os.sep
# Hooks that pass the user's own call on to TensorFlow or Keras (what runs under them is the
# user's call: Keras's fit reads the model's train_function itself).
_hooks = {{
    "setattr_hook", "filter_hook", "gradient_hook", "init_hook", "call_hook",
    "fit_hook", "inference_hook", "next_hook", "compile_hook",
}}


def counted(name):
    # The monitor's nearest frame on the stack: a call made by the monitor, unless that
    # frame is a hook passing the user's own call on to TensorFlow or Keras.
    frame = sys._getframe(2)
    while frame is not None:
        if _monitor_dir in frame.f_code.co_filename:
            if frame.f_code.co_name not in _hooks:
                monitor_calls[name] += 1
            return
        frame = frame.f_back
"""
)

MODULE = """class Affine(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(2.0)
        self.b = tf.Variable(0.5)
        self.scale = tf.Variable(1.0, trainable=False)

    def __call__(self, inputs):
        return self.w * inputs + self.b

    @property
    def trainable_variables(self):
        counted("Affine.trainable_variables")
        return super().trainable_variables

    @property
    def variables(self):
        counted("Affine.variables")
        raise RuntimeError("Affine.variables is not ready")

    @property
    def trainable(self):
        counted("Affine.trainable")
        print("Affine.trainable was read")
        return True

    @property
    def summary(self):
        counted("Affine.summary")
        raise RuntimeError("Affine.summary is not ready")


affine = Affine()
"""

MODULE_STEP = """sgd = keras.optimizers.SGD(0.01)
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((affine(x[:, 0]) - y[:, 0]) ** 2)
    grads = tape.gradient(loss, [affine.w, affine.b])
    sgd.apply_gradients(zip(grads, [affine.w, affine.b]))
"""


def test_module_properties_are_never_run(kernel: KernelSession) -> None:
    assert run_quiet(kernel, MODULE)["variables"] == []
    assert run_quiet(kernel, MODULE_STEP)["variables"] == []

    # Rebinding a variable to a tensor on such a module is still reported.
    report = run_quiet(kernel, "affine.w = affine.w - 0.1")
    [rebound] = changes_of(report, "attribute_rebound")
    assert (rebound["name"], rebound["before"], rebound["after"]) == (
        "affine.w",
        "tf.Variable",
        "tf.Tensor",
    )

    # New variables: the count comes from what the module stores (1 -> 3: `b` and these).
    report = run_quiet(kernel, "affine.extra = [tf.Variable(1.0), tf.Variable(2.0)]")
    [count] = changes_of(report, "trainable_count")
    assert (count["name"], count["before"], count["after"]) == ("affine", 1, 3)

    # Gradients applied to `b` only: the module's other trainable variables are named.
    step = MODULE_STEP.replace("[affine.w, affine.b]", "[affine.b]")
    entries = changes_of(run_quiet(kernel, step), "stopped_learning")
    assert [e["name"] for e in entries] == ["affine.extra[0]", "affine.extra[1]"]
    assert all(e["after"] == "not applied" for e in entries)

    assert value_of(kernel, "dict(monitor_calls)") == {}


LAYER = """class Scaled(keras.layers.Layer):
    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 1), name="kernel")
        self.bias = self.add_weight(shape=(1,), initializer="zeros", name="bias")

    def call(self, inputs):
        return inputs @ self.kernel + self.bias

    @property
    def trainable_variables(self):
        counted("Scaled.trainable_variables")
        return super().trainable_variables

    @property
    def trainable(self):
        counted("Scaled.trainable")
        return keras.layers.Layer.trainable.fget(self)

    @trainable.setter
    def trainable(self, value):
        keras.layers.Layer.trainable.fset(self, value)

    @property
    def variables(self):
        counted("Scaled.variables")
        raise RuntimeError("Scaled.variables is not ready")

    @property
    def weights(self):
        counted("Scaled.weights")
        return super().weights

    @property
    def penalty(self):
        counted("Scaled.penalty")
        raise RuntimeError("Scaled.penalty is not ready")


class Counted(keras.Sequential):
    @property
    def trainable_variables(self):
        counted("Counted.trainable_variables")
        return super().trainable_variables

    @property
    def train_function(self):
        counted("Counted.train_function")
        return self.__dict__.get("train_function")

    @train_function.setter
    def train_function(self, value):
        self.__dict__["train_function"] = value


model = Counted([keras.Input((3,)), Scaled(name="scaled")])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, epochs=1, verbose=0)
"""

LAYER_STEP = """scaled = model.get_layer("scaled")
adam = keras.optimizers.Adam(0.01)
for _ in range(2):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, [scaled.kernel])
    adam.apply_gradients(zip(grads, [scaled.kernel]))
"""


def test_keras_properties_are_never_run(kernel: KernelSession) -> None:
    assert run_quiet(kernel, LAYER)["variables"] == []

    # Only the kernel was given to the optimizer: the bias is named.
    [entry] = changes_of(run_quiet(kernel, LAYER_STEP), "stopped_learning")
    assert entry["name"] == "model.get_layer('scaled').bias"
    assert entry["after"] == "not applied"

    # Frozen after fit() built its train step: still said, with the fix.
    report = run_quiet(kernel, "scaled.trainable = False")
    [flag] = changes_of(report, "trainable_flag")
    assert (flag["name"], flag["before"], flag["after"]) == (
        "model.get_layer('scaled').trainable",
        True,
        False,
    )
    assert "`model.compile(...)` again" in flag["text"]
    run_quiet(kernel, "scaled.trainable = True\nmodel.compile(optimizer='sgd', loss='mse')")

    # A weight rebound to a tensor on such a layer is still reported.
    report = run_quiet(kernel, "scaled.kernel = scaled.kernel - 0.1")
    [rebound] = changes_of(report, "attribute_rebound")
    assert rebound["name"].endswith(".kernel") and rebound["before"] == "keras.Variable"

    assert value_of(kernel, "dict(monitor_calls)") == {}


def test_trainable_lists_match_tensorflow_and_keras(kernel: KernelSession) -> None:
    """What the monitor rebuilds from stored state is what the libraries' own
    properties return, on objects without overrides (a guard for other versions)."""
    code = """class Tower(tf.Module):
    def __init__(self):
        super().__init__()
        self.layers_ = [tf.Variable(1.0), {"b": tf.Variable(2.0), "a": tf.Variable(3.0)}]
        self.pair = (tf.Variable(4.0), tf.Variable(5.0, trainable=False))
        self.head = tf.Module()
        self.head.w = tf.Variable(6.0)
        self.shared = self.layers_[0]
        self.keras_weight = keras.Variable(7.0)


inner = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dropout(0.5)])
frozen = keras.layers.Dense(2)
nested = keras.Sequential(
    [keras.Input((4,)), inner, keras.layers.BatchNormalization(), frozen, keras.layers.Dense(1)]
)
frozen.trainable = False
inputs = keras.Input((4,))
functional = keras.Model(inputs, keras.layers.Dense(2)(keras.layers.Dense(3)(inputs)))
tower = Tower()

from jupyterlab_tfcoach.monitor.stored_state import keras_layers
from jupyterlab_tfcoach.monitor.tftypes import TfTypes
from jupyterlab_tfcoach.monitor.variables.kinds import KindClassifier, trainable_variables_of

kind_of = KindClassifier(TfTypes.resolve()).kind_of
"""
    run(kernel, code)
    same = value_of(
        kernel,
        "[[id(v) for v in trainable_variables_of(o, kind_of(o), kind_of)]"
        " == [id(v) for v in o.trainable_variables]"
        " for o in (nested, inner, frozen, functional, tower, tower.head)]",
    )
    assert same == [True] * 6
    assert value_of(kernel, "len(trainable_variables_of(tower, 'tf.Module', kind_of))") == 5
    assert value_of(
        kernel,
        "[id(l) for l in keras_layers(nested, 100)] == [id(l) for l in "
        "nested._flatten_layers(include_self=True, recursive=True)]",
    )


def test_a_keras_variable_source_is_read_through_keras(kernel: KernelSession) -> None:
    """A Keras variable's ``trainable`` and ``dtype`` (a string, not a tf.DType) are read
    through Keras's own properties: the note names the real cause."""
    code = """frozen_weight = keras.Variable(1.0, trainable=False)
with tf.GradientTape() as tape:
    out = frozen_weight * 2.0
grad = tape.gradient(out, frozen_weight)
"""
    notes = note_texts(run_quiet(kernel, code))
    assert any("None for `frozen_weight`" in n and "trainable=False" in n for n in notes), notes
