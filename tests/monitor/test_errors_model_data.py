"""What a model's fit/predict or a layer's adapt was given (issue #25, raising cells judges
saw explained only by the generic entry): validation_data that is not an (x, y) pair,
text given to a model of ids (and ids to a model that starts with its text layer), string
labels, Python lists, adapt on (text, label) pairs, data with another number of features
than the model's input. Each entry names the call and its values, and its fix runs in the
kernel; the correct cell beside it gets no entry (``errors/families_model_data.py``)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

TABULAR = """x_train = np.random.rand(60, 4).astype("float32")
y_train = (x_train.sum(axis=1) > 2).astype("int32")
x_val = np.random.rand(20, 4).astype("float32")
y_val = (x_val.sum(axis=1) > 2).astype("int32")
clf = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="relu"),
                        keras.layers.Dense(1, activation="sigmoid")])
clf.compile(optimizer="adam", loss="binary_crossentropy")
"""

TEXT = """reviews = ["a good movie", "bad film", "great acting", "awful plot"]
stars = np.array([1, 0, 1, 0])
vectorize_layer = keras.layers.TextVectorization(max_tokens=50, output_sequence_length=5)
vectorize_layer.adapt(reviews)
reviews_ds = tf.data.Dataset.from_tensor_slices((reviews, stars)).batch(2)
ids_ds = reviews_ds.map(lambda text, label: (vectorize_layer(text), label))
sentiment = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Embedding(50, 4),
                              keras.layers.GlobalAveragePooling1D(),
                              keras.layers.Dense(1, activation="sigmoid")])
sentiment.compile(optimizer="adam", loss="binary_crossentropy")
sentiment.fit(ids_ds, epochs=1, verbose=0)
"""


@pytest.mark.parametrize("written", ["(x_val)", "(x_val,)"])
def test_validation_data_without_labels(kernel: KernelSession, written: str) -> None:
    runs_cleanly(kernel, TABULAR)
    cell = f"clf.fit(x_train, y_train, epochs=1, verbose=0, validation_data={written})"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "keras-validation-data"
    text = error["explanation"]
    assert "`validation_data` takes a pair `(features, labels)`" in text
    assert ("parentheses without a comma" in text) == (written == "(x_val)")
    assert "fit trains the first epoch" in text
    fix = fix_of(text)
    assert fix == "clf.fit(x_train, y_train, epochs=1, verbose=0, validation_data=(x_val, y_val))"
    runs_cleanly(kernel, f"log = {fix}")
    assert value_of(kernel, "sorted(log.history)") == ["loss", "val_loss"]
    # Keras 3.15 takes a list [x_val, y_val] as the pair: no entry.
    runs_cleanly(kernel, "clf.fit(x_train, y_train, verbose=0, validation_data=[x_val, y_val])")


def test_validation_data_pair_with_wrong_labels_is_not_this_family(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TABULAR)
    error = failing(
        kernel,
        "clf.fit(x_train, y_train, verbose=0, validation_data=(x_val, y_val[:5]))",
    )
    assert "takes a pair" not in error["explanation"]
    # Training data that fails first is explained as such, even beside a 1-tuple.
    error = failing(kernel, "clf.fit(x_train, y_train[:10], verbose=0, validation_data=(x_val,))")
    text = error["explanation"]
    assert "takes a pair" not in text
    assert "`x_train` holds 60 examples and `y_train[:10]` 10" in text


def test_validation_dataset_of_features_alone(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TABULAR)
    error = failing(
        kernel,
        "val_ds = tf.data.Dataset.from_tensor_slices(x_val).batch(8)\n"
        "clf.fit(x_train, y_train, epochs=1, verbose=0, validation_data=val_ds)",
    )
    text = error["explanation"]
    assert "each element of `val_ds` is one tensor: features alone" in text
    assert "from_tensor_slices((features, labels))" in text


def test_text_given_to_a_model_of_ids(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TEXT)
    for given in ('["what a movie", "so bad"]', 'np.array(["what a movie", "so bad"])'):
        error = failing(kernel, f"sentiment.predict({given}, verbose=0)")
        assert error["course"]["section"] == "preprocessing-adapt"
        text = error["explanation"]
        assert "`sentiment` takes numbers (inputs of shape (None, 5)" in text
        assert "`vectorize_layer`, the TextVectorization layer in this notebook" in text
        fix = fix_of(text)
        assert fix == f"sentiment.predict(vectorize_layer(tf.constant({given})), verbose=0)"
        runs_cleanly(kernel, f"scores = {fix}")
        assert value_of(kernel, "list(scores.shape)") == [2, 1]
    # A string tensor to a call of the model.
    error = failing(kernel, 'sentiment(tf.constant(["what a movie"]))')
    fix = fix_of(error["explanation"])
    assert fix == 'sentiment(vectorize_layer(tf.constant(["what a movie"])))'
    runs_cleanly(kernel, fix)


def test_ids_given_to_a_model_that_starts_with_its_vectorizer(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TEXT)
    build = """end_to_end = keras.Sequential([keras.Input(shape=(1,), dtype="string"),
                              vectorize_layer, keras.layers.Embedding(50, 4),
                              keras.layers.GlobalAveragePooling1D(),
                              keras.layers.Dense(1, activation="sigmoid")])
