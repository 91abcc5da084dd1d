"""Every error entry names what the learner wrote (issue #25): the failing line, the call
and the names it was computing, the function or user class it happened in, the expression
the fix changes, and the fix itself in those names. Each fix is run in the kernel and the
error is gone. The cells here are our own (names, shapes, models unlike the dev notebooks).
"""

from __future__ import annotations

import re

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    checked_report,
    run,
    value_of,
)
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(0)
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")


# ---------------------------------------------------------------- tapes
FIT_LINE = """slope_v = tf.Variable([[0.5]])
shift_v = tf.Variable(0.0)
rate = 0.05
xs = tf.random.normal((32, 1))
ys = 2.0 * xs + 1.0
"""


def test_loss_from_a_value_computed_before_the_tape(kernel: KernelSession) -> None:
    run(kernel, FIT_LINE)
    cell = """fitted = xs @ slope_v + shift_v
for epoch in range(3):
    with tf.GradientTape() as rec:
        cost = tf.reduce_mean((fitted - ys) ** 2)
    gs, gb = rec.gradient(cost, [slope_v, shift_v])
    slope_v.assign_sub(rate * gs)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert text.startswith("Line 6 of this cell: `rate * gs` raised TypeError.")
    assert "`gs` is None" in text
    assert "from `fitted`, but `fitted` was computed before the block (line 1" in text
    assert "the tape `rec` never recorded" in text
    assert error["course"]["section"] == "gradient-tape"
    assert fix_of(text) == "cost = tf.reduce_mean((fitted - ys) ** 2)"
    assert "move `fitted = xs @ slope_v + shift_v` inside the `with ... as rec:` block" in text
    moved = cell.replace("fitted = xs @ slope_v + shift_v\n", "").replace(
        "        cost =", "        fitted = xs @ slope_v + shift_v\n        cost ="
    )
    runs_cleanly(kernel, moved)


def test_loss_computed_after_the_tape_block_ended(kernel: KernelSession) -> None:
    # The loss line dedented by one level: the optimizer gets only None gradients.
    cell = """probe = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
trainer = keras.optimizers.SGD(0.1)
inputs_p = tf.random.normal((16, 3))
targets_p = tf.random.normal((16, 1))
for step in range(2):
    with tf.GradientTape() as recorder:
        guesses = probe(inputs_p)
    gap = tf.reduce_mean((guesses - targets_p) ** 2)
    steps = recorder.gradient(gap, probe.trainable_variables)
    trainer.apply_gradients(zip(steps, probe.trainable_variables))
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`steps` holds only None" in text
    assert "the loss `gap` is computed after the `with ... as recorder:` block ended" in text
    assert "(line 8: `gap = tf.reduce_mean((guesses - targets_p) ** 2)`)" in text
    assert error["course"]["section"] == "gradient-tape"
    assert "Fix: indent line 8, `gap = tf.reduce_mean((guesses - targets_p) ** 2)`, into" in text
    indented = cell.replace("\n    gap =", "\n        gap =")
    runs_cleanly(kernel, indented + "before = probe.get_weights()[0].copy()\n")
    runs_cleanly(kernel, indented)
    assert value_of(kernel, "bool((probe.get_weights()[0] != before).any())") is True


def test_second_gradient_of_a_used_tape(kernel: KernelSession) -> None:
    run(kernel, FIT_LINE)
    cell = """with tf.GradientTape() as rec2:
    out = tf.reduce_sum(slope_v * 3.0 + shift_v)
dslope = rec2.gradient(out, slope_v)
dshift = rec2.gradient(out, shift_v)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert text.startswith(
        "Line 4 of this cell: `rec2.gradient(out, shift_v)` raised RuntimeError while "
        "computing `dshift`."
    )
    assert "`dslope = rec2.gradient(out, slope_v)` already used `rec2`" in text
    fix = fix_of(text)
    assert fix == "dslope, dshift = rec2.gradient(out, [slope_v, shift_v])"
    two_lines = "dslope = rec2.gradient(out, slope_v)\ndshift = rec2.gradient(out, shift_v)"
    runs_cleanly(kernel, cell.replace(two_lines, fix))


def test_gradients_unpacked_in_another_order_than_trainable_variables(
    kernel: KernelSession,
) -> None:
    run(
        kernel,
        """class Box(tf.Module):
    def __init__(self):
        self.scale = tf.Variable(tf.ones((3, 1)))
        self.offset = tf.Variable(tf.zeros((1,)))

    def __call__(self, inputs):
        return inputs @ self.scale + self.offset

