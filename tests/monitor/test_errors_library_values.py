"""Plain Python errors raised in the learner's own line on TensorFlow/Keras values (issue
#25): the traceback may never enter TensorFlow, so the message names only a key, a count
or a Python type. Each entry reads the value (a dict's keys, what a recurrent layer
returns, a shape, a weight) and its fix runs in the kernel; the same errors on plain
Python values get no entry (``errors/families_missing_keys.py``,
``errors/families_library_values.py``, ``errors/families_unpacking.py``)."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, checked_report, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]


def _no_entry(kernel: KernelSession, cell: str) -> None:
    """A cell that raises a plain Python error gets no error entry."""
    execution = kernel.execute(cell)
    assert execution.reply["status"] == "error", cell
    assert checked_report(execution)["error"] is None, cell


# ------------------------------------------------------------------ unpacking
def test_recurrent_layer_states_unpacked_into_too_few_names(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "tokens_in = keras.Input(shape=(9, 5))")
    error = failing(kernel, "seq_out, hidden = keras.layers.LSTM(4, return_state=True)(tokens_in)")
    text = error["explanation"]
    assert "An LSTM layer made with `return_state=True` returns 3 values" in text
    assert "state_h and state_c" in text and "the line unpacks 2" in text
    fix = fix_of(text)
    assert fix == "seq_out, hidden, state_c = keras.layers.LSTM(4, return_state=True)(tokens_in)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(state_c.shape)") == [None, 4]
    # The correct unpacking stays silent.
    runs_cleanly(kernel, "o1, h1, c1 = keras.layers.LSTM(4, return_state=True)(tokens_in)")


def test_a_held_gru_layer_unpacked_into_too_many_names_eagerly(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "encoder = keras.layers.GRU(3, return_sequences=True, return_state=True)")
    error = failing(kernel, "steps, last, extra = encoder(tf.ones((2, 6, 5)))")
    text = error["explanation"]
    assert "A GRU layer made with `return_state=True` returns 2 values" in text
    assert "the whole output sequence, then its final state" in text
    fix = fix_of(text)
    assert fix == "steps, last = encoder(tf.ones((2, 6, 5)))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "[list(steps.shape), list(last.shape)]") == [[2, 6, 3], [2, 3]]
    # Through Bidirectional, each direction has its states.
    error = failing(
        kernel,
        "both, fwd = keras.layers.Bidirectional(keras.layers.LSTM(2, return_state=True))"
        "(tf.ones((1, 4, 3)))",
    )
    assert "returns 5 values" in error["explanation"]


def test_a_tensorflow_op_with_a_fixed_tuple_unpacked_wrongly(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "ids = tf.constant([4, 4, 7, 1, 7])")
    error = failing(kernel, "distinct = tf.unique(ids)\nfirst, pos, counts = tf.unique(ids)")
    text = error["explanation"]
    assert "returns 2 values (y, idx)" in text
    fix = fix_of(text)
    assert fix == "first, pos = tf.unique(ids)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "first.numpy().tolist()") == [4, 7, 1]
    # A user's own function returning a tuple is not the library's.
    _no_entry(kernel, "def pair():\n    return 1, 2\nq, r, s = pair()")


# ------------------------------------------------------------------ dict keys
DICT_MODEL = """rows = np.random.rand(12, 5).astype("float32")
src = keras.Input(shape=(5,))
forked = keras.Model(src, {"price": keras.layers.Dense(1)(src),
                           "grade": keras.layers.Dense(4, activation="softmax")(src)})
