"""Raising cells whose entry must name the operand, the parameter or the container that
is wrong, read from the failing line's values and the callee's signature (issue #25):

- a constructor left at float32 given where a call converts to an integer dtype
  (``families_tensors.py``): the constructor asked for the dtype, not a float operand
  beside it cast; a NumPy array or a tensor of another shape than the message shows is
  never blamed;
- integer operands of two widths compared (``dtypes.py``): the comparison's narrower side
  named and cast, whichever call made it;
- ``tf.zeros(x.shape[0])`` in a tf.function whose ``input_signature`` leaves the batch
  unknown (``families_shapes.py``): the dynamic ``tf.shape(x)[0]``;
- an einsum operand with more axes than its letters (``families_einsum.py``);
- a keyword the called class lacks but its twin class takes (``families_arguments.py``):
  the twin called, not the keyword dropped;
- a name given by position to Keras 3's ``add_weight`` (``families_keyword_binding.py``);
- an attribute read on a tuple or list whose items have it
  (``families_container_attribute.py``).

Each printed fix is applied in the kernel and runs; correct look-alikes get no entry.
"""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_default_float_constructor_where_indices_are_converted(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "frames = tf.random.uniform((3, 20, 20, 1))\n"
        "windows = np.array([[0.0, 0.0, 0.5, 0.5], [0.25, 0.25, 1.0, 1.0]], np.float32)\n",
    )
    statement = (
        "tiles = tf.image.crop_and_resize(frames, windows, "
        "box_indices=tf.ones(len(windows)), crop_size=[5, 5])"
    )
    text = failing(kernel, statement)["explanation"]
    assert (
        "`tf.image.crop_and_resize` needs int32 for its `box_indices` argument, "
        "`tf.ones(len(windows))`, and `tf.ones` makes float32 unless it is given a dtype"
    ) in text, text
    assert "tf.cast(windows" not in text and "tf.cast(frames" not in text, text
    fix = fix_of(text)
    made = "tf.ones(len(windows), dtype=tf.int32)"
    assert fix == statement.replace("tf.ones(len(windows))", made)
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(tiles.shape)") == [2, 5, 5, 1]
    # Positional, with zeros: the same reading.
    positional = "tiles = tf.image.crop_and_resize(frames, windows, tf.zeros(2), [4, 4])"
    text = failing(kernel, positional)["explanation"]
    assert "its `box_indices` argument, `tf.zeros(2)`" in text, text
    runs_cleanly(kernel, fix_of(text))
    assert value_of(kernel, "list(tiles.shape)") == [2, 4, 4, 1]


def test_integer_comparisons_of_two_widths(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "votes = tf.constant([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1]])\nwanted = tf.constant([1, 0])\n",
    )
    text = failing(kernel, "agree = tf.argmax(votes, axis=-1) == tf.range(2)")["explanation"]
    assert (
        "`tf.range(2)` (the right side of `==`) is int32 while `tf.argmax(votes, axis=-1)` is int64"
    ) in text, text
    fix = last_code(text)
    assert fix == "tf.argmax(votes, axis=-1) == tf.cast(tf.range(2), tf.int64)"
    runs_cleanly(kernel, f"agree = {fix}")
    assert value_of(kernel, "agree.numpy().tolist()") == [False, False]
    text = failing(kernel, "below = wanted < tf.argmax(votes, axis=1)")["explanation"]
    assert "`wanted` (the left side of `<`) is int32" in text, text
    fix = last_code(text)
    assert fix == "tf.cast(wanted, tf.int64) < tf.argmax(votes, axis=1)"
    runs_cleanly(kernel, f"below = {fix}")
    assert value_of(kernel, "below.numpy().tolist()") == [False, False]
    # One dtype on both sides: no entry.
    runs_cleanly(kernel, "same = tf.argmax(votes, axis=-1) == tf.range(2, dtype=tf.int64)")