box = Box()
pts = tf.random.normal((16, 3))
""",
    )
    cell = """with tf.GradientTape() as tp:
    err = tf.reduce_mean(box(pts) ** 2)
d_scale, d_offset = tp.gradient(err, box.trainable_variables)
box.scale.assign_sub(0.1 * d_scale)
box.offset.assign_sub(0.1 * d_offset)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`d_scale, d_offset` unpack `tp.gradient(err, box.trainable_variables)`" in text
    assert "the order of `box.trainable_variables`: `offset` (1,), `scale` (3, 1)" in text
    fix = fix_of(text)
    assert fix == "d_scale, d_offset = tp.gradient(err, [box.scale, box.offset])"
    runs_cleanly(
        kernel, cell.replace("d_scale, d_offset = tp.gradient(err, box.trainable_variables)", fix)
    )


# ---------------------------------------------------------------- a batch axis dropped
def test_an_integer_index_that_dropped_the_batch_axis_is_named(kernel: KernelSession) -> None:
    run(
        kernel,
        """class Proj(tf.Module):
    def __init__(self):
        self.m = tf.Variable(tf.ones((5, 2)))

    def __call__(self, rows):
        return tf.matmul(rows, self.m)

proj = Proj()
table = np.random.rand(9, 5).astype("float32")
""",
    )
    cell = "pick = table[2]\nprint(proj(pick))"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "(in `Proj.__call__`)" in text
    assert "`pick = table[2]` dropped the batch axis" in text
    assert "`pick = table[2:3]`" in text
    runs_cleanly(kernel, cell.replace("pick = table[2]", "pick = table[2:3]"))
    runs_cleanly(kernel, cell.replace("proj(pick)", fix_of(text)))

    # Keras: the same cause, named in predict's explanation.
    run(
        kernel,
        """net = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(2)])
grid = np.random.rand(10, 6).astype("float32")
""",
    )
    cell = "row = grid[1]\nout = net.predict(row, verbose=0)"
    text = failing(kernel, cell)["explanation"]
    assert "`row` is `grid[1]`" in text and "`row = grid[1:2]` keeps it" in text
    runs_cleanly(kernel, cell.replace("row = grid[1]", "row = grid[1:2]"))


def test_one_image_to_a_conv_model_is_told_as_a_missing_batch_axis(
    kernel: KernelSession,
) -> None:
    """Keras 3 adds an axis to one (16, 16, 1) image and fails deep in Conv2D with a
    'Negative dimension' message: the argument against the model's input says it."""
    run(
        kernel,
        """seer = keras.Sequential([keras.Input((16, 16, 1)), keras.layers.Conv2D(2, 3),
    keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3)])
shots = np.random.rand(5, 16, 16, 1).astype("float32")
""",
    )
    cell = "shot = shots[0]\nscores = seer.predict(shot, verbose=0)"
    text = failing(kernel, cell)["explanation"]
    expects = "the model expects a batch of shape (None, 16, 16, 1) but got shape (16, 16, 1)"
    assert expects in text, text
    assert "the leading batch axis is missing" in text
    fixed = "seer.predict(shot[None, ...], verbose=0)"
    assert f"`{fixed}`" in text, text
    runs_cleanly(kernel, cell.replace("seer.predict(shot, verbose=0)", fixed))
    runs_cleanly(kernel, "print(seer.predict(shots[:1], verbose=0).shape)")