end_to_end.compile(optimizer="adam", loss="binary_crossentropy")
review_ids = vectorize_layer(tf.constant(reviews))
"""
    runs_cleanly(kernel, build)
    error = failing(kernel, "end_to_end.predict(review_ids, verbose=0)")
    text = error["explanation"]
    assert "`end_to_end` starts with `vectorize_layer` (TextVectorization)" in text
    assert "`review_ids = vectorize_layer(tf.constant(reviews))` made them" in text
    fix = fix_of(text)
    assert fix == "end_to_end.predict(tf.constant(reviews), verbose=0)"
    runs_cleanly(kernel, fix)


def test_string_labels_and_python_lists(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TABULAR)
    runs_cleanly(
        kernel,
        """kinds = keras.Sequential([keras.Input(shape=(4,)),
                             keras.layers.Dense(2, activation="softmax")])
kinds.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
names = np.array(["cat", "dog"] * 30)""",
    )
    error = failing(kernel, "kinds.fit(x_train, names, epochs=1, verbose=0)")
    assert error["course"]["section"] == "labels-and-loss"
    fix = fix_of(error["explanation"])
    assert (
        fix == "kinds.fit(x_train, np.unique(names, return_inverse=True)[1], epochs=1, verbose=0)"
    )
    runs_cleanly(kernel, fix)
    error = failing(kernel, "one_hot = keras.utils.to_categorical(names)")
    fix = fix_of(error["explanation"])
    assert fix == "keras.utils.to_categorical(np.unique(names, return_inverse=True)[1])"
    runs_cleanly(kernel, f"one_hot = {fix}")
    assert value_of(kernel, "list(one_hot.shape)") == [60, 2]
    error = failing(kernel, "clf.predict([[0.1, 0.2, 0.3, 0.4]], verbose=0)")
    assert "is a Python list of 1 lists of 4 numbers" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "clf.predict(np.array([[0.1, 0.2, 0.3, 0.4]]), verbose=0)"
    runs_cleanly(kernel, fix)


def test_adapt_on_text_label_pairs(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TEXT)
    cell = "words = keras.layers.TextVectorization(max_tokens=50)\nwords.adapt(reviews_ds)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "preprocessing-adapt"
    text = error["explanation"]
    assert "each element of `reviews_ds` is a tuple of 2 ((None,) string, (None,) int64" in text
    assert "Pack" not in text.split("raised InvalidArgumentError.", 1)[1]
    fix = fix_of(text)
    assert fix == "words.adapt(reviews_ds.map(lambda text, label: text))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "words.vocabulary_size() > 5") is True
    # A dataset of text alone adapts: no entry.
    runs_cleanly(kernel, "words.adapt(tf.data.Dataset.from_tensor_slices(reviews).batch(2))")


def test_refit_with_a_column_added(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TABULAR + "clf.fit(x_train, y_train, epochs=1, verbose=0)")
    cell = (
        "x_more = np.hstack([x_train, np.ones((60, 1), dtype='float32')])\n"
        "clf.fit(x_more, y_train, epochs=1, verbose=0)"
    )
    error = failing(kernel, cell)
    assert error["course"]["section"] == "batch-dimension"
    text = error["explanation"]
    assert "`clf` declares inputs (None, 4), 4 features per example" in text
    assert "`x_more` is (60, 5), 5 features" in text
    assert "matmul" not in text
    fix = fix_of(text)
    assert fix == "keras.Input(shape=(5,))"
    rebuilt = TABULAR.replace("keras.Input(shape=(4,))", fix)
    runs_cleanly(kernel, rebuilt + "clf.fit(x_more, y_train, epochs=1, verbose=0)")
    # The same data shape as declared: no entry.
    runs_cleanly(kernel, "clf.predict(x_more, verbose=0)")


def test_a_functional_model_built_in_the_cell_declares_the_data_features(
    kernel: KernelSession,
) -> None:
    cell = """inputs = keras.Input(shape=(4,))