def test_a_static_batch_size_in_a_signature_of_unknown_batch(kernel: KernelSession) -> None:
    cell = """@tf.function(input_signature=[tf.TensorSpec(shape=[None, 3], dtype=tf.float32)])
def spread(rows):
    base = tf.zeros(rows.shape[0])
    return base + tf.math.reduce_std(rows, axis=1)
spread(tf.ones((6, 3)))
"""
    text = failing(kernel, cell)["explanation"]
    assert "`rows.shape` is (None, 3)" in text, text
    assert "the batch size is unknown, so a static shape holds None: (None, 3)" in text, text
    assert (
        "`spread`'s input_signature, `[tf.TensorSpec(shape=[None, 3], dtype=tf.float32)]`, "
        "leaves that size open: one trace serves every call, so `rows.shape[0]` is None "
        "whatever the call gives (wrapped in a list, `[rows.shape[0]]`, it fails the same way)"
    ) in text, text
    fix = text.split("Fix: use the dynamic shape, ", 1)[1].strip("`.")
    assert fix == "base = tf.zeros(tf.shape(rows)[0])"
    runs_cleanly(kernel, cell.replace("base = tf.zeros(rows.shape[0])", fix))
    assert value_of(kernel, "spread(tf.ones((2, 3))).shape.as_list()") == [2]
    # Without a signature the traced shape is the call's own: no entry.
    runs_cleanly(
        kernel,
        "@tf.function\ndef spread2(rows):\n    return tf.zeros(rows.shape[0])\n"
        "spread2(tf.ones((6, 3)))\n",
    )


def test_an_einsum_operand_with_an_extra_axis(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "K = tf.reshape(tf.range(12.0), (3, 4))\ncoef = tf.ones((4, 1))\n"
        "row = tf.ones((1, 3))\nwide = tf.ones((4, 2))\n",
    )
    text = failing(kernel, 'proj = tf.einsum("rc,c->r", K, coef)')["explanation"]
    assert (
        'The equation "rc,c->r" of `tf.einsum` gives one group of letters per operand, one '
        'letter per axis: `coef` (operand 2 after the equation) gets "c", 1 axis, but `coef` '
        "is (4, 1), rank 2: its axis 1 has size 1"
    ) in text, text
    fix = fix_of(text)
    assert fix == 'proj = tf.einsum("rc,c->r", K, coef[:, 0])'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "proj.numpy().tolist()") == [6.0, 22.0, 38.0]
    text = failing(kernel, 'back = tf.einsum("r,rc->c", row, K)')["explanation"]
    fix = fix_of(text)
    assert fix == 'back = tf.einsum("r,rc->c", row[0, :], K)'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "back.numpy().tolist()") == [12.0, 15.0, 18.0, 21.0]
    # An extra axis of another size: the rule, no fix.
    text = failing(kernel, 'bad = tf.einsum("rc,c->r", K, wide)')["explanation"]
    assert "`wide` is (4, 2), rank 2" in text and "Fix:" not in text, text
    runs_cleanly(kernel, 'good = tf.einsum("rc,ck->rk", K, wide)')


