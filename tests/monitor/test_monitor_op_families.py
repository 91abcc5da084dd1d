"""Error families of single ops and of data handed to Keras (issue #25): each error gets
an entry naming the user's operands with their shapes and dtypes and the rule broken;
the printed fix, run in the kernel, makes the error go away; a correct look-alike gives
no error entry. Our own learner cells, in one kernel for the module."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)
JOINING = "joining-indexing"


def explained(kernel: KernelSession, cell: str, section: str, *said: str) -> str:
    """The entry of a failing cell: its section, and every phrase of ``said`` in it."""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == section, text
    for phrase in said:
        assert phrase in text, (phrase, text)
    return text


# ------------------------------------------------------------------ concat and stack
def test_concat_names_both_shapes_the_axis_and_joins_where_they_differ(
    kernel: KernelSession,
) -> None:
    cell = (
        "left_half = tf.ones((6, 2))\nright_half = tf.ones((7, 2))\n"
        "joined = tf.concat([left_half, right_half], axis=1)"
    )
    text = explained(
        kernel,
        cell,
        JOINING,
        "along axis 1",
        "`left_half` is (6, 2) and `right_half` is (7, 2)",
        "axis 0 differs (6 vs 7)",
    )
    fix = fix_of(text)
    assert fix == "tf.concat([left_half, right_half], axis=0)"
    runs_cleanly(kernel, cell.replace("tf.concat([left_half, right_half], axis=1)", fix))
    # The look-alike: the same call on tensors whose other axes agree.
    runs_cleanly(kernel, "joined = tf.concat([tf.ones((6, 2)), tf.ones((6, 5))], axis=1)")


def test_concat_of_another_rank_squeezes_the_extra_axis(kernel: KernelSession) -> None:
    cell = (
        "feat_a = tf.ones((3, 4))\nfeat_b = tf.ones((3, 4, 1))\n"
        "both = tf.concat([feat_a, feat_b], 0)"
    )
    text = explained(kernel, cell, JOINING, "2 axes against 3", "`feat_b` has an extra axis")
    fix = fix_of(text)
    assert fix == "tf.concat([feat_a, tf.squeeze(feat_b, axis=2)], 0)"
    runs_cleanly(kernel, cell.replace("tf.concat([feat_a, feat_b], 0)", fix))


def test_stack_of_different_lengths_names_each_item(kernel: KernelSession) -> None:
    cell = "pieces = [tf.range(2), tf.range(5)]\npile = tf.stack(pieces)"
    text = explained(
        kernel, cell, JOINING, "`pieces[0]` is (2,) and `pieces[1]` is (5,)", "axis 0 (2 vs 5)"
    )
    fix = fix_of(text)
    assert fix == "tf.ragged.stack(pieces)"
    runs_cleanly(kernel, cell.replace("tf.stack(pieces)", fix))
    runs_cleanly(kernel, "pile = tf.stack([tf.range(5), tf.range(5)])")


def test_a_list_of_different_shapes_packed_by_another_call(kernel: KernelSession) -> None:
    """``tf.reduce_sum([t2, t3])`` packs the list into one tensor as ``tf.stack`` does: the
    entry names the list, each tensor's shape, and sums each tensor separately; a list
    whose tensors differ on one axis is joined along it."""
    cell = "t2 = tf.ones((2, 3)); t3 = tf.ones((3, 2)); s = tf.reduce_sum([t2, t3])"
    text = explained(
        kernel, cell, JOINING, "given the list `[t2, t3]`", "`t2` is (2, 3) and `t3` is (3, 2)"
    )
    assert "refused" not in text, text
    fix = fix_of(text)
    assert fix == "s = tf.reduce_sum(t2) + tf.reduce_sum(t3)"
    runs_cleanly(kernel, fix + "\nassert float(s) == 12.0")
    runs_cleanly(kernel, "s = tf.reduce_sum([t2, t2])")
    cell = "a = tf.ones((2, 3)); b = tf.ones((4, 3)); top = tf.reduce_max([a, b])"
    text = explained(kernel, cell, JOINING, "`a` is (2, 3) and `b` is (4, 3)")
    fix = fix_of(text)
    assert fix == "tf.reduce_max(tf.concat([a, b], axis=0))"
    runs_cleanly(kernel, f"top = {fix}\nassert top.shape == ()")


# ------------------------------------------------------------------ indexes out of range
def test_embedding_index_past_input_dim(kernel: KernelSession) -> None:
    cell = (
        "tokens = tf.constant([[3, 8, 15]])\nlookup = keras.layers.Embedding(12, 6)\n"
        "vectors = lookup(tokens)"
    )
    text = explained(
        kernel, cell, JOINING, "input_dim=12", "`tokens` holds index 15", "largest index + 1"
    )
    fix = fix_of(text)
    assert fix == "keras.layers.Embedding(int(tf.reduce_max(tokens)) + 1, 6)"
    runs_cleanly(kernel, cell.replace("keras.layers.Embedding(12, 6)", fix))


def test_embedding_index_past_input_dim_in_fit(kernel: KernelSession) -> None:
    cell = (
        "word_ids = np.array([[1, 2, 19]] * 4)\n"
        "tagger = keras.Sequential([keras.Input((3,), dtype='int32'), "
        "keras.layers.Embedding(16, 2), keras.layers.Flatten(), keras.layers.Dense(1)])\n"
        "tagger.compile('sgd', 'mse')\ntagger.fit(word_ids, np.zeros(4), verbose=0)"
    )
    text = explained(kernel, cell, JOINING, "input_dim=16", "`word_ids` holds index 19")
    fix = fix_of(text)
    assert fix == "keras.layers.Embedding(int(tf.reduce_max(word_ids)) + 1, 2)"
    runs_cleanly(kernel, cell.replace("keras.layers.Embedding(16, 2)", fix))
    runs_cleanly(kernel, cell.replace("19", "15"))


def test_embedding_fed_a_dataset_is_sized_by_the_vocabulary(kernel: KernelSession) -> None:
    """The ids come in a dataset: ``reduce_max`` cannot read it, so the fix sizes the
    Embedding by the vocabulary layer that made the ids."""
    cell = (
        "words = keras.layers.TextVectorization(max_tokens=30, output_sequence_length=4)\n"
        'words.adapt(["a b c d e f g h", "i j k l m n"])\n'
        'texts_ds = tf.data.Dataset.from_tensor_slices((words(["h g f e", "n m l k"]), '
        "[0.0, 1.0])).batch(2)\n"
        "reader = keras.Sequential([keras.Input((4,), dtype='int64'), "
        "keras.layers.Embedding(5, 2), keras.layers.Flatten(), keras.layers.Dense(1)])\n"
        "reader.compile('sgd', 'mse')\nreader.fit(texts_ds, verbose=0)"
    )
    text = explained(kernel, cell, JOINING, "input_dim=5")
    fix = fix_of(text)
    assert fix == "keras.layers.Embedding(words.vocabulary_size(), 2)"
    runs_cleanly(kernel, cell.replace("keras.layers.Embedding(5, 2)", fix))


def test_embedding_ids_written_in_the_line_ignore_an_unrelated_lookup_layer(
    kernel: KernelSession,
) -> None:
    """A StringLookup in the namespace that made none of these ids is not the vocabulary:
    the fix sizes the Embedding from the largest id written. One that made them is."""
    runs_cleanly(kernel, 'lk = keras.layers.StringLookup(vocabulary=["a", "b"])')
    cell = "emb = keras.layers.Embedding(10, 4); emb(tf.constant([[3, 12]]))"
    text = explained(kernel, cell, JOINING, "input_dim=10", "holds index 12")
    assert "lk" not in text, text
    fix = fix_of(text)
    assert fix == "keras.layers.Embedding(13, 4)"
    runs_cleanly(kernel, cell.replace("keras.layers.Embedding(10, 4)", fix))
    cell = (
        "coded = tf.data.Dataset.from_tensor_slices(([['a', 'b', 'zz']], [1.0]))"
        ".map(lambda t, y: (lk(t), y)).batch(1)\n"
        "tiny = keras.Sequential([keras.Input((3,), dtype='int64'), "
        "keras.layers.Embedding(2, 2), keras.layers.Flatten(), keras.layers.Dense(1)])\n"
        "tiny.compile('sgd', 'mse')\ntiny.fit(coded, verbose=0)"
    )
    text = explained(kernel, cell, JOINING, "input_dim=2")
    fix = fix_of(text)
    assert fix == "keras.layers.Embedding(lk.vocabulary_size(), 2)"
    runs_cleanly(kernel, cell.replace("keras.layers.Embedding(2, 2)", fix))


def test_gather_index_past_the_table(kernel: KernelSession) -> None:
    cell = "codes = tf.constant([10, 20, 30])\npicked = tf.gather(codes, [0, 3])"
    explained(kernel, cell, JOINING, "`codes`", "[0, 3)", "`[0, 3]` holds 3")
    runs_cleanly(kernel, "picked = tf.gather(tf.constant([10, 20, 30]), [0, 2])")


def test_index_past_the_end_of_a_tensor(kernel: KernelSession) -> None:
    cell = "weights_row = tf.ones(4)\nlast = weights_row[4]"
    explained(kernel, cell, JOINING, "`weights_row` has 4 entries on axis 0", "index 4")


# ------------------------------------------------------------------ dtypes of op arguments
def test_one_hot_of_float_labels(kernel: KernelSession) -> None:
    cell = "classes = tf.constant([2.0, 0.0])\nencoded = tf.one_hot(classes, 4)"
    text = explained(kernel, cell, "dtype-casting", "`classes` is float")
    fix = fix_of(text)
    assert fix == "tf.one_hot(tf.cast(classes, tf.int32), 4)"
    runs_cleanly(kernel, cell.replace("tf.one_hot(classes, 4)", fix))
    runs_cleanly(kernel, "encoded = tf.one_hot(tf.constant([2, 0]), 4)")


def test_a_float_depth_is_written_as_an_integer(kernel: KernelSession) -> None:
    cell = "ids = tf.constant([1, 0])\nencoded = tf.one_hot(ids, 5.0)"
    text = explained(kernel, cell, "dtype-casting", "wants an integer where 5.0 is given")
    fix = fix_of(text)
    assert fix == "tf.one_hot(ids, 5)"
    runs_cleanly(kernel, cell.replace("tf.one_hot(ids, 5.0)", fix))


def test_cast_of_strings_parses_them(kernel: KernelSession) -> None:
    cell = "digits = tf.constant(['4', '7'])\nnumbers = tf.cast(digits, tf.int64)"
    text = explained(kernel, cell, "dtype-casting", "`digits` holds strings")
    fix = fix_of(text)
    assert fix == "tf.strings.to_number(digits, out_type=tf.int64)"
    runs_cleanly(kernel, cell.replace("tf.cast(digits, tf.int64)", fix))
    runs_cleanly(kernel, "numbers = tf.cast(tf.constant([4.5, 7.0]), tf.int64)")


def test_softmax_cross_entropy_with_class_numbers(kernel: KernelSession) -> None:
    cell = (
        "raw = tf.random.normal((6, 4))\ntargets = tf.constant([1, 0, 3, 2, 2, 1])\n"
        "loss = tf.nn.softmax_cross_entropy_with_logits(labels=targets, logits=raw)"
    )
    text = explained(
        kernel,
        cell,
        "labels-and-loss",
        "`raw` (6, 4)",
        "`targets` is (6,) int32",
        "`tf.one_hot(targets, 4)`",
    )
    fix = fix_of(text)
    assert fix == "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=raw)"
    runs_cleanly(kernel, cell.replace(cell.splitlines()[-1], f"loss = {fix}"))
    runs_cleanly(
        kernel,
        cell.replace("labels=targets", "labels=tf.one_hot(targets, 4)"),
    )


# ------------------------------------------------------------------ top_k, transpose
def test_top_k_larger_than_the_last_axis(kernel: KernelSession) -> None:
    cell = "probs = tf.random.uniform((3, 4))\nbest = tf.math.top_k(probs, k=7)"
    text = explained(kernel, cell, JOINING, "4 entries in `probs` (3, 4)", "k = 7")
    fix = fix_of(text)
    assert fix == "tf.math.top_k(probs, k=min(7, probs.shape[-1]))"
    runs_cleanly(kernel, cell.replace("tf.math.top_k(probs, k=7)", fix))
    runs_cleanly(kernel, "best = tf.math.top_k(tf.random.uniform((3, 4)), k=4)")


def test_transpose_perm_of_another_length(kernel: KernelSession) -> None:
    cell = "grid = tf.ones((5, 6))\nflipped = tf.transpose(grid, perm=[2, 1, 0])"
    text = explained(kernel, cell, JOINING, "`grid` (5, 6)", "2 axes need 2 entries", "has 3")
    fix = fix_of(text)
    assert fix == "tf.transpose(grid, perm=[1, 0])"
    runs_cleanly(kernel, cell.replace("tf.transpose(grid, perm=[2, 1, 0])", fix))
    runs_cleanly(kernel, "flipped = tf.transpose(tf.ones((5, 6, 2)), perm=[2, 1, 0])")


# ------------------------------------------------------------------ indexing by tensors
def test_a_tensor_indexed_by_several_indices(kernel: KernelSession) -> None:
    cell = "board = tf.ones((5, 2))\nwhich = tf.constant([4, 1])\nchosen = board[which]"
    text = explained(kernel, cell, JOINING, "`which` is a (2,) int32 tensor", "tf.gather")
    fix = fix_of(text)
    assert fix == "tf.gather(board, which)"
    runs_cleanly(kernel, cell.replace("board[which]", fix))
    runs_cleanly(kernel, "chosen = tf.ones((5, 2))[tf.constant(1)]")


def test_columns_picked_by_a_tensor_of_indices(kernel: KernelSession) -> None:
    cell = "board = tf.ones((5, 3))\ncols = tf.constant([2, 0])\nchosen = board[:, cols]"
    text = explained(kernel, cell, JOINING, "`cols` is a (2,) int32 tensor", "along axis 1")
    fix = fix_of(text)
    assert fix == "tf.gather(board, cols, axis=1)"
    runs_cleanly(kernel, cell.replace("board[:, cols]", fix))
    # A boolean mask is valid indexing: no entry.
    runs_cleanly(kernel, "chosen = board[board[:, 0] > 0]")


def test_one_index_per_row_is_picked_with_batch_dims(kernel: KernelSession) -> None:
    # One expert per sample (7 samples, 4 experts): the per-row pick, not every row's
    # picks for every row; the fix is checked to give one value per sample.
    cell = (
        "gate_out = tf.random.normal((7, 4))\n"
        "expert_of = np.array([3, 0, 1, 1, 2, 0, 3], dtype='int64')\n"
        "routed = gate_out[:, expert_of]"
    )
    text = explained(
        kernel,
        cell,
        JOINING,
        "one per row of `gate_out` (7 indices for 7 rows)",
        "`gate_out[i, expert_of[i]]`",
        "batch_dims=1 (shape (7,))",
    )
    fix = fix_of(text)
    assert fix == "tf.gather(gate_out, expert_of, axis=1, batch_dims=1)"
    runs_cleanly(
        kernel,
        cell.replace("gate_out[:, expert_of]", fix)
        + "\nassert routed.shape == (7,)"
        + "\nassert np.allclose(routed, gate_out.numpy()[np.arange(7), expert_of])",
    )
    # NumPy's own per-row pick written for the tensor: the same gather.
    cell = cell.replace("gate_out[:, expert_of]", "gate_out[np.arange(7), expert_of]")
    text = explained(
        kernel, cell, JOINING, "pairs each row number of `gate_out`", "batch_dims=1 (shape (7,))"
    )
    assert fix_of(text) == "tf.gather(gate_out, expert_of, axis=1, batch_dims=1)"


# ------------------------------------------------------------------ variables
def test_assign_of_another_shape_makes_a_new_variable(kernel: KernelSession) -> None:
    cell = "state = tf.Variable(tf.zeros((4, 1)))\nstate.assign(tf.ones((1, 4)))"
    text = explained(
        kernel, cell, "rebinding-variables", "own shape (4, 1)", "the value is (1, 4)", "transpose"
    )
    fix = fix_of(text)
    assert fix == "state = tf.Variable(tf.ones((1, 4)))"
    runs_cleanly(kernel, cell.replace("state.assign(tf.ones((1, 4)))", fix))
    runs_cleanly(kernel, "state = tf.Variable(tf.zeros((4, 1)))\nstate.assign(tf.ones((4, 1)))")


# ------------------------------------------------------------------ data for Keras and tf.data
def test_fit_with_x_and_y_of_different_lengths(kernel: KernelSession) -> None:
    cell = (
        "feats = np.ones((40, 3), 'float32')\ntarget = np.ones((36,), 'float32')\n"
        "net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        "net.compile('sgd', 'mse')\nnet.fit(feats, target, epochs=1, verbose=0)"
    )
    text = explained(kernel, cell, "batch-dimension", "`feats` holds 40 examples and `target` 36")
    fix = fix_of(text)
    assert fix == "net.fit(feats[:36], target, epochs=1, verbose=0)"
    runs_cleanly(kernel, cell.replace("net.fit(feats, target, epochs=1, verbose=0)", fix))
    runs_cleanly(kernel, "net.fit(feats[:36], target[:36], epochs=1, verbose=0)")


def test_predict_with_another_feature_count_fixes_the_input_of_a_new_model(
    kernel: KernelSession,
) -> None:
    cell = (
        "clf = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])\n"
        "scores = clf.predict(np.ones((2, 7)), verbose=0)"
    )
    text = explained(
        kernel,
        cell,
        "batch-dimension",
        "`clf` takes inputs (None, 5)",
        "has 7 (2, 7)",
        "Input shape",
    )
    fix = fix_of(text)
    assert fix == "keras.Input((7,))"
    runs_cleanly(kernel, cell.replace("keras.Input((5,))", fix))


def test_a_model_from_an_earlier_cell_needs_the_data_changed(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "reg = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])")
    explained(
        kernel,
        "points = tf.ones((3, 7))\nout = reg(points)",
        "batch-dimension",
        "`points` has 7 (3, 7)",
        "built before this cell",
        "the data must change",
    )
    runs_cleanly(kernel, "out = reg(tf.ones((3, 5)))")


def test_ragged_lists_for_a_dataset_are_padded(kernel: KernelSession) -> None:
    cell = "visits = [[5, 1], [2, 2, 2], [9]]\npipe = tf.data.Dataset.from_tensor_slices(visits)"
    text = explained(
        kernel, cell, "tf-data", "`visits` holds rows of different lengths (rows of 1, 2, 3 items)"
    )
    fix = fix_of(text)
    assert (
        fix
        == "tf.data.Dataset.from_tensor_slices(keras.utils.pad_sequences(visits, padding='post'))"
    )
    runs_cleanly(kernel, cell.replace("tf.data.Dataset.from_tensor_slices(visits)", fix))
    runs_cleanly(kernel, "pipe = tf.data.Dataset.from_tensor_slices([[5, 1], [2, 2]])")


def test_a_conv_window_larger_than_the_image(kernel: KernelSession) -> None:
    cell = "tiny = tf.zeros((1, 3, 3, 2))\nfilt = keras.layers.Conv2D(4, 5)\nmaps = filt(tiny)"
    text = explained(kernel, cell, "batch-dimension", "(5, 5)", "spatial axes (3, 3)")
    fix = fix_of(text)
    assert fix == 'filt = keras.layers.Conv2D(4, 5, padding="same")'
    runs_cleanly(kernel, cell.replace("filt = keras.layers.Conv2D(4, 5)", fix))
    runs_cleanly(kernel, "maps = keras.layers.Conv2D(4, 3)(tf.zeros((1, 3, 3, 2)))")


def test_a_whole_static_shape_with_none_while_tracing(kernel: KernelSession) -> None:
    cell = (
        "@tf.function(input_signature=[tf.TensorSpec([None, 3])])\ndef blank(batch):\n"
        "    return tf.zeros(batch.shape)\n\nblank(tf.ones((2, 3)))"
    )
    text = explained(kernel, cell, "shape-dtype-device", "(None, 3)")
    fix = fix_of(text)
    # The whole statement, as the learner pastes it over the failing line.
    assert fix == "return tf.zeros(tf.shape(batch))"
    runs_cleanly(kernel, cell.replace("return tf.zeros(batch.shape)", fix))


# ------------------------------------------------------------------ missing axes
def test_an_lstm_on_a_rank_2_input_names_both_missing_axes(kernel: KernelSession) -> None:
    cell = "series = tf.ones((8, 12))\nrnn = keras.layers.LSTM(3)\nstate = rnn(series)"
    text = explained(
        kernel,
        cell,
        "batch-dimension",
        "(batch, steps, features)",
        "shape (8, 12)",
        "the features axis (last) is missing: `rnn(series[..., None])`",
        "the batch axis (first) is missing: `rnn(series[None, ...])`",
    )
    assert "Fix:" not in text
    for fixed in ("rnn(series[..., None])", "rnn(series[None, ...])"):
        runs_cleanly(kernel, cell.replace("rnn(series)", fixed))
    # Dense on a rank-1 tensor and Conv2D on one image keep naming the batch axis.
    explained(
        kernel,
        "point = tf.ones((3,))\nhead = keras.layers.Dense(2)\nhead(point)",
        "batch-dimension",
        "the leading batch axis is missing",
        "`head(point[None, ...])`",
    )


def test_features_and_labels_in_a_list_become_a_tuple(kernel: KernelSession) -> None:
    # A list of two arrays is one tensor to TensorFlow; the learner meant (x, y) pairs.
    cell = (
        "pixels = np.zeros((30, 8), 'float32')\nclasses = np.zeros((30,), 'int64')\n"
        "pairs = tf.data.Dataset.from_tensor_slices([pixels, classes])"
    )
    text = explained(
        kernel,
        cell,
        "tf-data",
        "`pixels` is a (30, 8) float32 NumPy array",
        "`classes` is a (30,) int64 NumPy array",
        "pass a tuple: `(pixels, classes)`",
    )
    fix = fix_of(text)
    assert fix == "tf.data.Dataset.from_tensor_slices((pixels, classes))"
    runs_cleanly(kernel, cell.replace("tf.data.Dataset.from_tensor_slices([pixels, classes])", fix))
    # The look-alike: a list of arrays of one shape is a valid tensor (30 rows of 2 items).
    runs_cleanly(kernel, "rows = tf.data.Dataset.from_tensor_slices([pixels[:, 0], pixels[:, 1]])")


def test_a_dataset_used_as_an_iterator_or_a_list(kernel: KernelSession) -> None:
    # Python raises these in the learner's line; the message names tf.data's class.
    made = "scores = tf.data.Dataset.range(10).batch(4)\n"
    text = explained(
        kernel,
        made + "head = next(scores)",
        "tf-data",
        "`next(scores)` raised TypeError",
        "iterable but neither an iterator nor a list",
    )
    fix = fix_of(text)
    assert fix == "head = next(iter(scores))"
    runs_cleanly(kernel, made + fix + "\nassert head.numpy().tolist() == [0, 1, 2, 3]")
    text = explained(kernel, made + "tail = scores[2]", "tf-data", "`scores[2]` raised TypeError")
    fix = fix_of(text)
    assert fix == "tail = next(iter(scores.skip(2)))"
    runs_cleanly(kernel, made + fix + "\nassert tail.numpy().tolist() == [8, 9]")
    # The look-alike: a Python list of batches is indexed and walked as a list.
    runs_cleanly(kernel, "listed = list(scores)\nsecond = listed[1]\nfirst = next(iter(listed))")


def test_gradients_and_variables_given_as_two_lists(kernel: KernelSession) -> None:
    # In a custom loop and in a train_step that fit runs: the same call, one pair list.
    setup = (
        "slope = tf.Variable(0.5)\nshift = tf.Variable(0.0)\nsgd = keras.optimizers.SGD(0.1)\n"
        "with tf.GradientTape() as tape:\n"
        "    misfit = tf.reduce_mean((slope * tf.range(4.0) + shift - 1.0) ** 2)\n"
        "steps = tape.gradient(misfit, [slope, shift])\n"
    )
    text = explained(
        kernel,
        setup + "sgd.apply_gradients(steps, [slope, shift])",
        "custom-train-step",
        "not `steps` and `[slope, shift]` as two arguments",
    )
    fix = fix_of(text)
    assert fix == "sgd.apply_gradients(zip(steps, [slope, shift]))"
    runs_cleanly(kernel, setup + fix + "\nassert float(slope.numpy()) != 0.5")
    # The look-alike: Keras 3's optimizer.apply takes the two lists.
    runs_cleanly(kernel, setup + "sgd.apply(steps, [slope, shift])")


def test_an_input_shape_that_counts_the_examples(kernel: KernelSession) -> None:
    # ``Input(shape=(40, 6))`` for data of shape (40, 6): the shape describes one example.
    cell = (
        "grid = np.zeros((40, 6), 'float32')\nmarks = np.zeros((40,), 'int64')\n"
        "entry = keras.Input(shape=(40, 6))\n"
        "scored = keras.Model(entry, keras.layers.Dense(2)(entry))\n"
        "scored.compile(optimizer='sgd', loss='sparse_categorical_crossentropy')\n"
        "scored.fit(grid, marks, epochs=1, verbose=0)"
    )
    text = explained(
        kernel,
        cell,
        "batch-dimension",
        "declares inputs of shape (None, 40, 6)",
        "the data is (None, 6)",
        "describes ONE example",
    )
    fix = fix_of(text)
    assert fix == "keras.Input(shape=(6,))"
    runs_cleanly(kernel, cell.replace("keras.Input(shape=(40, 6))", fix))


def test_a_reduction_over_the_examples_axis_is_named_at_its_assignment(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        "probs = tf.nn.softmax(tf.random.normal((100, 3)))\n"
        "labels = tf.random.uniform((100,), maxval=3, dtype=tf.int64)",
    )
    cell = "predicted = tf.argmax(probs, axis=0)\nhits = tf.equal(predicted, labels)"
    text = failing(kernel, cell)["explanation"]
    assert "`predicted` comes from `tf.argmax(probs, axis=0)`: axis 0 of `probs` (100, 3)" in text
    fix = fix_of(text)
    assert fix == "predicted = tf.argmax(probs, axis=-1)"
    runs_cleanly(kernel, cell.replace("predicted = tf.argmax(probs, axis=0)", fix))
    # Look-alike: a column mean (axis 0) used with a (100, 3) tensor is right.
    runs_cleanly(kernel, "col_mean = tf.reduce_mean(probs, axis=0)\ncentred = probs - col_mean")


WORDS_LAYER = """class WordsAndPlaces(keras.layers.Layer):
    def __init__(self, steps, vocab_size, width, **kwargs):
        super().__init__(**kwargs)
        self.words = keras.layers.Embedding(vocab_size, width)
        self.places = keras.layers.Embedding(steps, width)

    def call(self, ids):
        return self.words(ids) + self.places(tf.range(tf.shape(ids)[-1]))

sentence_ids = np.random.default_rng(2).integers(0, 30, size=(16, 6)).astype("int32")
sentence_ids[0, 0] = 29
"""


def test_embedding_sized_by_a_learner_class_is_fixed_where_it_was_made(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, WORDS_LAYER)
    made = "small_words = WordsAndPlaces(6, int(sentence_ids.max()), 8)"
    cell = f"{made}\nprint(small_words(sentence_ids).shape)"
    text = explained(
        kernel,
        cell,
        JOINING,
        "input_dim=29",
        f"`small_words` was made by `{made}` (line 1 of this cell), which passes "
        "`int(sentence_ids.max())` as `vocab_size`, the input_dim of `self.words`",
        "the largest id, 29, where the number of ids, 30, is needed",
    )
    fix = fix_of(text)
    # The learner's call is edited, not the (correct) class.
    assert fix == "small_words = WordsAndPlaces(6, int(sentence_ids.max()) + 1, 8)"
    runs_cleanly(kernel, cell.replace(made, fix))
    # The look-alike: sized with the count of ids, the same class is quiet.
    runs_cleanly(kernel, "WordsAndPlaces(6, 30, 8)(sentence_ids)")