guesses = forked.predict(rows, verbose=0)
"""


def test_predict_of_a_model_with_dict_outputs_read_by_position(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DICT_MODEL)
    error = failing(kernel, "top_grade = guesses[1].argmax(axis=-1)\nvalue = guesses[0]")
    text = error["explanation"]
    assert 'Read the others by key too: line 2\'s `guesses[0]` is `guesses["price"]`.' in text
    assert '`guesses` is a dict of 2 keys: "price" (a (12, 1) float32 NumPy array)' in text
    assert "`guesses` was made by `forked.predict(rows, verbose=0)`" in text
    assert "a dict is read by key, not by position" in text
    # Both lines that read by position are in the fix.
    fixes = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert fixes == ['top_grade = guesses["grade"].argmax(axis=-1)', 'value = guesses["price"]']
    runs_cleanly(kernel, "\n".join(fixes))
    assert value_of(kernel, "top_grade.shape[0]") == 12
    # A misspelt key: the nearest one.
    error = failing(kernel, "cost = guesses['prices']")
    assert fix_of(error["explanation"]) == "cost = guesses['price']"


def test_a_dataset_element_dict_read_by_a_key_it_lacks(kernel: KernelSession) -> None:
    cell = """records = tf.data.Dataset.from_tensor_slices(
    {"audio": np.zeros((6, 10), "float32"), "speaker": np.arange(6)}).batch(3)
for batch in records:
    voices = batch["speakers"]"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert '`batch` is a dict of 2 keys: "audio" (a (3, 10) float32 tensor)' in text
    assert "The key nearest to `'speakers'` is `\"speaker\"`" in text
    assert fix_of(text) == 'voices = batch["speaker"]'
    # A learner's dict of plain values is not the library's.
    _no_entry(kernel, 'sizes = {"small": 1}\nsizes["large"]')


def test_compile_loss_keyed_by_other_names_than_the_outputs(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DICT_MODEL)
    cell = """forked.compile(optimizer="sgd",
               loss={"prize": "mse", "grades": "sparse_categorical_crossentropy"})
forked.fit(rows, {"price": np.zeros((12, 1)), "grade": np.zeros(12)}, epochs=1, verbose=0)"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "keras-model-api"
    text = error["explanation"]
    assert '`forked`\'s outputs are named "price", "grade"' in text
    assert '"prize" -> "price", "grades" -> "grade"' in text
    fix = fix_of(text)
    assert fix == (
        'forked.compile(optimizer="sgd", '
        'loss={"price": "mse", "grade": "sparse_categorical_crossentropy"})'
    )
    runs_cleanly(
        kernel,
        fix + '\nforked.fit(rows, {"price": np.zeros((12, 1)), "grade": np.zeros(12)}, '
        "epochs=1, verbose=0)",
    )


# ------------------------------------------------------------------ kinds of values
def test_an_index_past_a_shape_an_axis_or_a_layer_list(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DICT_MODEL)
    error = failing(kernel, "frames = tf.zeros((8, 20))\nchannels = frames.shape[2]")
    text = error["explanation"]
    assert "`frames.shape` is the shape (8, 20): a rank-2 value" in text
    assert "indices run from 0 to 1" in text and "asks for 2" in text
    error = failing(kernel, 'print(guesses["price"][0, 2])')
    assert "its axis 1 has 1 entry" in error["explanation"]
    error = failing(kernel, "head = forked.layers[5]")
    text = error["explanation"]
    assert "`forked.layers` holds 3 items" in text and "Its layers, in order:" in text
    # Plain lists are the learner's own.
    _no_entry(kernel, "marks = [1, 2]\nmarks[4]")


def test_a_weight_or_a_tensor_called_as_a_function(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "proj = keras.layers.Dense(2)\nproj.build((None, 3))")
    error = failing(kernel, "mapped = proj.kernel(np.ones((4, 3), 'float32'))")
    text = error["explanation"]
    assert "`proj.kernel` is a (3, 2) float32 Keras variable, a value, not a function" in text
    fix = fix_of(text)
    assert fix == "mapped = proj(np.ones((4, 3), 'float32'))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(mapped.shape)") == [4, 2]
    error = failing(kernel, "weights = tf.ones((3,))\nhalf = weights(0.5)")
    assert "To multiply, write the operator: `weights * 0.5`" in error["explanation"]
    _no_entry(kernel, "numbers = [1, 2]\nnumbers(0)")


def test_numpy_and_list_methods_asked_of_tensors(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "seen = tf.constant([0.5, 1.5])")
    error = failing(kernel, "seen.append(2.5)")
    text = error["explanation"]
    assert "a tensor cannot be changed in place" in text
    fix = fix_of(text)
    assert fix == "seen = tf.concat([seen, [2.5]], axis=0)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "seen.numpy().tolist()") == [0.5, 1.5, 2.5]
    error = failing(kernel, "halves = seen.astype('float64')")
    fix = fix_of(error["explanation"])
    assert fix == "halves = tf.cast(seen, 'float64')"
    runs_cleanly(kernel, fix)
    error = failing(kernel, "avg = float(seen.mean())")
    assert fix_of(error["explanation"]) == "avg = float(tf.reduce_mean(seen))"
    # The method's arguments are carried over: numpy's axis, reshape's sizes.
    runs_cleanly(kernel, "scores = tf.reshape(tf.range(6.0), (2, 3))")
    error = failing(kernel, "best = scores.argmax(1)")
    fix = fix_of(error["explanation"])
    assert fix == "best = tf.argmax(scores, axis=1)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "best.numpy().tolist()") == [2, 2]
    error = failing(kernel, "column = scores.reshape(6, 1)")
    fix = fix_of(error["explanation"])
    assert fix == "column = tf.reshape(scores, [6, 1])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "column.shape.as_list()") == [6, 1]


def test_dataset_asked_for_a_shape_or_a_length_it_has_not(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "clips = tf.data.Dataset.from_tensor_slices(np.zeros((9, 2)))")
    error = failing(kernel, "batched = clips.batch(3)\nprint(batched.shape)")
    assert error["course"]["section"] == "tf-data"
    assert "`batched.element_spec`" in error["explanation"]
    error = failing(kernel, "steps = len(clips.repeat())")
    assert "a `repeat()` without a count makes a dataset repeat forever" in (error["explanation"])
    error = failing(kernel, "kept = len(clips.filter(lambda v: v[0] > 0))")
    assert "sum(1 for _ in clips.filter(lambda v: v[0] > 0))" in error["explanation"]


# ------------------------------------------------------------------ declared structure
def test_a_generator_yielding_flat_parts_for_a_nested_signature(kernel: KernelSession) -> None:
    definition = """def readings(n):
    for i in range(n):
        yield np.full((3,), i, "float32"), np.float32(i), np.int32(i % 2)
