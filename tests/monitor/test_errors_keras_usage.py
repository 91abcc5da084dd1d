"""Keras 3 and TensorFlow 2 used as older tutorials wrote them (issue #25): a callback
class where fit needs an object, model methods Keras removed, a weights file loaded as
a model, TensorFlow 1 names. Each entry names what was written, and its fix runs in the
kernel; the correct cell beside it gets no entry (``errors/families_keras_usage.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

MODELS = """feats = np.random.rand(40, 3).astype("float32")
kinds = (feats.sum(axis=1) > 1.5).astype("int32")
multi = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2, activation="softmax")])
multi.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
binary = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1, activation="sigmoid")])
binary.compile(optimizer="adam", loss="binary_crossentropy")
tags = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(4, activation="sigmoid")])
tags.compile(optimizer="adam", loss="binary_crossentropy")
"""


def test_a_callback_class_in_fit(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODELS)
    cell = "multi.fit(feats, kinds, epochs=2, verbose=0, callbacks=[keras.callbacks.EarlyStopping])"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "callback-mode"
    text = error["explanation"]
    assert "`keras.callbacks.EarlyStopping` is the class itself" in text
    fix = fix_of(text)
    assert fix == cell.replace("EarlyStopping]", "EarlyStopping()]")
    runs_cleanly(kernel, fix)


def test_model_methods_keras_removed(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODELS)
    error = failing(kernel, "labels = multi.predict_classes(feats)")
    fix = fix_of(error["explanation"])
    assert fix == "np.argmax(multi.predict(feats), axis=-1)"
    runs_cleanly(kernel, f"labels = {fix}")
    assert value_of(kernel, "labels.shape[0]") == 40
    error = failing(kernel, "flags = binary.predict_classes(feats)")
    fix = fix_of(error["explanation"])
    assert fix == '(binary.predict(feats) > 0.5).astype("int32")'
    runs_cleanly(kernel, f"flags = {fix}")
    assert value_of(kernel, "set(flags.ravel().tolist()) <= {0, 1}") is True
    # Four sigmoid units are four yes/no labels: each is thresholded, not one argmax kept.
    error = failing(kernel, "marks = tags.predict_classes(feats)")
    fix = fix_of(error["explanation"])
    assert fix == '(tags.predict(feats) > 0.5).astype("int32")'
    runs_cleanly(kernel, f"marks = {fix}")
    assert value_of(kernel, "list(marks.shape)") == [40, 4]
    error = failing(kernel, "multi.fit_generator(feats, kinds, epochs=1, verbose=0)")
    fix = fix_of(error["explanation"])
    assert fix == "multi.fit(feats, kinds, epochs=1, verbose=0)"
    runs_cleanly(kernel, fix)


def test_weights_loaded_as_a_model(kernel: KernelSession, tmp_path: Path) -> None:
    runs_cleanly(kernel, MODELS)
    path = str(tmp_path / "multi.weights.h5")
    runs_cleanly(kernel, f"multi.save_weights({path!r})")
    error = failing(kernel, f"again = keras.models.load_model({path!r})")
    assert error["course"]["section"] == "keras-saving"
    text = error["explanation"]
    assert "holds weights only" in text and "(`multi` saved them)" in text
    fix = fix_of(text)
    assert fix == f"multi.load_weights({path!r})"
    runs_cleanly(kernel, fix)


def test_tensorflow_1_names(kernel: KernelSession) -> None:
    error = failing(kernel, "w = tf.Variable(tf.random_normal((3, 2)))")
    assert error["course"]["section"] == "eager-vs-graph"
    fix = fix_of(error["explanation"])
    assert fix == "w = tf.Variable(tf.random.normal((3, 2)))"
    runs_cleanly(kernel, fix)
    error = failing(kernel, "x = tf.placeholder(tf.float32, (None, 3))")
    assert "`tf.placeholder` is TensorFlow 1" in error["explanation"]
    assert "Fix:" not in error["explanation"]
    # A name TensorFlow 2 has: no entry.
    runs_cleanly(kernel, "w = tf.random.normal((3, 2))")
    error = failing(kernel, "gen = keras.preprocessing.image.ImageDataGenerator(rescale=1 / 255)")
    assert error["course"]["section"] == "keras-model-api"
    assert "`keras.utils.image_dataset_from_directory(...)`" in error["explanation"]
    runs_cleanly(kernel, "rescale = keras.layers.Rescaling(1 / 255)")