def test_conv2d_input_declared_without_channels_names_the_definition(
    kernel: KernelSession,
) -> None:
    run(kernel, 'pics = np.random.rand(20, 10, 10).astype("float32")')
    cell = """convnet = keras.Sequential([
    keras.Input(shape=pics.shape[1:]),
    keras.layers.Conv2D(4, 3),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(2),
])
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`keras.Input(shape=pics.shape[1:])` declares each example as (10, 10)" in text
    assert "`Conv2D` gets (None, 10, 10)" in text
    assert "`pics[..., None]`" in text
    fix = fix_of(text)
    assert fix == "keras.Input(shape=(10, 10, 1))"
    runs_cleanly(kernel, cell.replace("keras.Input(shape=pics.shape[1:])", fix))
    runs_cleanly(kernel, "print(convnet.predict(pics[..., None], verbose=0).shape)")


def test_conv2d_input_shape_keyword_without_channels_is_fixed_in_the_layer(
    kernel: KernelSession,
) -> None:
    """``input_shape=(IMG, IMG)`` on the first Conv2D: the definition is fixed (in the
    learner's names), not the data, which already has its channel axis."""
    run(kernel, 'IMG = 8\nframes = np.random.rand(12, IMG, IMG, 1).astype("float32")')
    cell = """small = keras.Sequential([
    keras.layers.Conv2D(4, 3, activation="relu", input_shape=(IMG, IMG)),
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(3, activation="softmax"),
])
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "declares each example as (8, 8)" in text and "not from a call" in text, text
    assert "expand_dims" not in text
    fix = fix_of(text)
    assert fix == 'keras.layers.Conv2D(4, 3, activation="relu", input_shape=(IMG, IMG, 1))'
    written = 'keras.layers.Conv2D(4, 3, activation="relu", input_shape=(IMG, IMG))'
    runs_cleanly(kernel, cell.replace(written, fix))
    runs_cleanly(kernel, "print(small.predict(frames, verbose=0).shape)")


def test_functional_model_given_a_new_input(kernel: KernelSession) -> None:
    cell = """inp_a = keras.Input(shape=(3,))
mid = keras.layers.Dense(5)(inp_a)
score = keras.layers.Dense(1)(mid)
clf2 = keras.Model(inputs=keras.Input(shape=(3,)), outputs=score)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`score` was computed from `inp_a`" in text
    fix = fix_of(text)
    assert fix == "keras.Model(inputs=inp_a, outputs=score)"
    runs_cleanly(
        kernel, cell.replace("keras.Model(inputs=keras.Input(shape=(3,)), outputs=score)", fix)
    )


def test_a_user_layer_class_is_named(kernel: KernelSession) -> None:
    cell = """class Rescaler(keras.layers.Layer):
    def call(self, x):
        return x * tf.ones((x.shape[0], 1))

reg_net = keras.Sequential([keras.Input(shape=(3,)), Rescaler(), keras.layers.Dense(1)])
reg_net.compile(optimizer="sgd", loss="mse")
reg_net.fit(np.ones((8, 3), "float32"), np.ones((8, 1), "float32"), epochs=1, verbose=0)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert text.startswith("Line 3 of this cell (in `Rescaler.call`):")
    runs_cleanly(kernel, cell.replace("x.shape[0]", "tf.shape(x)[0]"))


# ---------------------------------------------------------------- tf.function bodies
def test_numpy_inside_a_traced_function_names_the_tensor(kernel: KernelSession) -> None:
    cell = """@tf.function
def capped(vals):
    peak = tf.reduce_max(vals)
    if peak.numpy() < 0.0:
        peak = tf.zeros([])
    return peak

capped(tf.constant([1.0, -2.0]))
"""
    text = failing(kernel, cell)["explanation"]
    assert text.startswith("Line 4 of this cell (in `capped`): `peak.numpy()` raised")
    assert "`peak` is such a tensor" in text
    fix = fix_of(text)
    assert fix == "if peak < 0.0:"
    runs_cleanly(kernel, cell.replace("if peak.numpy() < 0.0:", fix))


def test_variable_created_in_a_traced_body(kernel: KernelSession) -> None:
    cell = """@tf.function
def tally(chunk):
    acc = tf.Variable(0.0)
    acc.assign_add(tf.reduce_sum(chunk))
    return acc

tally(tf.constant([1.0]))
tally(tf.constant([2.0]))
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "(in `tally`)" in text
    assert "`tally` creates `acc` with `acc = tf.Variable(0.0)` in its body" in text
    assert "before line 1" in text
    line = fix_of(text)
    assert line == "acc = tf.Variable(0.0)"
    runs_cleanly(kernel, line + "\n\n" + cell.replace("    acc = tf.Variable(0.0)\n", ""))


def test_loop_variable_growing_in_a_graph_loop(kernel: KernelSession) -> None:
    cell = """@tf.function
def squares_upto(k):
    acc_vals = tf.zeros([0])
    for j in tf.range(k):
        acc_vals = tf.concat([acc_vals, [tf.cast(j * j, tf.float32)]], 0)
    return acc_vals

squares_upto(tf.constant(3))
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`acc_vals` is (0,) before the loop and (1,) after one iteration" in text
    assert "(`tf.concat` on line 5 grows it)" in text
    assert error["course"]["section"] == "python-loops"
    fix = fix_of(text)
    assert fix == (
        "tf.autograph.experimental.set_loop_options("
        "shape_invariants=[(acc_vals, tf.TensorShape([None]))])"
    )
    body = "    for j in tf.range(k):\n"
    runs_cleanly(kernel, cell.replace(body, f"{body}        {fix}\n"))
    runs_cleanly(kernel, "assert squares_upto(tf.constant(3)).numpy().tolist() == [0.0, 1.0, 4.0]")


def test_dtype_error_in_a_mapped_function_names_the_function(kernel: KernelSession) -> None:
    cell = """factor32 = tf.constant([2.0, 3.0])
pairs = tf.data.Dataset.from_tensor_slices((np.ones((4, 2)), np.arange(4)))

def rescale(v, lbl):
    return v * factor32, lbl

scaled = pairs.map(rescale)
"""
    text = failing(kernel, cell)["explanation"]
    assert text.startswith("Line 5 of this cell (in `rescale`)")
    assert "`v` (the left side of `*`) is float64" in text
    runs_cleanly(kernel, cell.replace("return v * factor32", "return " + fix_of_cast(text)))


def fix_of_cast(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


# ---------------------------------------------------------------- tf.data
def test_batching_sequences_of_different_lengths(kernel: KernelSession) -> None:
    cell = """sentences = [[1, 2], [3, 4, 5], [6]]
word_ds = tf.data.Dataset.from_generator(
    lambda: iter(sentences),
    output_signature=tf.TensorSpec(shape=(None,), dtype=tf.int32),
)
for chunk in word_ds.batch(3):
    print(chunk.shape)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`word_ds` is built from `sentences` (a list of 3 items" in text
    assert error["course"]["section"] == "tf-data"
    fix = fix_of(text)
    assert fix == "word_ds.padded_batch(3)"
    runs_cleanly(kernel, cell.replace("word_ds.batch(3)", fix))
    # Batched in an earlier line of the cell: that line is the one to change.
    cell = (
        "word_batches = word_ds.batch(3)\n"
        "for chunk in word_batches.take(1):\n"
        "    print(chunk.shape)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "pad each batch where `word_batches` is made (line 1 of this cell)" in text
    fix = fix_of(text)
    assert fix == "word_batches = word_ds.padded_batch(3)"
    runs_cleanly(kernel, cell.replace("word_batches = word_ds.batch(3)", fix))


# ---------------------------------------------------------------- hostile classes
HOSTILE = """class Claims(type):
    # A metaclass whose mro() claims Keras's Layer: only the user's word for it.
    def mro(cls):
        return [cls, keras.layers.Layer, object]

class Hostile(metaclass=Claims):
    touched = []
    # Its own construction, before the claimed Layer's in the MRO.
    __setattr__ = object.__setattr__

    def __new__(cls):
        return object.__new__(cls)

    def __init__(self):
        pass

    @property
    def units(self):
        Hostile.touched.append("units")
        raise RuntimeError("a user property ran")

    def __getattr__(self, name):
        Hostile.touched.append(name)
        raise AttributeError(name)

odd = Hostile()
"""


def test_a_hostile_class_on_the_failing_line_is_read_safely(kernel: KernelSession) -> None:
    run(kernel, HOSTILE)
    cell = "out = (tf.matmul(tf.ones((2, 3)), tf.ones((2, 3))), odd, odd.trainable_variables)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert text.startswith("Line 1 of this cell: `tf.matmul(tf.ones((2, 3)), tf.ones((2, 3)))`")
    # Not described as a Keras layer (its metaclass is the user's), nothing of it ran.
    assert "`odd`" not in text and "Keras" not in text
    touched = checked_report(run(kernel, "print(Hostile.touched)"))
    assert touched["error"] is None
    execution = run(kernel, "assert Hostile.touched == [], Hostile.touched")
    assert execution.reply["status"] == "ok"


# ---------------------------------------------------------------- what the line reads
def test_the_name_being_assigned_is_not_an_operand(kernel: KernelSession) -> None:
    # `grid` holds a model from an earlier cell; the failing line only assigns to it.
    run(kernel, "grid = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])")
    cell = "pts = tf.constant([[1.0, 2.0], [3.0, 4.0]])\ngrid = pts @ tf.ones((3, 1))"
    text = failing(kernel, cell)["explanation"]
    assert "while computing `grid`" in text and "`pts` is a (2, 2) float32 tensor" in text
    assert "Sequential" not in text, text


def test_an_item_of_a_plain_dict_is_described(kernel: KernelSession) -> None:
    cell = "record = {'pixels': tf.ones((2, 5))}\npicked = record['pixels'] @ tf.ones((3, 1))"
    text = failing(kernel, cell)["explanation"]
    assert "`record['pixels']` is a (2, 5) float32 tensor" in text, text