"""
    build = """layout = (tf.TensorSpec((3,), tf.float32),
          (tf.TensorSpec((), tf.float32), tf.TensorSpec((), tf.int32)))
meter = tf.data.Dataset.from_generator(lambda: readings(4), output_signature=layout)
total = 0
for probe, (level, flag) in meter:
    total += int(flag)"""
    runs_cleanly(kernel, definition)
    error = failing(kernel, build)
    assert error["course"]["section"] == "tf-data"
    text = error["explanation"]
    assert "The generator `readings` yields (" in text and "a tuple of 3" in text
    assert "the output_signature `layout` is nested as ((3,) float32, (() float32, () int32))" in (
        text
    )
    fix = fix_of(text)
    assert fix == 'yield np.full((3,), i, "float32"), (np.float32(i), np.int32(i % 2))'
    runs_cleanly(kernel, definition.replace(definition.splitlines()[2].strip(), fix))
    runs_cleanly(kernel, build)
    assert value_of(kernel, "total") == 2


def test_a_generator_yielding_nested_parts_for_a_flat_signature(kernel: KernelSession) -> None:
    definition = """def samples():
    yield np.zeros(2, "float32"), (np.int64(1), np.float32(0.5))
"""
    build = """flow = tf.data.Dataset.from_generator(samples, output_signature=(
    tf.TensorSpec((2,), tf.float32), tf.TensorSpec((), tf.int64), tf.TensorSpec((), tf.float32)))
first = next(iter(flow))"""
    runs_cleanly(kernel, definition)
    error = failing(kernel, build)
    text = error["explanation"]
    assert "is nested as ((2,) float32, () int64, () float32)" in text
    fix = fix_of(text)
    assert fix == 'yield np.zeros(2, "float32"), np.int64(1), np.float32(0.5)'
    runs_cleanly(kernel, definition.replace(definition.splitlines()[1].strip(), fix))
    runs_cleanly(kernel, build)
    assert value_of(kernel, "len(first)") == 3


def test_strings_fed_to_an_input_declared_without_a_dtype(kernel: KernelSession) -> None:
    data = """table = {"city": np.array(["Oslo", "Rome", "Oslo", "Lima"]),
         "size": np.array([[1.], [2.], [3.], [4.]], "float32")}
