"""Integer labels with one class number per position given to a model compiled with a
categorical loss (issue #25, ``families_keras._labels_per_position``): a tagger's output
``(None, T, C)`` against labels ``(None, T)``. The entry names the compiled loss and the
labels' dtype, and its fix is the compile statement with the sparse loss, which then
trains; it never asks for a Flatten. A model that forgot to flatten (one label per
example) keeps that explanation, and float per-position targets get no sparse loss."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

TAGGER = """from keras import layers
rng = np.random.default_rng(11)
words = rng.integers(1, 40, size=(48, 9)).astype("int32")
tags = rng.integers(0, 5, size=(48, 9)).astype("int32")
tagger = keras.Sequential([
    keras.Input(shape=(9,), dtype="int32"),
    layers.Embedding(40, 8),
    layers.Dense(5, activation="softmax"),
])
"""


def test_a_tagger_with_a_categorical_loss_gets_the_sparse_one(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TAGGER)
    compile_line = "tagger.compile(optimizer='sgd', loss='categorical_crossentropy')"
    cell = f"{compile_line}\nlog = tagger.fit(words, tags, epochs=1, verbose=0)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "labels-and-loss"
    assert (
        "The model outputs (None, 9, 5): a row of 5 class probabilities at each of its 9 "
        "positions, and `tags` are (None, 9) int32: one class number per position."
    ) in text, text
    assert "`loss='categorical_crossentropy'` (the compiled loss, this cell)" in text
    assert "Flatten must" not in text and "Flatten (or global pooling) must" not in text
    fix = fix_of(text)
    assert fix == "tagger.compile(optimizer='sgd', loss='sparse_categorical_crossentropy')"
    runs_cleanly(kernel, cell.replace(compile_line, fix))
    assert value_of(kernel, "len(log.history['loss'])") == 1


def test_the_labels_of_a_dataset_are_read_from_its_element_spec(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TAGGER + "pairs = tf.data.Dataset.from_tensor_slices((words, tags))\n")
    compile_line = "tagger.compile(optimizer='adam', loss=keras.losses.CategoricalCrossentropy())"
    cell = f"{compile_line}\ntagger.fit(pairs.batch(16), epochs=1, verbose=0)"
    text = failing(kernel, cell)["explanation"]
    assert "the labels of `pairs.batch(16)` are (None, 9) int32" in text, text
    fix = fix_of(text)
    assert (
        fix == "tagger.compile(optimizer='adam', loss=keras.losses.SparseCategoricalCrossentropy())"
    )
    runs_cleanly(kernel, cell.replace(compile_line, fix))


def test_look_alikes_keep_their_own_explanations(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TAGGER)
    # Float targets per position (a regression per step): no sparse loss is offered.
    text = failing(
        kernel,
        "tagger.compile(optimizer='sgd', loss='categorical_crossentropy')\n"
        "tagger.fit(words, tags.astype('float32'), epochs=1, verbose=0)",
    )["explanation"]
    assert "sparse_categorical_crossentropy" not in text, text
    # One label per example for a model that kept the positions: the Flatten reading.
    text = failing(
        kernel,
        "photos = rng.random((12, 6, 6, 3)).astype('float32')\n"
        "kinds = keras.utils.to_categorical(rng.integers(0, 4, size=12), 4)\n"
        "viewer = keras.Sequential([keras.Input((6, 6, 3)), layers.Conv2D(4, 3), "
        "layers.Dense(4, activation='softmax')])\n"
        "viewer.compile(optimizer='sgd', loss='categorical_crossentropy')\n"
        "viewer.fit(photos, kinds, epochs=1, verbose=0)",
    )["explanation"]
    assert "Flatten (or global pooling) must come first" in text, text
    assert "one class number per position" not in text