reg = keras.Model(inputs, keras.layers.Dense(1)(inputs))
reg.compile(optimizer="adam", loss="mse")
reg.fit(np.random.rand(10, 6), np.random.rand(10), epochs=1, verbose=0)"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "built in this cell from `keras.Input(shape=(4,))`" in text
    fix = fix_of(text)
    assert fix == "keras.Input(shape=(6,))"
    runs_cleanly(kernel, cell.replace("keras.Input(shape=(4,))", fix))


def test_numbers_written_as_strings(kernel: KernelSession) -> None:
    cell = 'ages = tf.constant(["21", "35"])\nnext_year = ages + 1'
    error = failing(kernel, cell)
    assert error["course"]["section"] == "dtype-casting"
    fix = fix_of(error["explanation"])
    assert fix == "tf.strings.to_number(ages, out_type=tf.int32) + 1"
    runs_cleanly(kernel, f"ages = tf.constant(['21', '35'])\nnext_year = {fix}")
    assert value_of(kernel, "next_year.numpy().tolist()") == [22, 36]


PAIRS = """feats = np.random.rand(32, 3).astype("float32")
extra = np.random.rand(32, 2).astype("float32")
target = feats.sum(axis=1, keepdims=True)
head = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
"""


def test_gradients_alone_to_apply_gradients(kernel: KernelSession) -> None:
    runs_cleanly(kernel, PAIRS + "opt = keras.optimizers.SGD(0.1)")
    cell = """with tf.GradientTape() as tape:
    loss = tf.reduce_mean((head(feats) - target) ** 2)
grads = tape.gradient(loss, head.trainable_variables)
opt.apply_gradients(grads)"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "custom-train-step"
    text = error["explanation"]
    assert "`grads` holds the gradients alone (2 tensors)" in text
    fix = fix_of(text)
    assert fix == "opt.apply_gradients(zip(grads, head.trainable_variables))"
    runs_cleanly(kernel, cell.replace("opt.apply_gradients(grads)", fix))
    assert value_of(kernel, "int(opt.iterations.numpy())") == 1


def test_gradient_of_an_integer_variable(kernel: KernelSession) -> None:
    cell = """scale = tf.Variable(3)
with tf.GradientTape() as tape:
    loss = scale * scale
g = tape.gradient(loss, scale)
step = g * 0.1"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`scale` is an int32 variable" in text
    assert "rebound" not in text
    fix = fix_of(text)
    assert fix == "scale = tf.Variable(3.0)"
    runs_cleanly(kernel, cell.replace("scale = tf.Variable(3)", fix))
    assert value_of(kernel, "float(step.numpy())") == pytest.approx(0.6)


def test_data_for_a_model_of_named_or_several_inputs(kernel: KernelSession) -> None:
    runs_cleanly(kernel, PAIRS)
    runs_cleanly(
        kernel,
        """size_in = keras.Input(shape=(3,), name="sizes")
named = keras.Model(size_in, keras.layers.Dense(1)(size_in))
named.compile(optimizer="adam", loss="mse")
wide_in = keras.Input(shape=(2,))
both = keras.Model([size_in, wide_in],
                   keras.layers.Dense(1)(keras.layers.Concatenate()([size_in, wide_in])))""",
    )
    error = failing(kernel, 'named.fit({"size": feats}, target, epochs=1, verbose=0)')
    assert error["course"]["section"] == "functional-api"
    text = error["explanation"]
    assert 'run `named.compile(optimizer="adam", loss="mse")` again first' in text
    fix = fix_of(text)
    assert fix == 'named.fit({"sizes": feats}, target, epochs=1, verbose=0)'
    runs_cleanly(kernel, f'named.compile(optimizer="adam", loss="mse")\n{fix}')
    error = failing(kernel, "both.predict(feats, verbose=0)")
    text = error["explanation"]
    assert "`both` has 2 inputs, (None, 3), (None, 2)" in text
    fix = fix_of(text)
    assert fix == "both.predict([feats, extra], verbose=0)"
    runs_cleanly(kernel, fix)