cities = keras.layers.StringLookup(output_mode="one_hot")
cities.adapt(table["city"])
"""
    model = """size_in = keras.Input(shape=(1,), name="size")
merged = keras.layers.Concatenate()([cities(city_in), size_in])
net = keras.Model({"city": city_in, "size": size_in}, keras.layers.Dense(1)(merged))
net.compile(optimizer="adam", loss="mse")
"""
    train = "net.fit(tf.data.Dataset.from_tensor_slices((table, np.zeros(4))).batch(2), epochs=1)"
    runs_cleanly(kernel, data)
    cell = 'city_in = keras.Input(shape=(1,), name="city")\n' + model + train
    error = failing(kernel, cell)
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert '`net`\'s inputs are declared as "city" (float32), "size" (float32)' in text
    assert 'the data given for "city" holds strings' in text
    fix = fix_of(text)
    assert fix == 'city_in = keras.Input(shape=(1,), name="city", dtype="string")'
    runs_cleanly(kernel, fix + "\n" + model + train.replace("epochs=1", "epochs=1, verbose=0"))
    # Data given through the learner's own function is read by the names passed to it.
    helper = "def as_batches(features, labels):\n"
    helper += "    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(2)\n"
    runs_cleanly(kernel, helper)
    cell = 'city_in = keras.Input(shape=(1,), name="city", dtype="float32")\n' + model
    cell += "net.predict(as_batches(table, np.zeros(4)), verbose=0)"
    error = failing(kernel, cell)
    assert fix_of(error["explanation"]) == (
        'city_in = keras.Input(shape=(1,), name="city", dtype="string")'
    )


# ------------------------------------------------------------------ the last resort
def test_the_generic_entry_says_which_values_the_message_names(kernel: KernelSession) -> None:
    cell = """canvas = tf.zeros((5, 3))
spots = tf.constant([[1], [4]])
stamp = tf.ones((2, 2))
canvas = tf.tensor_scatter_nd_update(canvas, spots, stamp)"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "In the message, [5,3] is the shape of `canvas`; [2,2] is the shape of `stamp`." in (
        text
    )


FITTED = """pts = np.random.rand(20, 4).astype("float32")
kinds = np.random.randint(0, 3, 20)
sorter = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation="relu"),
                           keras.layers.Dense(3, activation="softmax")])
sorter.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
log = sorter.fit(pts, kinds, epochs=2, verbose=0)
pairs_ds = tf.data.Dataset.from_tensor_slices((pts, kinds)).batch(5)
"""


def test_a_stored_value_called_as_a_method(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FITTED)
    error = failing(kernel, "width = sorter.layers[0].units()")
    text = error["explanation"]
    assert "`sorter.layers[0].units` is the Python int 5, a value `sorter.layers[0]` holds" in text
    fix = fix_of(text)
    assert fix == "width = sorter.layers[0].units"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "width") == 5
    error = failing(kernel, "grid = tf.zeros((2, 7))\ncols = grid.shape()[1]")
    assert fix_of(error["explanation"]) == "cols = grid.shape[1]"
    # A learner's own object is not the library's.
    _no_entry(kernel, "class Box:\n    size = 3\nBox().size()")


def test_fit_history_or_a_model_walked_as_a_list(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FITTED)
    error = failing(kernel, "for epoch_value in log:\n    print(epoch_value)")
    text = error["explanation"]
    assert "`log` is the History that fit returned, not a list" in text
    assert '`log.history["loss"]`' in text
    error = failing(kernel, "for part in sorter:\n    print(part.name)")
    text = error["explanation"]
    assert "`sorter` is a Keras Sequential, not a list" in text
    fix = fix_of(text)
    assert fix == "for part in sorter.layers:"
    runs_cleanly(kernel, fix + "\n    print(part.name)")


