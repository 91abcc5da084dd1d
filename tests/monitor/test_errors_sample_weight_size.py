"""``sample_weight`` given one weight per class or label where fit wants one per example
(issue #25, ``errors/families_data.py``): Keras's cardinality message lists x, y and the
weights; x and y agree, so the entry names the weights, never an x/y mismatch, and gives
each example its weight from the learner's table (its class's, one-hot rows' ``y @ w``,
multi-hot rows' largest). Each printed fix runs in the kernel; per-example weights get
no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """inputs = np.random.rand(90, 6).astype("float32")
kinds = np.arange(90) % 3
tags = (np.random.rand(90, 5) > 0.6).astype("float32")
picker = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(3, activation="softmax")])
picker.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
tagger = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(5, activation="sigmoid")])
tagger.compile(optimizer="adam", loss="binary_crossentropy")
class_w = np.array([1.0, 4.0, 2.0])
tag_w = tf.constant([1.0, 3.0, 1.0, 6.0, 2.0])
"""


def test_one_weight_per_class_for_integer_labels(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = "picker.fit(inputs, kinds, sample_weight=class_w, epochs=1, verbose=0)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "needs 90 entries, but `class_w` has 3: one per class" in text
    assert "holds 90 examples" not in text
    fix = fix_of(text)
    assert fix == (
        "picker.fit(inputs, kinds, sample_weight=np.asarray(class_w)[kinds], epochs=1, verbose=0)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "np.asarray(class_w)[kinds][:4].tolist()") == [1.0, 4.0, 2.0, 1.0]
    # One weight per example: no entry.
    runs_cleanly(kernel, "picker.fit(inputs, kinds, sample_weight=np.ones(90), verbose=0)")


def test_one_weight_per_label_for_multi_hot_rows(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = "history = tagger.fit(inputs, tags, sample_weight=tag_w, epochs=1, verbose=0)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`tag_w` has 5: one per label" in text and "a row can have several labels" in text
    fix = fix_of(text)
    assert fix == (
        "history = tagger.fit(inputs, tags, sample_weight=np.max(np.where(tags > 0, "
        "np.asarray(tag_w), 1.0), axis=1), epochs=1, verbose=0)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "len(history.history['loss'])") == 1
