"""Values of the wrong kind for the call (issue #25): a Python list mixing numbers and
strings given to ``tf.constant`` (``families_tensors.MIXED_TYPES``: each item's type by
position), and a lookup layer given the other kind of data
(``families_model_data.LOOKUP_DATA``: the layer and the data's dtype). Each fix runs in
the kernel; the same calls with data of one kind get no entry."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_list_mixing_numbers_and_strings(kernel: KernelSession) -> None:
    error = failing(kernel, 'prices = tf.constant([3, "four", 5.5])')
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert '`[3, "four", 5.5]` holds int at [0] and str at [1] and float at [2]' in text
    fix = fix_of(text)
    assert fix == 'prices = tf.constant(["3", "four", "5.5"])'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "prices.dtype.name") == "string"
    # Strings that spell numbers are written as numbers.
    fix = fix_of(failing(kernel, 'prices = tf.constant([3, "4", 5.5])')["explanation"])
    assert fix == "prices = tf.constant([3, 4, 5.5])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "prices.dtype.name") == "float32"
    # A name holding a flat list.
    runs_cleanly(kernel, 'row = [1, "b", 2]')
    error = failing(kernel, "cells = tf.constant(row)")
    text = error["explanation"]
    assert "`row` holds int at [0], [2] and str at [1]" in text
    fix = fix_of(text)
    assert fix == "cells = tf.constant([str(item) for item in row])"
    runs_cleanly(kernel, fix)
    # One type: no error, no entry.
    runs_cleanly(kernel, 'words = tf.constant(["3", "four"])\nnums = tf.constant([3, 4.5])')


def test_lookup_layers_given_the_other_kind_of_data(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """ids = np.array([[4, 7], [7, 9]])
names = np.array([["cat", "dog"], ["dog", "cow"]])
to_index = keras.layers.StringLookup(vocabulary=["cat", "dog"])
by_number = keras.layers.IntegerLookup(vocabulary=[4, 7])""",
    )
    error = failing(kernel, "coded = to_index(ids)")
    assert error["course"]["section"] == "preprocessing-adapt"
    text = error["explanation"]
    assert "`to_index` is a StringLookup layer: it maps strings to ids" in text
    assert "`ids` holds integers (int64)" in text
    assert "`tf.strings.as_string(ids)`" in text
    # The layer already has its vocabulary: the data is what must change, the layer is
    # not replaced by one adapted on this call's data.
    assert "already learned a vocabulary of 2 strings (such as 'cat', 'dog')" in text
    assert "Fix: " not in text
    # Adapted on the other kind of data: the layer that maps it, adapted on it.
    error = failing(kernel, "fresh_index = keras.layers.StringLookup()\nfresh_index.adapt(ids)")
    made, adapted = fix_spans(error["explanation"])
    assert (made, adapted) == (
        "fresh_index = keras.layers.IntegerLookup()",
        "fresh_index.adapt(ids)",
    )
    runs_cleanly(kernel, f"{made}\n{adapted}\ncoded = fresh_index(ids)")
    # Every id is in the adapted vocabulary: none is the out-of-vocabulary index 0.
    assert value_of(kernel, "sorted(set(coded.numpy().ravel().tolist()))") == [1, 2, 3]
    error = failing(kernel, "coded = by_number(names)")
    text = error["explanation"]
    assert "`by_number` is an IntegerLookup layer: it maps integers to ids" in text
    assert "`names` holds strings" in text
    assert "already learned a vocabulary of 2 integers (such as 4, 7)" in text
    error = failing(kernel, "word_index = keras.layers.IntegerLookup()\nword_index.adapt(names)")
    made, adapted = fix_spans(error["explanation"])
    assert made == "word_index = keras.layers.StringLookup()"
    runs_cleanly(kernel, f"{made}\n{adapted}\ncoded = word_index(names)")
    # The matching kinds: no entry.
    runs_cleanly(
        kernel,
        'fine = keras.layers.StringLookup(vocabulary=["cat", "dog"])(names)\n'
        "fine_ids = keras.layers.IntegerLookup(vocabulary=[4, 7])(ids)",
    )


def fix_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])


def test_a_dataset_whose_labels_have_an_unknown_rank(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """pts = np.random.rand(32, 3).astype("float32")
flags = (pts.sum(axis=1) > 1.5).astype("float32")
judge = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1, activation="sigmoid")])
judge.compile(optimizer="adam", loss="binary_crossentropy")
def as_is(t):
    return t
wrapped = tf.data.Dataset.from_tensor_slices((pts, flags)).map(
    lambda a, b: (a, tf.py_function(as_is, [b], tf.float32))).batch(8)""",
    )
    error = failing(kernel, "judge.fit(wrapped, epochs=1, verbose=0)")
    assert error["course"]["section"] == "tf-data"
    text = error["explanation"]
    assert "The labels of `wrapped` have an unknown rank" in text
    assert "the labels should be (None, 1) like the model's output" in text
    assert "single examples" not in text  # the dataset is batched: no batch is missing
    # The failed fit left its training step half-built: the fix compiles again first.
    compiled, fix = fix_spans(text)
    assert compiled == 'judge.compile(optimizer="adam", loss="binary_crossentropy")'
    assert fix == (
        "judge.fit(wrapped.map(lambda features, labels: (features, tf.reshape(labels, "
        "[-1, 1]))), epochs=1, verbose=0)"
    )
    runs_cleanly(kernel, f"{compiled}\n{fix}")
    # The shape given back inside the map (the labels' shape of the fixed fit, so that
    # Keras reuses its training step): no error, no entry.
    runs_cleanly(
        kernel,
        """shaped = tf.data.Dataset.from_tensor_slices((pts, flags)).map(
    lambda a, b: (a, tf.ensure_shape(tf.py_function(as_is, [b[None]], tf.float32), (1,)))).batch(8)
