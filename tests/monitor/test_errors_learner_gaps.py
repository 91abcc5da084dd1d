"""Raising cells whose entry was partial, wrong or missing (issue #25): a functional
model drawn with a ``tf.`` function, a dataset function of a nested element, a model of
two inputs given one array's rows, an old History key, ``window()``'s datasets indexed,
a sampler given one row of scores, gradients applied to another model's variables, a
plain method called on a reloaded SavedModel, tensors joined by ``str.join``. Each entry
names the learner's identifiers, its fix runs in the kernel and gives the right result,
and the correct look-alike raises nothing."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

TWIN_INPUTS = """left_in = keras.Input(shape=(6,))
right_in = keras.Input(shape=(6,))
shared_enc = keras.layers.Dense(5)
enc_left, enc_right = shared_enc(left_in), shared_enc(right_in)
"""


def test_a_tensorflow_function_on_keras_tensors_is_written_with_keras_ops(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, TWIN_INPUTS)
    cell = (
        "gap = tf.reduce_mean(tf.square(enc_left - enc_right), axis=-1, keepdims=True)\n"
        "twin = keras.Model([left_in, right_in], keras.layers.Dense(1)(gap))"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "functional-api"
    assert "`enc_left`, `enc_right` hold Keras symbolic tensors" in text
    assert "`tf.reduce_mean` and `tf.square` are TensorFlow's functions" in text
    fix = fix_of(text)
    assert fix == (
        "gap = keras.ops.mean(keras.ops.square(enc_left - enc_right), axis=-1, keepdims=True)"
    )
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))
    assert value_of(kernel, "list(twin.output.shape)") == [None, 1]
    # The look-alike: the same function on real tensors is TensorFlow's to run.
    runs_cleanly(kernel, "print(tf.abs(tf.constant([-1.0, 2.0])))")


NESTED = """lefts = np.random.rand(10, 3).astype("float32")
rights = np.random.rand(10, 3).astype("float32")
matches = np.random.randint(0, 2, 10).astype("float32")
twins_ds = tf.data.Dataset.from_tensor_slices(((lefts, rights), matches))

def nudge(u, v, y):
    return (u + 1.0, v - 1.0), y
"""


def test_a_function_of_a_nested_element_gets_the_inner_tuple_unpacked(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, NESTED)
    cell = "nudged = twins_ds.map(nudge)"
    text = failing(kernel, cell)["explanation"]
    assert "unpacks only the element's outer tuple" in text
    assert "(((3,) float32, (3,) float32), () float32)" in text
    assert "`u, v` together as one tuple; `y`" in text
    assert "has no component for" not in text
    fix = fix_of(text)
    assert fix == "nudged = twins_ds.map(lambda pair, y: nudge(*pair, y))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "[len(nudged.element_spec), len(nudged.element_spec[0])]") == [2, 2]
    # The look-alike: a function taking the element's two parts.
    runs_cleanly(kernel, "ok_ds = twins_ds.map(lambda pair, y: (pair, y + 1.0))")


TWO_INPUTS = """sizes_tr = np.random.rand(50, 5).astype("float32")
kinds_tr = np.random.randint(0, 3, (50, 1)).astype("int32")
sizes_all = np.random.rand(70, 5).astype("float32")
size_in = keras.Input(shape=(5,), name="sizes")
kind_in = keras.Input(shape=(1,), dtype="int32", name="kinds")
kind_hot = keras.layers.CategoryEncoding(3, output_mode="one_hot")(kind_in)
joined = keras.layers.Concatenate()([keras.layers.Dense(4)(size_in), kind_hot])
duo = keras.Model([size_in, kind_in], keras.layers.Dense(1)(joined))
"""


def test_rows_of_one_input_name_the_other_inputs_rows(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TWO_INPUTS)
    text = failing(kernel, "preview = duo.predict(sizes_tr[:4], verbose=0)")["explanation"]
    assert "`sizes_tr[:4]`, `kinds_tr[:4]`" in text
    fix = fix_of(text)
    assert fix == "duo.predict([sizes_tr[:4], kinds_tr[:4]], verbose=0)"
    runs_cleanly(kernel, f"preview = {fix}")
    assert value_of(kernel, "list(preview.shape)") == [4, 1]


def test_an_old_history_key_is_told_by_its_keras_3_name(kernel: KernelSession) -> None:
    setup = (
        "lr_net = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])\n"
        'lr_net.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")\n'
        "lr_log = lr_net.fit(np.zeros((8, 2)), np.zeros(8), epochs=2, verbose=0, callbacks=["
        'keras.callbacks.ReduceLROnPlateau(monitor="loss", patience=1)])'
    )
    runs_cleanly(kernel, setup)
    cell = 'last_rate = lr_log.history["lr"][-1]'
    text = failing(kernel, cell)["explanation"]
    assert "tf.keras 2 logged `'lr'`; Keras 3 logs the same value as `'learning_rate'`" in text
    fix = fix_of(text)
    assert fix == 'last_rate = lr_log.history["learning_rate"][-1]'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "round(float(last_rate), 4)") == 0.1


WINDOWS = """steps_ds = tf.data.Dataset.range(30)
WIN = 6

def to_pair(seq):
    return seq[:-1], seq[1:]
