"""Error advice in the learner's own names, checked by following it.

Each test runs a cell the way a learner writes it, reads the fix from the report (the
code spans in backticks), applies it to the cell as the learner would, runs the
corrected cell and asserts it now succeeds with no error entry.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    checked_report,
    run,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(0)
"""


KERNEL = KernelSetup(before_load=SETUP, after_load="")


def failing(kernel: KernelSession, code: str) -> dict[str, Any]:
    execution = run(kernel, code, ok=False)
    assert execution.reply["status"] == "error", code
    error = checked_report(execution)["error"]
    assert error is not None, execution.reply["evalue"]
    return error


def spans(explanation: str) -> list[str]:
    return re.findall(r"`([^`]+)`", explanation)


def follow(kernel: KernelSession, code: str, old: str, new: str) -> None:
    """Apply the advice (``old`` -> ``new``) to the cell; the corrected twin runs silently."""
    assert code.count(old) == 1, (old, code)
    corrected = code.replace(old, new)
    report = checked_report(run(kernel, corrected))
    assert report["error"] is None


def fix_of(error: dict[str, Any]) -> tuple[str, str]:
    """The failing expression (the explainer's ``In `...`,``, after the line facts every
    entry starts with) and its fix (last code span)."""
    text = error["explanation"]
    found = spans(text)
    named = re.search(r"\bIn `([^`]+)`,", text)
    assert named is not None and len(found) >= 2, text
    return named.group(1), found[-1]


# ---------------------------------------------------------------- batch and channel axes
DENSE_MODEL = """x = np.random.rand(64, 4).astype("float32")
y = np.random.randint(0, 2, 64)
model = keras.Sequential([
    keras.Input(shape=(4,)),
    keras.layers.Dense(8, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="binary_crossentropy")
"""


def test_missing_batch_axis_named_in_the_learners_call(kernel: KernelSession) -> None:
    run(kernel, DENSE_MODEL)
    for cell, fixed in (
        ("pred = model.predict(x[0], verbose=0)", "model.predict(x[:1], verbose=0)"),
        ("pred = model(x[3])", "model(x[3:4])"),
    ):
        error = failing(kernel, cell)
        assert "\x1b" not in error["message"]
        assert error["course"]["section"] == "batch-dimension"
        text = error["explanation"]
        assert "(None, 4)" in text and "(4,)" in text and "batch axis is missing" in text
        old, new = fix_of(error)
        assert new == fixed, text
        follow(kernel, cell, old, new)

    # One new example that is not a slice of an array: index with None.
    cell = "x_new = np.array([0.1, 0.2, 0.3, 0.4], dtype='float32')\npred = model.predict(x_new)"
    error = failing(kernel, cell)
    old, new = fix_of(error)
    assert new == "model.predict(x_new[None, ...])"
    follow(kernel, cell, old, new)

    # Not an array nor a tensor: no indexing advice, np.expand_dims instead.
    cell = "pred = model(tf.constant([0.1, 0.2, 0.3, 0.4]))"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "batch-dimension"
    old, new = fix_of(error)
    assert new == "model(np.expand_dims(tf.constant([0.1, 0.2, 0.3, 0.4]), 0))"
    follow(kernel, cell, old, new)


def test_conv2d_without_channel_axis(kernel: KernelSession) -> None:
    cell = """images = np.random.rand(32, 28, 28).astype("float32")
labels = np.random.randint(0, 10, 32)
cnn = keras.Sequential([
    keras.layers.Conv2D(8, 3, activation="relu"),
    keras.layers.Flatten(),
    keras.layers.Dense(10, activation="softmax"),
])
cnn.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
cnn.fit(images, labels, epochs=1, verbose=0)
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "batch-dimension"
    text = error["explanation"]
    assert "(32, 28, 28)" in text and "4 axes" in text and "channel axis" in text
    old, new = fix_of(error)
    assert new == "cnn.fit(images[..., None], labels, epochs=1, verbose=0)"
    follow(kernel, cell, old, new)


def test_dataset_without_batch(kernel: KernelSession) -> None:
    cell = (
        DENSE_MODEL
        + """ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64)
model.fit(ds, epochs=1, verbose=0)
"""
    )
    error = failing(kernel, cell)
    assert error["course"]["section"] == "batch-dimension"
    text = error["explanation"]
    assert "`ds` yields single examples" in text and "(4,)" in text
    new = spans(text)[-1]
    assert new == "model.fit(ds.batch(32), epochs=1, verbose=0)"
    follow(kernel, cell, "model.fit(ds, epochs=1, verbose=0)", new)

    # Trained on arrays first, then on a pipeline: the retrace has an unknown rank.
    cell = """images = np.random.rand(32, 28, 28, 1).astype("float32")