judge.fit(shaped, epochs=1, verbose=0)""",
    )


def test_labels_as_a_list_for_a_model_of_one_output(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """pts = np.random.rand(32, 3).astype("float32")
flags = (pts.sum(axis=1) > 1.5).astype("float32")
scorer = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1, activation="sigmoid")])
scorer.compile(optimizer="adam", loss="binary_crossentropy")""",
    )
    error = failing(kernel, "scorer.evaluate(pts, [flags, flags], verbose=0)")
    assert error["course"]["section"] == "labels-and-loss"
    text = error["explanation"]
    assert "`scorer` has one output, (None, 1), so `evaluate` takes one array of labels" in text
    assert "`[flags, flags]` is a list of 2 label arrays" in text
    fix = fix_of(text)
    assert fix == "scorer.evaluate(pts, flags, verbose=0)"
    runs_cleanly(kernel, fix)
    error = failing(kernel, "scorer.evaluate(pts, list(flags), verbose=0)")
    text = error["explanation"]
    assert "`list(flags)` is a Python list of numbers, not an array" in text
    assert fix_of(text) == "scorer.evaluate(pts, flags, verbose=0)"
    # A model of two outputs takes a list of two label arrays: no error, no entry.
    runs_cleanly(
        kernel,
        """entry = keras.Input(shape=(3,))
pair = keras.Model(entry, [keras.layers.Dense(1)(entry), keras.layers.Dense(1)(entry)])
pair.compile(optimizer="adam", loss=["mse", "mse"])
pair.evaluate(pts, [flags, flags], verbose=0)""",
    )


def test_a_float_added_to_an_integer_variable_makes_the_variable_float(
    kernel: KernelSession,
) -> None:
    # Casting the loss to int32 would run and add 0 every time: the variable is the
    # mistake (created from 0, an integer).
    cell = (
        "loss_sum = tf.Variable(0)\nbatch_loss = tf.constant(0.25)\nloss_sum.assign_add(batch_loss)"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "Casting `batch_loss` to int32 would drop its fraction" in text
    fix = fix_of(text)
    assert fix == "loss_sum = tf.Variable(0.0)"
    runs_cleanly(kernel, cell.replace("loss_sum = tf.Variable(0)", fix))
    assert value_of(kernel, "float(loss_sum)") == 0.25
    # An int tensor added to a float variable is cast, as before.
    cell = "total = tf.Variable(0.0)\ncount = tf.constant(3)\ntotal.assign_add(count)"
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == "total.assign_add(tf.cast(count, tf.float32))"


TAGGER = """tagger = keras.Sequential([
    keras.Input((12,), dtype="int32"),
    keras.layers.Embedding(50, 8),
    keras.layers.GlobalAveragePooling1D(),
    keras.layers.Dense(1, activation="sigmoid"),
])
tokens = [3, 14, 7, 9]
"""


def test_one_sentence_of_ids_given_to_a_model_of_batches(kernel: KernelSession) -> None:
    # The list is ONE example: an array of it alone would fail again (no batch axis, 4
    # ids where the model takes 12), so the fix is a padded batch of one.
    runs_cleanly(kernel, TAGGER)
    for written in ("tokens", "np.array(tokens)"):
        error = failing(kernel, f"score = tagger.predict({written}, verbose=0)")
        fix = fix_of(error["explanation"])
        assert fix == (
            f'tagger.predict(keras.utils.pad_sequences([{written}], maxlen=12, padding="post"),'
            " verbose=0)"
        ), error["explanation"]
        runs_cleanly(kernel, f"score = {fix}")
        assert value_of(kernel, "list(score.shape)") == [1, 1]
    # Look-alike: a padded batch of one is what the model takes.
    runs_cleanly(kernel, "score = tagger.predict(np.array([tokens + [0] * 8]), verbose=0)")


def test_a_count_divided_with_slash_into_an_integer_variable(kernel: KernelSession) -> None:
    # `/` always gives floats: the counter stays an integer with `//`, cast to its dtype.
    cell = (
        "epoch_count = tf.Variable(0, dtype=tf.int64)\nseen = tf.constant(256)\n"
        "epoch_count.assign_add(seen / 128)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "divides with `/`, which always gives a float" in text
    fix = fix_of(text)
    assert fix == "epoch_count.assign_add(tf.cast(seen // 128, tf.int64))"
    runs_cleanly(kernel, cell.replace("epoch_count.assign_add(seen / 128)", fix))
    assert value_of(kernel, "int(epoch_count)") == 2
    # A float loss into a variable made with dtype=int64: making it float needs the
    # learner's choice of dtype, so no creation fix is printed.
    cell = "loss_total = tf.Variable(0, dtype=tf.int64)\nloss_total.assign_add(tf.constant(0.25))"
    text = failing(kernel, cell)["explanation"]
    assert "would drop its fraction" in text and "Fix:" not in text
