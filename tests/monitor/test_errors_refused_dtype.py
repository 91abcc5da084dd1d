"""A value of a dtype an op has no kernel for (issue #25,
``errors/families_refused_dtype.py``): the entry names the one argument holding the
refused dtype and casts it in the learner's call (a loss's labels to int32, saying Keras
hands a loss float labels; a bool mask to float32). Each printed fix runs in the kernel
and gives the right value; the call with the cast already written gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """feats = np.random.rand(60, 4).astype("float32")
grades = np.arange(60) % 3
cost_table = tf.constant([1.0, 2.0, 5.0])
flags = np.array([True, False, True, True, False, False])
groups = tf.constant([0, 0, 1, 1, 2, 2])
"""

LOSS = """def costly_loss(targets, probs):
    costs = tf.gather(cost_table, targets)
    return tf.reduce_mean(costs * keras.losses.sparse_categorical_crossentropy(targets, probs))
"""

FIT = """net = keras.Sequential(
    [keras.Input(shape=(4,)), keras.layers.Dense(3, activation="softmax")]
)
net.compile(optimizer="adam", loss=costly_loss)
history = net.fit(feats, grades, epochs=1, verbose=0)
"""


def test_a_loss_gathering_by_its_float_labels_casts_them(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, LOSS + FIT)
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert "`tf.gather` accepts its `indices` only as int16, int32, int64" in text
    assert "Keras casts the labels it gives a loss to the predictions' float dtype" in text
    fix = fix_of(text)
    assert fix == "costs = tf.gather(cost_table, tf.cast(targets, tf.int32))"
    fixed_loss = LOSS.replace("    costs = tf.gather(cost_table, targets)", f"    {fix}")
    runs_cleanly(kernel, fixed_loss + FIT)
    assert value_of(kernel, "len(history.history['loss'])") == 1


def test_a_bool_mask_averaged_per_segment_is_cast_to_float(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "rates = tf.math.segment_mean(flags, groups)")
    text = error["explanation"]
    assert "`flags` is a (6,) bool NumPy array" in text and "cast it to float32" in text
    fix = fix_of(text)
    assert fix == "rates = tf.math.segment_mean(tf.cast(flags, tf.float32), groups)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "rates.numpy().tolist()") == [0.5, 1.0, 0.0]


def test_the_cast_written_already_gets_no_entry(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    runs_cleanly(
        kernel, "counts = tf.math.unsorted_segment_sum(tf.cast(flags, tf.int32), groups, 3)"
    )
    runs_cleanly(kernel, "picked = tf.gather(cost_table, tf.constant([2, 0]))")
