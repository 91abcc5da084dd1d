"""An argument value TensorFlow or Keras refused (``errors/families_arguments.py``): the
entry names the argument as the learner wrote it and the call, quotes the requirement the
message states, and, when the right value can be known, prints the learner's line with it;
the tests run that line in the kernel. The same line with a valid value raises nothing and
gets no entry. Real kernel, real TensorFlow 2.21 / Keras 3."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

DATA = """feats = np.random.rand(32, 4).astype("float32")
marks = np.random.randint(0, 2, (32, 1)).astype("float32")
"""
GENERIC = ("Compare these shapes and dtypes", "says what Keras refused", "says what TensorFlow")


def fixed_by(kernel: KernelSession, cell: str, fix: str, section: str) -> str:
    """The entry of the failing one-line ``cell``, its printed fix (the whole line, in the
    learner's names) checked to be ``fix`` and run without an error entry."""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert not any(generic in text for generic in GENERIC), text
    assert error["course"]["section"] == section, error
    assert fix_of(text) == fix, text
    runs_cleanly(kernel, fix)
    return text


def test_string_values_get_the_closest_allowed_value(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    text = fixed_by(
        kernel,
        'conv = keras.layers.Conv2D(8, 3, padding="smae")',
        'conv = keras.layers.Conv2D(8, 3, padding="same")',
        "keras-model-api",
    )
    assert "Keras refused the `padding` argument of" in text
    assert 'written `padding="smae"`' in text
    # Keras prints a set: its order changes from one process to the next.
    assert re.search(r"must be a list/tuple or one of \{'(valid|same)', '(valid|same)'\}", text)
    # Invented: a data format, a text layer's output mode, TF's own upper-case pad modes.
    text = fixed_by(
        kernel,
        'conv = keras.layers.Conv2D(8, 3, data_format="channel_last")',
        'conv = keras.layers.Conv2D(8, 3, data_format="channels_last")',
        "keras-model-api",
    )
    assert re.search(r"must be one of \{'channels_(first|last)', 'channels_(first|last)'\}", text)
    fixed_by(
        kernel,
        'vec = keras.layers.TextVectorization(output_mode="ints")',
        'vec = keras.layers.TextVectorization(output_mode="int")',
        "keras-model-api",
    )
    text = fixed_by(
        kernel,
        'padded = tf.pad(feats, [[1, 1], [0, 0]], mode="reflection")',
        'padded = tf.pad(feats, [[1, 1], [0, 0]], mode="REFLECT")',
        "shape-dtype-device",
    )
    assert "TensorFlow refused the `mode` argument" in text
    # A value no allowed one is close to: the requirement, no fix.
    error = failing(kernel, 'conv = keras.layers.Conv2D(8, 3, padding="causal")')
    assert re.search(r"one of \{'(valid|same)', '(valid|same)'\}", error["explanation"])
    assert "Fix:" not in error["explanation"]
    # Correct look-alikes: nothing raised, no entry.
    runs_cleanly(kernel, 'conv = keras.layers.Conv2D(8, 3, padding="valid")')
    runs_cleanly(kernel, 'padded = tf.pad(feats, [[1, 1], [0, 0]], mode="REFLECT")')


def test_dtype_names_get_tensorflows_closest_dtype(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    text = fixed_by(
        kernel, 'z = tf.cast(feats, "flaot32")', 'z = tf.cast(feats, "float32")', "dtype-casting"
    )
    assert 'the `dtype` argument of `tf.cast(feats, "flaot32")`' in text
    assert '"flaot32" is not a dtype name TensorFlow knows' in text
    text = fixed_by(
        kernel,
        'layer = keras.layers.Dense(3, dtype="float33")',
        'layer = keras.layers.Dense(3, dtype="float32")',
        "dtype-casting",
    )
    assert "valid policies include 'mixed_float16'" in text
    # Invented: a Python type name where TensorFlow wants a dtype name.
    fixed_by(
        kernel,
        'ones = tf.constant([1, 2], dtype="int")',
        'ones = tf.constant([1, 2], dtype="int32")',
        "dtype-casting",
    )
    runs_cleanly(kernel, 'z = tf.cast(feats, "float16")')


def test_unknown_keywords_get_the_callees_keyword(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    text = fixed_by(
        kernel,
        "rnn = keras.layers.LSTM(4, return_sequence=True)",
        "rnn = keras.layers.LSTM(4, return_sequences=True)",
        "keras-model-api",
    )
    assert "does not recognise the keyword argument `return_sequence`" in text
    # Invented: a TF function's keyword, fit's, a dataset method's (Python refuses it
    # before TensorFlow runs), and a misspelt required keyword of a layer.
    fixed_by(
        kernel,
        "avg = tf.reduce_mean(feats, axes=1)",
        "avg = tf.reduce_mean(feats, axis=1)",
        "shape-dtype-device",
    )
    runs_cleanly(
        kernel,
        """net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
net.compile(optimizer="adam", loss="binary_crossentropy")""",
    )
    fixed_by(
        kernel,
        "history = net.fit(feats, marks, epoch=2, verbose=0)",
        "history = net.fit(feats, marks, epochs=2, verbose=0)",
        "keras-model-api",
    )
    runs_cleanly(kernel, "pairs = tf.data.Dataset.from_tensor_slices((feats, marks))")
    text = fixed_by(
        kernel,
        "mixed = pairs.shuffle(buffer_sized=10)",
        "mixed = pairs.shuffle(buffer_size=10)",
        "tf-data",
    )
    assert "`shuffle` takes no keyword argument `buffer_sized`" in text
    text = fixed_by(
        kernel,
        "conv = keras.layers.Conv2D(filters=8, kernal_size=3)",
        "conv = keras.layers.Conv2D(filters=8, kernel_size=3)",
        "keras-model-api",
    )
    assert "so its required `kernel_size` was missing" in text
    runs_cleanly(kernel, "avg = tf.reduce_mean(feats, axis=1, keepdims=True)")


def test_numbers_out_of_range_get_the_requirement(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "drop = keras.layers.Dropout(1.5)")
    text = error["explanation"]
    assert "Keras refused the `rate` argument of `keras.layers.Dropout(1.5)`, written `1.5`" in (
        text
    )
    assert "expected a float value between 0 and 1" in text and "Fix:" not in text
    # The axis of a reduction: the range the input's rank gives.
    text = failing(kernel, "avg = tf.reduce_mean(tf.constant(feats), axis=3)")["explanation"]
    assert "TensorFlow refused the `axis` argument" in text
    assert "the input has 2 axes, so an axis is from -2 to 1" in text
    # A layer that checks its argument when adapted: its constructor, on an earlier line.
    cell = "norm = keras.layers.Normalization(axis=5)\nnorm.adapt(feats)"
    text = failing(kernel, cell)["explanation"]
    assert "`keras.layers.Normalization(axis=5)` (line 1 of this cell), written `axis=5`" in text
    assert "must be in the range [-ndim, ndim); the input has 2 axes" in text
    # Invented: a Dense layer of no units, a dataset batched by zero (a chained call).
    text = failing(kernel, "dense = keras.layers.Dense(0)")["explanation"]
    assert "the `units` argument of `keras.layers.Dense(0)`, written `0`" in text
    assert "expected a positive integer" in text
    error = failing(kernel, "batches = tf.data.Dataset.from_tensor_slices((feats, marks)).batch(0)")
    assert error["course"]["section"] == "tf-data"
    assert "the `batch_size` argument" in error["explanation"]
    assert "batch size must be greater than zero" in error["explanation"]
    runs_cleanly(kernel, "drop = keras.layers.Dropout(0.5)")
    runs_cleanly(kernel, "norm = keras.layers.Normalization(axis=-1)\nnorm.adapt(feats)")
    runs_cleanly(kernel, "avg = tf.reduce_mean(tf.constant(feats), axis=1)")


def test_keras_names_of_initializers_and_constraints(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    text = fixed_by(
        kernel,
        'layer = keras.layers.Dense(3, kernel_initializer="gloroth_uniform")',
        'layer = keras.layers.Dense(3, kernel_initializer="glorot_uniform")',
        "keras-model-api",
    )
    assert '"gloroth_uniform" is not an initializer Keras knows by name' in text
    assert "`kernel_initializer=` of" in text
    text = fixed_by(
        kernel,
        'layer = keras.layers.Dense(3, kernel_constraint="nonneg")',
        'layer = keras.layers.Dense(3, kernel_constraint="non_neg")',
        "keras-model-api",
    )
    assert '"nonneg" is not a constraint Keras knows by name' in text


def test_arguments_in_a_model_list_or_held_by_a_name(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    # A statement over several lines: the fix is the call, to write in place of the old.
    cell = """stack = keras.Sequential([
    keras.Input((4,)),
    keras.layers.Dense(3, activation="relu", kernel_initialiser="zeros"),
])"""
    error = failing(kernel, cell)
    text = error["explanation"]
    old = 'keras.layers.Dense(3, activation="relu", kernel_initialiser="zeros")'
    assert f"Fix: in place of `{old}`, " in text
    fix = fix_of(text)
    assert fix == 'keras.layers.Dense(3, activation="relu", kernel_initializer="zeros")'
    runs_cleanly(kernel, cell.replace(old, fix))
    # An axis a helper function got as a parameter: the value it holds, no fix.
    cell = """def column_mean(t, ax):
    return tf.reduce_mean(t, axis=ax)

means = column_mean(feats, 4)"""
    text = failing(kernel, cell)["explanation"]
    assert "(in `column_mean`)" in text and "`ax` is the Python int 4" in text
    assert "TensorFlow refused the `axis` argument of `tf.reduce_mean(t, axis=ax)`" in text
    assert "the input has 2 axes, so an axis is from -2 to 1" in text
    assert "Fix:" not in text
    runs_cleanly(kernel, "means = column_mean(feats, 1)")


def test_only_the_call_that_raised_is_blamed_on_a_line_of_several_statements(
    kernel: KernelSession,
) -> None:
    """``tf.reduce_sum([t2, t3])`` packs the list into one tensor and TensorFlow's message
    quotes ``[2,3]``: the ``shape`` of ``tf.ones((2, 3))`` earlier on the line (which ran
    fine) is not the argument refused. The same line's own refused argument still is."""
    cell = "t2 = tf.ones((2, 3)); t3 = tf.ones((3, 2)); s = tf.reduce_sum([t2, t3])"
    text = failing(kernel, cell)["explanation"]
    assert "refused the `shape` argument" not in text, text
    assert "`tf.reduce_sum([t2, t3])` raised" in text, text
    runs_cleanly(kernel, "s = tf.reduce_sum(t2) + tf.reduce_sum(t3)")
    text = failing(kernel, "t = tf.ones((2, 3)); m = tf.reduce_mean(t, axis=3)")["explanation"]
    assert "TensorFlow refused the `axis` argument of `tf.reduce_mean(t, axis=3)`" in text