labels = np.random.randint(0, 10, 32)
cnn_in = keras.Sequential([
    keras.Input(shape=(28, 28, 1)),
    keras.layers.Conv2D(4, 3, activation="relu"),
    keras.layers.Flatten(),
    keras.layers.Dense(10, activation="softmax"),
])
cnn_in.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
cnn_in.fit(images, labels, epochs=1, verbose=0)
image_ds = tf.data.Dataset.from_tensor_slices((images, labels))
cnn_in.fit(image_ds, epochs=1, verbose=0)
"""
    error = failing(kernel, cell)
    assert "unknown rank" in error["message"]
    new = spans(error["explanation"])[-1]
    assert new == "cnn_in.fit(image_ds.batch(32), epochs=1, verbose=0)"
    follow(kernel, cell, "cnn_in.fit(image_ds, epochs=1, verbose=0)", new)


# ------------------------------------------------------------------------- dtypes
def test_int_labels_minus_float_predictions(kernel: KernelSession) -> None:
    cell = """features = tf.random.normal([8, 3])
labels = tf.constant([0, 1, 1, 0, 1, 0, 0, 1])
w = tf.Variable(tf.zeros([3, 1]))
for step in range(2):
    with tf.GradientTape() as tape:
        predictions = tf.squeeze(features @ w, axis=1)
        loss = tf.reduce_mean((labels - predictions) ** 2)
    w.assign_sub(0.1 * tape.gradient(loss, w))
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert "`labels` (the left side of `-`) is int32" in text and "float32" in text
    assert "tf.cast(predictions, tf.int32)" not in text
    old, new = fix_of(error)
    assert (old, new) == ("labels - predictions", "tf.cast(labels, tf.float32) - predictions")
    follow(kernel, cell, old, new)


def test_dtype_mismatch_inside_tf_function_in_user_names(kernel: KernelSession) -> None:
    cell = """@tf.function
def mse(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred))

mse(tf.constant([1, 0]), tf.constant([0.8, 0.1]))
"""
    error = failing(kernel, cell)
    assert error["type"] == "TypeError"
    old, new = fix_of(error)
    assert (old, new) == ("y_true - y_pred", "tf.cast(y_true, tf.float32) - y_pred")
    follow(kernel, cell, old, new)

    # float32 against float64: the float64 side goes to float32, also through tf.matmul.
    cell = """weights64 = np.random.rand(3, 2)
weights = tf.constant(weights64)
out = tf.matmul(tf.ones([4, 3]), weights)
"""
    error = failing(kernel, cell)
    old, new = fix_of(error)
    assert new == "tf.matmul(tf.ones([4, 3]), tf.cast(weights, tf.float32))"
    follow(kernel, cell, old, new)


# --------------------------------------------------------------------- None gradient
def test_none_gradient_after_rebinding(kernel: KernelSession) -> None:
    cell = """w = tf.Variable(2.0)
lr = 0.1
for step in range(3):
    with tf.GradientTape() as tape:
        loss = (w * 3.0 - 1.0) ** 2
    g = tape.gradient(loss, w)
    w = w - lr * g
"""
    execution = run(kernel, cell, ok=False)
    report = checked_report(execution)
    error = report["error"]
    assert error["course"]["section"] == "rebinding-variables"
    text = error["explanation"]
    assert "`g` is None" in text and "tape.gradient" in text
    # One cause, one fix: the variables entry for the rebinding gives it; the error
    # names the same cause and points there instead of repeating it.
    [rebound] = [v for v in report["variables"] if v["name"] == "w"]
    fix = spans(rebound["text"])[-1]
    assert fix == "w.assign_sub(lr * g)"
    assert "See the rebinding above for the fix." in text and "assign_sub" not in text
    follow(kernel, cell, "w = w - lr * g", fix)

    # The same TypeError in code that is not gradient arithmetic stays unexplained.
    execution = run(kernel, "scale = None\nprice = 2.5 * scale", ok=False)
    assert checked_report(execution)["error"] is None


# ----------------------------------------------------------------- graph building
def test_variable_assigned_in_one_branch(kernel: KernelSession) -> None:
    cell = """@tf.function
def normalize(x, clip):
    if clip:
        scale = tf.reduce_max(x)
    return x / scale

normalize(tf.constant([1.0, 2.0]), tf.constant(True))
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "autograph-conditions"
    text = error["explanation"]
    assert "`scale`" in text and "`if clip:`" in text and "else branch" in text
    fix = spans(text)[-1]
    assert fix == "scale = tf.ones_like(tf.reduce_max(x))"
    # The learner puts that line before the `if`.
    follow(kernel, cell, "    if clip:\n", f"    {fix}\n    if clip:\n")

    # A value transformed only in one case keeps the input otherwise (not ones).
    cell = """@tf.function