def test_a_keyword_of_the_twin_class(kernel: KernelSession) -> None:
    statement = "crit = keras.losses.BinaryCrossentropy(from_logits=True, gamma=2.0)"
    text = failing(kernel, statement)["explanation"]
    assert (
        "`BinaryFocalCrossentropy`, the same class with `Focal`, takes `gamma`: dropping "
        "`gamma` would drop the setting the call asks for"
    ) in text, text
    fix = fix_of(text)
    assert fix == "crit = keras.losses.BinaryFocalCrossentropy(from_logits=True, gamma=2.0)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "type(crit).__name__") == "BinaryFocalCrossentropy"
    # Sparse twins take other labels: said, and the fix then runs on one-hot labels.
    statement = (
        "smooth = keras.losses.SparseCategoricalCrossentropy(from_logits=True, label_smoothing=0.2)"
    )
    text = failing(kernel, statement)["explanation"]
    assert "give it one-hot labels too (`keras.utils.to_categorical(y, num_classes)`)" in text
    fix = fix_of(text)
    assert fix == (
        "smooth = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.2)"
    )
    runs_cleanly(kernel, fix)
    runs_cleanly(
        kernel,
        "value = smooth(keras.utils.to_categorical([2, 0], 3), tf.constant([[0.1, 0.2, 3.0], "
        "[2.0, 0.1, 0.3]]))",
    )
    # A keyword of another kind of class: no twin, dropped as before.
    text = failing(kernel, "rnn = keras.layers.GRU(8, mask_zero=True)")["explanation"]
    assert "Embedding" in text and "same class" not in text, text
    runs_cleanly(kernel, "ok = keras.losses.SparseCategoricalCrossentropy(from_logits=True)")


def test_a_name_given_by_position_to_add_weight(kernel: KernelSession) -> None:
    cell = """class Bias(keras.layers.Layer):
    def build(self, input_shape):
        self.offset = self.add_weight("offset", shape=(input_shape[-1],), initializer="zeros")

    def call(self, inputs):
        return inputs + self.offset

shifted = Bias()(tf.ones((3, 5)))
"""
    text = failing(kernel, cell)["explanation"]
    assert ('the text `"offset"`, given by position, lands in `*args`, not in `name`') in text, text
    fix = fix_of(text)
    assert fix == (
        'self.offset = self.add_weight(shape=(input_shape[-1],), initializer="zeros", '
        'name="offset")'
    )
    old = 'self.offset = self.add_weight("offset", shape=(input_shape[-1],), initializer="zeros")'
    runs_cleanly(kernel, cell.replace(old, fix))
    assert value_of(kernel, "shifted.shape.as_list()") == [3, 5]
    # A text where a size goes that is no name: never a `name=` fix.
    for wrong in ('cells = tf.zeros("3")', 'squash = keras.layers.Dense("relu")(tf.ones((2, 2)))'):
        said = failing_or_none(kernel, wrong)
        assert said is None or 'name="' not in said, said


def test_an_attribute_of_the_items_read_on_their_container(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "triples = tf.data.Dataset.from_tensor_slices((np.zeros((6, 4), np.float32), "
        "np.arange(6), np.ones(6, np.float32))).batch(2)\n"
        "parts = [np.zeros((2, 2)), np.ones(3)]\n",
    )
    text = failing(kernel, "print(triples.element_spec.shape)")["explanation"]
    assert (
        "`triples.element_spec` is a tuple of 3 items, each a `TensorSpec` with `.shape`; "
        "the tuple itself has no `.shape`"
    ) in text, text
    assert "`[item.shape for item in triples.element_spec]`" in text
    fix = fix_of(text)
    assert fix == "print(triples.element_spec[0].shape)"
    runs_cleanly(kernel, fix)
    text = failing(kernel, "n = parts.ndim")["explanation"]
    assert "`parts` is a list of 2 items, each a NumPy array with `.ndim`" in text, text
    runs_cleanly(kernel, fix_of(text))
    assert value_of(kernel, "n") == 2
    # The learner's own values in a list: plain Python, not this family's.
    execution_text = failing_or_none(kernel, "names = ['a', 'b']\nnames.shape")
    assert execution_text is None or "each a" not in execution_text


def last_code(text: str) -> str:
    """The last code span of an entry: the operator family prints its cast there."""
    return re.findall(r"`([^`]+)`", text)[-1]


def failing_or_none(kernel: KernelSession, code: str) -> str | None:
    """The explanation of a raising cell's entry, or None when it has none."""
    from tests.harness import checked_report, run

    execution = run(kernel, code, ok=False)
    assert execution.reply["status"] == "error", code
    error = checked_report(execution)["error"]
    return None if error is None else error["explanation"]