def test_a_dataset_pair_read_as_one_tensor(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FITTED)
    cell = "sizes = []\nfor chunk in pairs_ds:\n    sizes.append(chunk.shape[0])"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "tf-data"
    text = error["explanation"]
    assert "`chunk` is a tuple of 2 items (a (5, 4) float32 tensor; a (5,) int64 tensor)" in text
    assert "`for chunk, labels in pairs_ds:`" in text
    fix = fix_of(text)
    assert fix == "sizes.append(chunk[0].shape[0])"
    runs_cleanly(kernel, cell.replace("sizes.append(chunk.shape[0])", fix))
    assert value_of(kernel, "sizes") == [5, 5, 5, 5]


def test_layer_weights_unpacked_into_the_wrong_number_of_names(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FITTED)
    error = failing(kernel, "kernel, bias, extra = sorter.layers[1].get_weights()")
    text = error["explanation"]
    assert "returns one NumPy array per weight of `sorter.layers[1]`: 2 here (kernel, bias)" in (
        text
    )
    fix = fix_of(text)
    assert fix == "kernel, bias = sorter.layers[1].get_weights()"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(kernel.shape)") == [5, 3]


def test_an_axis_past_the_rank_of_what_predict_returned(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FITTED)
    runs_cleanly(kernel, "scores = sorter.predict(pts, verbose=0)")
    error = failing(kernel, "picked = np.argmax(scores, axis=2)")
    text = error["explanation"]
    assert "`scores` is a (20, 3) float32 NumPy array: it has 2 axes" in text
    assert "the classes' axis is the last, -1" in text
    fix = fix_of(text)
    assert fix == "picked = np.argmax(scores, axis=-1)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "picked.shape[0]") == 20
    error = failing(kernel, "peak = scores.max(axis=3)")
    assert "and the call asks for axis 3" in error["explanation"]
    # An array the learner made is not read as a model's output: NumPy's own error, told
    # as such with the line, the call and the array (every error from the line gets one).
    text = failing(kernel, "made = np.ones((2, 2))\nnp.argmax(made, axis=4)")["explanation"]
    assert text.startswith("Line 2 of this cell: `np.argmax(made, axis=4)` raised AxisError.")
    assert "`made` is a (2, 2) float64 NumPy array" in text and "NumPy's" in text
    assert "classes' axis" not in text and "Fix:" not in text


def test_a_tensor_sliced_past_its_axis(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FITTED)
    error = failing(kernel, "probs = sorter(pts)\nsixth = probs[0][5]")
    text = error["explanation"]
    assert "`probs[0]` has shape (3,): its axis 0 has 3 entries" in text
    assert "runs from 0 to 2" in text and "asks for 5" in text
    error = failing(kernel, "weight = sorter.layers[1].kernel[0][9]")
    text = error["explanation"]
    assert "`sorter.layers[1].kernel[0]` has shape (3,): its axis 0 has 3 entries" in text


# ------------------------------------------------------------------ quantities read from data
def test_the_missing_channel_axis_is_declared_with_the_datas_channels(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        'snaps = np.random.rand(6, 12, 12, 3).astype("float32")\n'
        'held_out = np.random.rand(2, 12, 12, 3).astype("float32")\nSIDE = 12',
    )
    cell = """pic = keras.Input(shape=(SIDE, SIDE))
feat = keras.layers.Conv2D(2, 3)(pic)"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "with the 3 channels the data has" in text
    fix = fix_of(text)
    assert fix == "pic = keras.Input(shape=(SIDE, SIDE, 3))"
    runs_cleanly(kernel, fix + "\nfeat = keras.layers.Conv2D(2, 3)(pic)")
    runs_cleanly(kernel, "probe = keras.Model(pic, feat).predict(snaps, verbose=0)")
    # Grey images (no channel axis in the data) keep one channel.
    runs_cleanly(kernel, 'greys = np.random.rand(4, 9, 9).astype("float32")')
    error = failing(
        kernel, "flat_in = keras.Input(shape=(9, 9))\nout = keras.layers.Conv2D(2, 3)(flat_in)"
    )
    assert fix_of(error["explanation"]) == "flat_in = keras.Input(shape=(9, 9, 1))"