"""


def test_windows_indexed_as_tensors_are_batched_first(kernel: KernelSession) -> None:
    runs_cleanly(kernel, WINDOWS)
    cell = "pairs = steps_ds.window(WIN, shift=2, drop_remainder=True).map(to_pair)"
    text = failing(kernel, cell)["explanation"]
    assert "makes a dataset whose elements are themselves small datasets" in text
    assert "`to_pair` gets a dataset as `seq`" in text
    fix = fix_of(text)
    assert fix == (
        "pairs = steps_ds.window(WIN, shift=2, drop_remainder=True)"
        ".flat_map(lambda w: w.batch(WIN)).map(to_pair)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "[int(v) for v in next(iter(pairs))[1]]") == [1, 2, 3, 4, 5]
    # The look-alike: a dataset of tensors indexed in its function.
    runs_cleanly(kernel, "rows = steps_ds.batch(WIN).map(to_pair)")


def test_a_sampler_given_one_row_of_scores_gets_a_batch_of_one(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "step_scores = tf.random.normal([2, 4, 7])")
    cell = "last_scores = step_scores[0, -1]\nnext_id = tf.random.categorical(last_scores, 1)"
    text = failing(kernel, cell)["explanation"]
    assert "`last_scores`, of shape (7,), is one row of 7 scores" in text
    assert "`last_scores = step_scores[0, -1]` (this cell) took one example" in text
    fix = fix_of(text)
    assert fix == "next_id = tf.random.categorical(last_scores[None, :], 1)"
    runs_cleanly(kernel, cell.replace(cell.splitlines()[1], fix))
    assert value_of(kernel, "list(next_id.shape)") == [1, 1]
    runs_cleanly(kernel, "ids = tf.random.categorical(step_scores[:, -1], 1)")


GAN = """maker = keras.Sequential([keras.Input((3,)), keras.layers.Dense(9), keras.layers.Dense(2)])
critic = keras.Sequential([keras.Input((2,)), keras.layers.Dense(8), keras.layers.Dense(1)])
maker_opt = keras.optimizers.Adam(1e-3)
"""
STEP = """@tf.function
def maker_step():
    z = tf.random.normal([8, 3])
    with tf.GradientTape() as tape:
        fool = -tf.reduce_mean(critic(maker(z)))
    grads = tape.gradient(fool, critic.trainable_variables)
    maker_opt.apply_gradients(zip(grads, maker.trainable_variables))
    return fool

maker_step()
"""


def test_gradients_applied_to_another_models_variables_name_both_lists(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, GAN)
    text = failing(kernel, STEP)["explanation"]
    assert "`grads` holds the gradients for `critic.trainable_variables`, 4 variables" in text
    assert "with `maker.trainable_variables`, 4 other variables ((3, 9), (9,)" in text
    # The optimizer's first call failed, leaving its state half-built: made again too.
    fix = text.split("Fix: ", 1)[1]
    assert fix.startswith(
        "`grads = tape.gradient(fool, maker.trainable_variables)`, and run "
        "`maker_opt = keras.optimizers.Adam(1e-3)` again before the next step"
    )
    runs_cleanly(kernel, "maker_opt = keras.optimizers.Adam(1e-3)")
    fixed = STEP.replace(STEP.splitlines()[5].strip(), fix.split("`")[1])
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "int(maker_opt.iterations)") == 1
    # An optimizer that trained before needs no new one; the correct step runs again.
    text = failing(kernel, STEP)["explanation"]
    assert fix_of(text) == "grads = tape.gradient(fool, maker.trainable_variables)"
    assert "make the optimizer again" not in text
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "int(maker_opt.iterations)") == 2


SAVED = """import tempfile
class Slope(tf.Module):
    def __init__(self):
        super().__init__()
        self.m = tf.Variable(2.0)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, x):
        return self.m * x

    def as_numpy(self, values):
        return self(tf.constant(values, tf.float32)).numpy()

xs_np = np.arange(4.0)
slope_dir = tempfile.mkdtemp()
tf.saved_model.save(Slope(), slope_dir)
reloaded = tf.saved_model.load(slope_dir)
"""


def test_a_plain_method_of_a_reloaded_savedmodel_is_called_through_its_function(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, SAVED)
    text = failing(kernel, "scaled = reloaded.as_numpy(xs_np[:3])")["explanation"]
    assert "`Slope.as_numpy` (cell In[" in text
    assert "is a plain Python method, so it was not saved; this one has `reloaded(...)`" in text
    fix = fix_of(text)
    assert fix == "scaled = reloaded(tf.constant(xs_np[:3], tf.float32)).numpy()"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "scaled.tolist()") == [0.0, 2.0, 4.0]


def test_string_tensors_joined_by_python_get_their_values_joined(kernel: KernelSession) -> None:
    runs_cleanly(kernel, 'letters = [tf.constant("t"), tf.constant("f")]')
    cell = 'word = "> " + "".join(letters)'
    text = failing(kernel, cell)["explanation"]
    assert "`letters` holds string tensors, and Python's `str.join` takes Python strings" in text
    fix = fix_of(text)
    assert fix == 'word = "> " + "".join(t.numpy().decode() for t in letters)'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "word") == "> tf"
    runs_cleanly(kernel, 'plain = "".join(["t", "f"])')
