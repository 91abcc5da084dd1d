"""Every TensorFlow/Keras error raised through a learner's cell gets an entry that names the
failing line, the call and the operands as they are, then the rule that was broken and a
fix in the learner's names (issue #25). Each fix is followed in the kernel: the corrected
cell runs without an error entry. Look-alikes stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run
from tests.harness import error_of_failing_cell as failing

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(0)
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def fix_of(error: dict[str, Any]) -> str:
    fix = error["explanation"].split("Fix: ", 1)
    assert len(fix) == 2, error["explanation"]
    return spans(fix[1])[-1]


def runs_silently(kernel: KernelSession, code: str) -> None:
    report = checked_report(run(kernel, code))
    assert report["error"] is None


def test_matmul_with_a_transposed_kernel(kernel: KernelSession) -> None:
    cell = """inputs = tf.ones((8, 3))
weights = tf.ones((8, 3))
out = tf.matmul(inputs, weights)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert text.startswith("Line 3 of this cell: `tf.matmul(inputs, weights)` raised")
    assert "`inputs` is a (8, 3) float32 tensor" in text
    assert "`weights` is a (8, 3) float32 tensor" in text
    assert "3 vs 8" in text
    fix = fix_of(error)
    assert fix == "tf.matmul(inputs, weights, transpose_b=True)"
    runs_silently(kernel, cell.replace("tf.matmul(inputs, weights)", fix))


def test_custom_layer_kernel_created_the_wrong_way_round(kernel: KernelSession) -> None:
    cell = """class MyDense(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(self.units, input_shape[-1]))

    def call(self, inputs):
        return tf.matmul(inputs, self.kernel)

probe = MyDense(8)
print(probe(np.ones((2, 4), "float32")).shape)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "(in `MyDense.call`)" in text
    assert "`inputs` is a (2, 4) float32 tensor" in text
    assert "`self.kernel` is a (8, 4) float32 Keras variable" in text
    assert "It was called from line 13 of this cell" in text
    fix = spans(text.split("Fix: ", 1)[1])
    assert "shape=(input_shape[-1], self.units)" in fix
    runs_silently(
        kernel,
        cell.replace("shape=(self.units, input_shape[-1])", "shape=(input_shape[-1], self.units)"),
    )


def test_one_example_without_batch_axis_in_a_module(kernel: KernelSession) -> None:
    run(
        kernel,
        """class Linear(tf.Module):
    def __init__(self):
        self.w = tf.Variable(tf.ones((3, 1)))

    def __call__(self, inputs):
        return inputs @ self.w

lin = Linear()
features = tf.ones((10, 3))
""",
    )
    cell = "one = features[0]\nprint(lin(one))"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`inputs` is a (3,) float32 tensor" in text
    assert "`lin(one)`" in text
    fix = fix_of(error)
    assert fix == "lin(tf.expand_dims(one, 0))"
    runs_silently(kernel, cell.replace("lin(one)", fix))
    assert error["course"]["section"] == "batch-dimension"


def test_incompatible_shapes_in_subtraction(kernel: KernelSession) -> None:
    cell = "preds = tf.ones((4, 3))\nlabels = tf.ones((4,))\nerr = preds - labels"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`preds - labels`" in text
    assert "`preds` is a (4, 3) float32 tensor" in text and "`labels` is a (4,) float32" in text
    assert "(3 vs 4)" in text
    assert error["course"]["section"] == "broadcasting"
    fix = fix_of(error)
    assert fix == "preds - tf.expand_dims(labels, -1)"
    runs_silently(kernel, cell.replace("preds - labels", fix))


def test_integer_labels_with_categorical_crossentropy(kernel: KernelSession) -> None:
    cell = """x = np.random.rand(32, 4).astype("float32")
y = np.random.randint(0, 3, 32)
clf = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3, activation="softmax")])
clf.compile(optimizer="adam", loss="categorical_crossentropy")
clf.fit(x, y, epochs=1, verbose=0)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`y` is a (32,) int64 NumPy array" in text
    assert "one-hot" in text
    assert '`loss="categorical_crossentropy"` (the model\'s compiled loss)' in text
    fix = fix_of(error)
    assert fix == 'clf.compile(optimizer="adam", loss="sparse_categorical_crossentropy")'
    runs_silently(
        kernel, cell.replace('clf.compile(optimizer="adam", loss="categorical_crossentropy")', fix)
    )


def test_labels_starting_at_one(kernel: KernelSession) -> None:
    cell = """x = np.random.rand(32, 4).astype("float32")
grade = np.random.randint(0, 3, 32) + 1
grade[0] = 3
clf = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3, activation="softmax")])
clf.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
clf.fit(x, grade, epochs=1, verbose=0)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`grade` holds 3" in text and "0 to 2" in text
    fix = fix_of(error)
    assert fix == "clf.fit(x, grade - 1, epochs=1, verbose=0)"
    runs_silently(kernel, cell.replace("clf.fit(x, grade, epochs=1, verbose=0)", fix))


def test_item_assignment_on_a_tensor(kernel: KernelSession) -> None:
    cell = "g = tf.ones((3, 1))\ng[0, 0] = 0.0\nprint(g)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert text.startswith("Line 2 of this cell:")
    assert "`g` is a (3, 1) float32 tensor" in text
    assert error["course"]["section"] == "tensors-immutable"
    fix = fix_of(error)
    assert fix == "g = tf.tensor_scatter_nd_update(g, [[0, 0]], [0.0])"
    runs_silently(kernel, cell.replace("g[0, 0] = 0.0", fix))
    # A whole row of a 2-D tensor: the same rewrite would need the row's shape as its
    # update (``[0.0]`` raises), so the fix is a NumPy copy, indexed as written.
    row_cell = "board = tf.ones((2, 4))\nboard[0] = 0.0"
    row = failing(kernel, row_cell)
    assert "Tensors are immutable" in row["explanation"]
    copy = spans(row["explanation"].split("Fix: ", 1)[1])[0]
    assert copy == "board = np.array(board)"
    runs_silently(kernel, row_cell.replace("\nboard[0]", f"\n{copy}\nboard[0]"))


def test_gradients_of_a_module_without_variables(kernel: KernelSession) -> None:
    cell = """class Reg(tf.Module):
    def __init__(self):
        self.coef = tf.random.normal((3, 1))
        self.bias = tf.zeros((1,))

    def __call__(self, inputs):
        return inputs @ self.coef + self.bias

reg = Reg()
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(reg(tf.ones((4, 3))))
d_coef, d_bias = tape.gradient(loss, reg.trainable_variables)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`reg.trainable_variables` is an empty tuple" in text
    assert "`self.coef`" in text and "`self.bias`" in text
    fixes = spans(text.split("Fix: ", 1)[1])
    fixed = cell
    for old in ("self.coef = tf.random.normal((3, 1))", "self.bias = tf.zeros((1,))"):
        new = next(fix for fix in fixes if fix.startswith(old.split(" = ")[0]))
        fixed = fixed.replace(old, new)
    runs_silently(kernel, fixed)


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    # Correct code: no error, no entry.
    runs_silently(kernel, "a = tf.ones((8, 3))\nb = tf.ones((3, 1))\nc = tf.matmul(a, b)")
    # Errors in the learner's own code that never reached TensorFlow are not claimed.
    for cell in (
        "values = [1, 2]\nfirst, second, third = values",
        "price = None\ntotal = 2.5 * price",
        "t = (1, 2)\nt[0] = 3",
        "first, second = []",
    ):
        report = checked_report(run(kernel, cell, ok=False))
        assert report["error"] is None, cell
