"""Fixes that go to where the mistake was made (issue #25): an integer variable is created
as a float (casting it at the use would run, but it could never train), a Dense layer on
images gets the Flatten its model lacks, and label/loss and functional-model errors link
the course sections that teach them. Each fix is run in the kernel; look-alikes stay quiet.
The cells are our own.
"""

from __future__ import annotations

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    run,
)
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(0)
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")


# ---------------------------------------------------------------- integer variables
STEP = """temps = tf.random.normal((16, 1))
with tf.GradientTape() as rec:
    guess = temps * 1.8 + offset_v
    miss = tf.reduce_mean((guess - temps) ** 2)
d_offset = rec.gradient(miss, offset_v)
"""


def test_integer_variable_is_created_as_a_float_in_an_earlier_cell(
    kernel: KernelSession,
) -> None:
    run(kernel, "offset_v = tf.Variable(32)\n")
    error = failing(kernel, STEP)
    text = error["explanation"]
    assert "`offset_v` is a variable created from a Python int" in text
    assert "`offset_v = tf.Variable(32)` (cell In[" in text
    assert "tf.cast(offset_v" not in text
    fix = fix_of(text)
    assert fix == "offset_v = tf.Variable(32.0)"
    run(kernel, fix)
    runs_cleanly(kernel, STEP + "assert d_offset is not None\n")


def test_integer_variable_in_the_same_cell_gets_a_float_list(kernel: KernelSession) -> None:
    cell = """coefs = tf.Variable([1, 2])
rows = tf.random.normal((5, 2))
scores = rows * coefs
"""
    text = failing(kernel, cell)["explanation"]
    assert "`coefs = tf.Variable([1, 2])` (in this cell)" in text
    fix = fix_of(text)
    assert fix == "coefs = tf.Variable([1.0, 2.0])"
    runs_cleanly(kernel, cell.replace("coefs = tf.Variable([1, 2])", fix))


def test_integer_tensor_still_gets_a_cast(kernel: KernelSession) -> None:
    cell = """counts = tf.constant([3, 4])
rates = tf.constant([0.5, 0.25])
spent = rates * counts
"""
    text = failing(kernel, cell)["explanation"]
    assert "created from a Python int" not in text
    assert "tf.cast(counts, tf.float32)" in text
    runs_cleanly(
        kernel, "counts = tf.constant([3, 4])\nspent = rates * tf.cast(counts, tf.float32)"
    )


def test_float_variable_look_alike_is_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "offset_f = tf.Variable(32.0)\nlifted = tf.ones((3, 1)) + offset_f\n")


# ---------------------------------------------------------------- a missing Flatten
TILES = """from keras import layers
tiles = np.random.rand(24, 6, 6, 1).astype("float32")
kinds = np.arange(24) % 4
"""


def test_dense_on_feature_maps_gets_a_flatten_in_the_users_spelling(
    kernel: KernelSession,
) -> None:
    run(kernel, TILES)
    cell = """tile_net = keras.Sequential([
    keras.Input(shape=(6, 6, 1)),
    layers.Conv2D(4, 3, activation="relu"),
    layers.Dense(4, activation="softmax"),
])
tile_net.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
tile_net.fit(tiles, kinds, epochs=1, verbose=0)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "labels-and-loss"
    assert "The model outputs (None, 4, 4, 4)" in text
    assert "`kinds`" in text
    fix = fix_of(text)
    assert fix == 'layers.Flatten(), layers.Dense(4, activation="softmax")'
    runs_cleanly(kernel, cell.replace('layers.Dense(4, activation="softmax")', fix))


def test_functional_dense_on_images_with_one_hot_labels(kernel: KernelSession) -> None:
    run(kernel, TILES + "kinds_1h = keras.utils.to_categorical(kinds, 4)\n")
    cell = """pic_in = keras.Input(shape=(6, 6, 1))
probs = keras.layers.Dense(4, activation="softmax")(pic_in)
pic_net = keras.Model(pic_in, probs)
pic_net.compile(optimizer="sgd", loss="categorical_crossentropy")
pic_net.fit(tiles, kinds_1h, epochs=1, verbose=0)
"""
    text = failing(kernel, cell)["explanation"]
    assert "The model outputs (None, 6, 6, 4)" in text
    fix = fix_of(text)
    expected = 'keras.layers.Dense(4, activation="softmax")(keras.layers.Flatten()(pic_in))'
    assert fix == expected
    runs_cleanly(kernel, cell.replace('keras.layers.Dense(4, activation="softmax")(pic_in)', fix))


def test_flattened_model_look_alike_is_silent(kernel: KernelSession) -> None:
    run(kernel, TILES)
    runs_cleanly(
        kernel,
        """flat_net = keras.Sequential([
    keras.Input(shape=(6, 6, 1)), layers.Flatten(), layers.Dense(4, activation="softmax")
])
flat_net.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
flat_net.fit(tiles, kinds, epochs=1, verbose=0)
""",
    )


# ---------------------------------------------------------------- labels and the loss
SCORES = """marks = np.random.rand(30, 5).astype("float32")
bands = np.arange(30) % 4
grader = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(4, activation="softmax")])
"""


def test_one_hot_labels_with_the_sparse_loss_link_labels_and_loss(kernel: KernelSession) -> None:
    run(kernel, SCORES + "bands_1h = keras.utils.to_categorical(bands, 4)\n")
    cell = """grader.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
grader.fit(marks, bands_1h, epochs=1, verbose=0)
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "labels-and-loss"
    text = error["explanation"]
    assert "`bands_1h` look one-hot" in text
    fix = fix_of(text)
    assert fix == "loss='categorical_crossentropy'"
    runs_cleanly(kernel, cell.replace('loss="sparse_categorical_crossentropy"', fix))


def test_integer_labels_and_out_of_range_labels_link_labels_and_loss(
    kernel: KernelSession,
) -> None:
    run(kernel, SCORES)
    cell = """grader.compile(optimizer="adam", loss="categorical_crossentropy")
grader.fit(marks, bands, epochs=1, verbose=0)
"""
    assert failing(kernel, cell)["course"]["section"] == "labels-and-loss"
    cell = """grader.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
grader.fit(marks, bands + 1, epochs=1, verbose=0)
"""
    assert failing(kernel, cell)["course"]["section"] == "labels-and-loss"


def test_disconnected_functional_model_links_the_functional_api(kernel: KernelSession) -> None:
    cell = """row_in = keras.Input(shape=(5,))
band_out = keras.layers.Dense(4)(row_in)
wired = keras.Model(keras.Input(shape=(5,)), band_out)
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "functional-api"
    fix = fix_of(error["explanation"])
    assert fix == "keras.Model(row_in, band_out)"
    runs_cleanly(kernel, cell.replace("keras.Model(keras.Input(shape=(5,)), band_out)", fix))