def clip_grad(g, max_norm):
    norm = tf.norm(g)
    if norm > max_norm:
        clipped = g * max_norm / norm
    return clipped

clip_grad(tf.constant([0.3, 0.4]), 1.0)
"""
    text = failing(kernel, cell)["explanation"]
    fix = spans(text)[-1]
    assert fix == "clipped = g"
    follow(kernel, cell, "    if norm > max_norm:\n", f"    {fix}\n    if norm > max_norm:\n")
    assert value_of(kernel, "clip_grad(tf.constant([0.3, 0.4]), 1.0).numpy().tolist()") == (
        pytest.approx([0.3, 0.4])
    )


def test_python_if_on_a_tensor_in_a_keras_layer(kernel: KernelSession) -> None:
    cell = """class SafeNormalize(keras.layers.Layer):
    def call(self, x):
        norm = tf.norm(x)
        if norm > 0:
            return x / norm
        return x

net = keras.Sequential([keras.Input(shape=(4,)), SafeNormalize(), keras.layers.Dense(1)])
"""
    error = failing(kernel, cell)
    assert error["type"] == "OperatorNotAllowedInGraphError"
    assert error["course"]["section"] == "autograph-conditions"
    text = error["explanation"]
    assert "SafeNormalize.call()" in text and "autograph" not in text.lower()
    fix = spans(text)[-1]
    assert fix == "return tf.where(norm > 0, x / norm, x)"
    old = "        if norm > 0:\n            return x / norm\n        return x\n"
    follow(kernel, cell, old, f"        {fix}\n")


def test_graph_tensor_escaping_into_a_list(kernel: KernelSession) -> None:
    cell = """losses = []

@tf.function
def train_step(x):
    loss = tf.reduce_mean(x * 2.0)
    losses.append(loss)
    return loss

for batch in range(3):
    train_step(tf.random.normal([4]))
print(np.mean(losses))
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "escaped-tensors"
    assert "kept in `losses`" in error["explanation"]
    # The advice: keep the returned value instead of the graph tensor.
    corrected = cell.replace("    losses.append(loss)\n", "").replace(
        "    train_step(tf.random.normal([4]))",
        "    result = train_step(tf.random.normal([4]))\n    losses.append(result)",
    )
    assert "result = f(x)" in error["explanation"]
    assert checked_report(run(kernel, corrected))["error"] is None

    cell = """class Centered(keras.layers.Layer):
    def call(self, x):
        self.mean = tf.reduce_mean(x)
        return x - self.mean

centered = Centered()
center = tf.function(lambda x: centered(x))
center(tf.constant([1.0, 2.0]))
print(centered.mean + 1)
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "escaped-tensors"
    assert "kept in `centered.mean`" in error["explanation"]


def test_new_optimizer_passed_to_a_traced_function(kernel: KernelSession) -> None:
    cell = """regressor = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)])
xb, yb = tf.random.normal([8, 4]), tf.random.normal([8, 1])

@tf.function
def train(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for epoch in range(2):
    train(regressor, keras.optimizers.Adam(0.01), xb, yb)
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "variables-in-functions"
    text = error["explanation"]
    assert "new optimizer" in text
    found = spans(text)
    create, call = found[-2], found[-1]
    assert create == "optimizer = keras.optimizers.Adam(0.01)"
    assert call == "train(regressor, optimizer, xb, yb)"
    old = "for epoch in range(2):\n    train(regressor, keras.optimizers.Adam(0.01), xb, yb)"
    follow(kernel, cell, old, f"{create}\nfor epoch in range(2):\n    {call}")


def test_batched_dataset_thrown_away_in_an_earlier_cell(kernel: KernelSession) -> None:
    run(kernel, DENSE_MODEL)
    run(
        kernel,
        "pipeline = tf.data.Dataset.from_tensor_slices((x, y))\n"
        "pipeline.shuffle(64)\n"
        "pipeline.batch(16)",
    )
    cell = DENSE_MODEL + "model.fit(pipeline, epochs=1, verbose=0)\n"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "tf-data"
    text = error["explanation"]
    assert "`pipeline.shuffle(64).batch(16)` made a new, batched dataset and threw it away" in text
    keep = next(s for s in spans(text) if s.startswith("pipeline = "))
    assert keep == "pipeline = pipeline.shuffle(64).batch(16)"
    run(kernel, keep)
    assert checked_report(run(kernel, cell))["error"] is None