def test_a_dataset_of_flat_triples_for_a_model_of_two_inputs(kernel: KernelSession) -> None:
    setup = """users = np.arange(12) % 4
items = np.arange(12) % 3
ratings = np.linspace(0.0, 1.0, 12).astype("float32")
user_in, item_in = keras.Input((1,), name="user"), keras.Input((1,), name="item")
joined = keras.layers.Concatenate()([user_in, item_in])
recommender = keras.Model([user_in, item_in], keras.layers.Dense(1)(joined))
recommender.compile(optimizer="adam", loss="mse")
rated = tf.data.Dataset.from_tensor_slices((users, items, ratings)).batch(4)
"""
    runs_cleanly(kernel, setup)
    error = failing(kernel, "recommender.fit(rated, epochs=1, verbose=0)")
    assert error["course"]["section"] == "functional-api"
    text = error["explanation"]
    # The cause: a flat tuple is (inputs, labels, sample weights) to Keras.
    assert "(inputs, labels, sample weights)" in text
    assert "`items` as labels and `ratings` as sample weights" in text
    fix = fix_of(text)
    assert fix == (
        "recommender.fit(rated.map(lambda users, items, ratings: ((users, items), ratings)), "
        "epochs=1, verbose=0)"
    )
    runs_cleanly(kernel, f'recommender.compile(optimizer="adam", loss="mse")\nhistory = {fix}')
    assert value_of(kernel, "len(history.history['loss'])") == 1
    # The look-alike: the same triples already nested are quiet.
    runs_cleanly(
        kernel,
        "nested = tf.data.Dataset.from_tensor_slices(((users, items), ratings)).batch(4)\n"
        "recommender.fit(nested, epochs=1, verbose=0)",
    )


def test_a_list_of_single_examples_is_stacked(kernel: KernelSession) -> None:
    runs_cleanly(kernel, PAIRS)
    error = failing(kernel, "head.predict([feats[0], feats[1]], verbose=0)")
    text = error["explanation"]
    assert "a Python list of 2 single examples" in text
    assert "expand_dims" not in text
    fix = fix_of(text)
    assert fix == "head.predict(np.stack([feats[0], feats[1]]), verbose=0)"
    runs_cleanly(kernel, f"two_rows = {fix}")
    assert value_of(kernel, "list(two_rows.shape)") == [2, 1]


def test_dataset_parts_of_different_lengths(kernel: KernelSession) -> None:
    runs_cleanly(kernel, PAIRS)
    error = failing(kernel, "pairs = tf.data.Dataset.from_tensor_slices((feats, target[:20]))")
    assert error["course"]["section"] == "tf-data"
    text = error["explanation"]
    assert "`feats` has 32 rows and `target[:20]` 20" in text
    fix = fix_of(text)
    assert fix == "tf.data.Dataset.from_tensor_slices((feats[:20], target[:20]))"
    runs_cleanly(kernel, f"pairs = {fix}")
    # Parts of one length: no entry.
    runs_cleanly(kernel, "pairs = tf.data.Dataset.from_tensor_slices((feats, target))")
    # A dict of parts.
    error = failing(
        kernel, 'by_key = tf.data.Dataset.from_tensor_slices({"f": feats, "e": extra[:8]})'
    )
    fix = fix_of(error["explanation"])
    assert fix == 'tf.data.Dataset.from_tensor_slices({"f": feats[:8], "e": extra[:8]})'
    runs_cleanly(kernel, f"by_key = {fix}")


def test_a_dataset_of_raw_text_given_to_a_model_of_ids(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TEXT)
    runs_cleanly(
        kernel,
        """fresh = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Embedding(50, 4),
                          keras.layers.GlobalAveragePooling1D(),
                          keras.layers.Dense(1, activation="sigmoid")])
fresh.compile(optimizer="adam", loss="binary_crossentropy")""",
    )
    error = failing(kernel, "fresh.fit(reviews_ds, epochs=1, verbose=0)")
    assert error["course"]["section"] == "preprocessing-adapt"
    text = error["explanation"]
    assert "Each element of `reviews_ds` is (text, label)" in text
    assert "batch it" not in text
    assert 'run `fresh.compile(optimizer="adam", loss="binary_crossentropy")` again first' in text
    fix = fix_of(text)
    assert fix == (
        "fresh.fit(reviews_ds.map(lambda text, label: (vectorize_layer(text), label)), "
        "epochs=1, verbose=0)"
    )
    runs_cleanly(kernel, f'fresh.compile(optimizer="adam", loss="binary_crossentropy")\n{fix}')


