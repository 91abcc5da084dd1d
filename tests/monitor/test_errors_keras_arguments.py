"""Keras's argument rules read against the call as written (exclusive keywords, an int
given as a shape, an attribute Keras will not set), and every printed fix runnable in a
notebook that never imported TensorFlow as ``tf`` (issue #25). Each fix is run in the
kernel; correct look-alikes get no such entry."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

# A notebook that uses Keras alone: no ``tf`` anywhere in its namespace.
KERNEL = KernelSetup(after_load="import numpy as np\nimport keras\nfrom keras import layers")


def test_two_exclusive_keywords_name_both_and_keep_one(kernel: KernelSession) -> None:
    cell = "clip_opt = keras.optimizers.Adam(clipnorm=1.0, clipvalue=0.5)"
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "`clipnorm=1.0` and `clipvalue=0.5` together" in explanation
    assert '"Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set"' in explanation
    fix = fix_of(explanation)
    assert fix == "clip_opt = keras.optimizers.Adam(clipnorm=1.0)"
    runs_cleanly(kernel, fix)
    runs_cleanly(kernel, "keras.optimizers.Adam(clipnorm=1.0, learning_rate=0.01)")


def test_an_int_shape_is_wrapped_in_a_tuple(kernel: KernelSession) -> None:
    cell = "features_in = keras.Input(shape=5)"
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "`keras.Input(shape=5)` was given `5` as `shape`" in explanation
    assert "Cannot convert '5' to a shape" in explanation
    fix = fix_of(explanation)
    assert fix == "features_in = keras.Input(shape=(5,))"
    runs_cleanly(kernel, fix)
    # Given by position, the parameter is named from Keras's signature.
    error = failing(kernel, "flat_to = layers.Reshape(6)")
    assert "`layers.Reshape(6)` was given `6` as `target_shape`" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "flat_to = layers.Reshape((6,))"
    runs_cleanly(kernel, fix)


def test_a_learning_rate_set_on_a_schedule_keeps_the_schedule(
    kernel: KernelSession,
) -> None:
    made = (
        "decay = keras.optimizers.schedules.ExponentialDecay(0.1, 100, 0.9)\n"
        "sgd_opt = keras.optimizers.SGD(learning_rate=decay)\n"
        "tuned = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        'tuned.compile(optimizer=sgd_opt, loss="mse")'
    )
    runs_cleanly(kernel, made)
    error = failing(kernel, "sgd_opt.learning_rate = 0.01")
    explanation = error["explanation"]
    assert "`sgd_opt.learning_rate = 0.01` sets `learning_rate`" in explanation
    assert "its learning rate is not settable" in explanation
    # The cause: the optimizer follows the schedule `decay`; a float would end the decay.
    assert "built on the learning-rate schedule `decay`" in explanation
    assert "would end the decay" in explanation and "compile the model again" in explanation
    fix = fix_of(explanation)
    assert fix == (
        "sgd_opt = keras.optimizers.SGD(learning_rate="
        "keras.optimizers.schedules.ExponentialDecay(0.01, 100, 0.9))"
    )
    runs_cleanly(kernel, fix + '\ntuned.compile(optimizer=sgd_opt, loss="mse")')
    # The new optimizer still decays, from the new rate.
    assert value_of(kernel, "float(sgd_opt.learning_rate)") == pytest.approx(0.01)
    assert value_of(kernel, "float(sgd_opt._learning_rate(100))") == pytest.approx(0.009)
    # The look-alike: an optimizer made with a float rate takes a new one, and is quiet.
    runs_cleanly(kernel, "plain = keras.optimizers.SGD(0.1)\nplain.learning_rate = 0.01")


def test_a_fix_using_tf_is_respelled_with_keras_ops_when_tf_is_not_imported(
    kernel: KernelSession,
) -> None:
    cell = (
        "word_table = keras.layers.Embedding(10, 4)\n"
        "token_ids = np.array([[1, 2, 12]])\n"
        "word_table(token_ids)"
    )
    error = failing(kernel, cell)
    fix = fix_of(error["explanation"])
    assert "tf." not in fix
    assert fix == "keras.layers.Embedding(int(keras.ops.max(token_ids)) + 1, 4)"
    runs_cleanly(kernel, cell.replace("keras.layers.Embedding(10, 4)", fix))


def test_a_fix_needing_tensorflow_names_its_import_first(kernel: KernelSession) -> None:
    cell = "int_counts = keras.ops.convert_to_tensor([1, 2, 3])\nhalves = int_counts * 0.5"
    error = failing(kernel, cell)
    explanation = error["explanation"]
    imports = re.search(r"run `([^`]+)` first: this notebook has no `tf`", explanation)
    assert imports is not None, explanation
    fix = fix_of(explanation)
    assert fix == "tf.cast(int_counts, tf.float32)"
    runs_cleanly(kernel, imports.group(1) + "\n" + cell.replace("int_counts * 0.5", f"{fix} * 0.5"))


def test_integer_labels_name_the_loss_the_learner_compiled(kernel: KernelSession) -> None:
    made = (
        "grades_x = np.random.rand(32, 4).astype('float32')\n"
        "grades_y = np.random.randint(0, 3, size=(32,))\n"
        "grader = keras.Sequential(\n"
        "    [keras.Input(shape=(4,)), layers.Dense(3, activation='softmax')]\n"
        ")\n"
        "grader.compile(optimizer='adam', loss='binary_crossentropy')"
    )
    runs_cleanly(kernel, made)
    cell = "grader.fit(grades_x, grades_y, epochs=1, verbose=0)"
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "`loss='binary_crossentropy'` (the model's compiled loss)" in explanation
    assert "categorical_crossentropy wants" not in explanation
    assert "`SparseCategoricalCrossentropy`" in explanation
    fix = fix_of(explanation)
    assert fix == "grader.compile(optimizer='adam', loss='sparse_categorical_crossentropy')"
    runs_cleanly(kernel, fix + "\n" + cell)


def test_numpy_refusing_token_lists_of_different_lengths(kernel: KernelSession) -> None:
    cell = "token_lists = [[3, 7, 2], [5, 1], [9, 4, 4, 8]]\ntoken_batch = np.array(token_lists)"
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert "`token_lists` holds rows of different lengths (rows of 2, 3, 4 items)" in explanation
    fix = fix_of(explanation)
    assert fix == "np.array(keras.utils.pad_sequences(token_lists, padding='post'))"
    runs_cleanly(kernel, cell.replace("np.array(token_lists)", fix))
    # Other NumPy errors in the same notebook are not the monitor's to explain.
    failing_plain = kernel.execute("np.ones(3) + np.ones(4)")
    assert failing_plain.reply["status"] == "error"
    assert checked_report(failing_plain)["error"] is None


def test_a_lookup_without_an_oov_index_given_an_unseen_value(kernel: KernelSession) -> None:
    made = 'town_lookup = layers.StringLookup(output_mode="one_hot", num_oov_indices=0)'
    cell = (
        f"{made}\n"
        'town_lookup.adapt(np.array(["north", "south", "north"]))\n'
        'print(town_lookup(np.array(["south", "east"])).shape)'
    )
    error = failing(kernel, cell)
    explanation = error["explanation"]
    assert error["course"]["section"] == "keras-model-api"
    assert f"`town_lookup` was made with `num_oov_indices=0` (line 1 of this cell: `{made}`)" in (
        explanation
    )
    assert 'the line gives it "east", which is not in its vocabulary' in explanation
    fix = fix_of(explanation)
    assert fix == 'town_lookup = layers.StringLookup(output_mode="one_hot")'
    runs_cleanly(kernel, cell.replace(made, fix))
    assert value_of(kernel, "list(town_lookup(np.array(['south', 'east'])).shape)") == [2, 3]
    # The look-alike: values the layer saw are quiet with num_oov_indices=0.
    runs_cleanly(kernel, cell.replace('"east"', '"north"'))