def test_whole_floats_and_integer_variables(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TABULAR)
    error = failing(kernel, "clf.fit(x_train, y_train, epochs=1, verbose=0, batch_size=16.0)")
    assert error["course"]["section"] == "dtype-casting"
    fix = fix_of(error["explanation"])
    assert fix == "clf.fit(x_train, y_train, epochs=1, verbose=0, batch_size=16)"
    runs_cleanly(kernel, fix)
    error = failing(kernel, "clf.fit(x_train, y_train, epochs=2.0, verbose=0)")
    fix = fix_of(error["explanation"])
    assert fix == "clf.fit(x_train, y_train, epochs=2, verbose=0)"
    runs_cleanly(kernel, fix)
    cell = "total = tf.Variable(0)\ntotal.assign_add(0.5)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`total = tf.Variable(0)`, in this cell" in text
    fix = fix_of(text)
    assert fix == "total = tf.Variable(0.0)"
    runs_cleanly(kernel, cell.replace("total = tf.Variable(0)", fix))
    assert value_of(kernel, "float(total.numpy())") == 0.5


def test_a_join_without_its_axis(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TABULAR)
    error = failing(kernel, "both = tf.concat([x_train, x_val])")
    assert error["course"]["section"] == "joining-indexing"
    text = error["explanation"]
    assert "`tf.concat(values, axis)` needs `axis`" in text
    fix = fix_of(text)
    assert fix == "tf.concat([x_train, x_val], axis=0)"
    runs_cleanly(kernel, f"both = {fix}")
    assert value_of(kernel, "list(both.shape)") == [80, 4]


def test_columns_as_a_dict_for_a_model_of_one_input(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TABULAR)
    cell = """columns = {"a": x_train[:, 0], "b": x_train[:, 1],
           "c": x_train[:, 2], "d": x_train[:, 3]}
table_ds = tf.data.Dataset.from_tensor_slices((columns, y_train)).batch(8)
clf.fit(table_ds, epochs=1, verbose=0)"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "tf-data"
    text = error["explanation"]
    assert "Each element of `table_ds` is (a dict of 4 named columns, label)" in text
    assert 'run `clf.compile(optimizer="adam", loss="binary_crossentropy")` again first' in text
    fix = fix_of(text)
    assert fix == (
        "clf.fit(table_ds.map(lambda features, label: (tf.stack([features['a'], "
        "features['b'], features['c'], features['d']], axis=-1), label)), epochs=1, verbose=0)"
    )
    runs_cleanly(kernel, f'clf.compile(optimizer="adam", loss="binary_crossentropy")\n{fix}')


def test_a_map_function_on_a_dataset_built_on_the_line(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TABULAR)
    cell = "doubled = tf.data.Dataset.from_tensor_slices((x_train, y_train)).map(lambda x: x * 2)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "tf-data"
    fix = fix_of(error["explanation"])
    assert fix == (
        "tf.data.Dataset.from_tensor_slices((x_train, y_train)).map(lambda x, y: (x * 2, y))"
    )
    runs_cleanly(kernel, f"doubled = {fix}")


def test_tensors_and_numbers_of_the_wrong_kind(kernel: KernelSession) -> None:
    cell = """w0 = 3.0
with tf.GradientTape() as tape:
    out = w0 * w0
slope = tape.gradient(out, w0)"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "gradient-tape"
    text = error["explanation"]
    assert "`w0` is the Python float 3.0" in text
    fix = fix_of(text)
    assert fix == "w0 = tf.Variable(3.0)"
    runs_cleanly(kernel, cell.replace("w0 = 3.0", fix))
    assert value_of(kernel, "float(slope.numpy())") == 6.0
    cell = "weights = tf.Variable([1.0, 2.0])\nweights.assign(tf.constant([1, 2]))"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert "`weights` is float32, and `tf.constant([1, 2])` is an int32 tensor" in text
    fix = fix_of(text)
    assert fix == "weights.assign(tf.cast(tf.constant([1, 2]), tf.float32))"
    runs_cleanly(kernel, fix)
    # Rows of arrays of different lengths: the ragged tensor replaces tf.constant.
    cell = "rows = [np.ones(3), np.ones(4)]\nbatch = tf.constant(rows)"
    error = failing(kernel, cell)
    fix = fix_of(error["explanation"])
    assert fix == "tf.ragged.constant(rows)"
    runs_cleanly(kernel, f"rows = [np.ones(3), np.ones(4)]\nbatch = {fix}")
