"""Variable reports and gradient notes in a real kernel."""

from __future__ import annotations

import pytest

from tests.harness import (
    KernelSession,
    changes_of,
    note_texts,
    run_quiet,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


def test_variable_rebound_to_tensor(kernel: KernelSession) -> None:
    assert run_quiet(kernel, "w = tf.Variable(1.0)\nk = keras.Variable(2.0)")["variables"] == []
    report = run_quiet(kernel, "w = w - 0.1 * 2.0\nk = k * 1.0")
    changes = changes_of(report, "rebound_to_tensor")
    assert [(c["name"], c["before"], c["after"]) for c in changes] == [
        ("w", "tf.Variable", "tf.Tensor"),
        ("k", "keras.Variable", "tf.Tensor"),
    ]
    assert "w.assign_sub" in changes[0]["text"]
    assert changes[0]["course"]["section"] == "rebinding-variables"
    # Reported once: the next cell sees a tensor that stays a tensor.
    assert run_quiet(kernel, "w = w + 1.0")["variables"] == []


def test_module_attribute_rebound_and_count(kernel: KernelSession) -> None:
    code = """class Affine(tf.Module):
    def __init__(self):
        self.a = tf.Variable(1.0)
        self.b = tf.Variable(2.0)

affine = Affine()
"""
    assert run_quiet(kernel, code)["variables"] == []
    report = run_quiet(kernel, "affine.a = affine.a - 0.1")
    [rebound] = changes_of(report, "attribute_rebound")
    assert (rebound["name"], rebound["before"], rebound["after"]) == (
        "affine.a",
        "tf.Variable",
        "tf.Tensor",
    )
    assert "trainable_variables" in rebound["text"]
    assert "`affine.a.assign_sub(0.1)`" in rebound["text"]
    # The count dropped (2 -> 1) because of this rebinding: one cause, one entry.
    assert changes_of(report, "trainable_count") == []
    assert value_of(kernel, "len(affine.trainable_variables)") == 1


def test_keras_layer_attribute_rebound(kernel: KernelSession) -> None:
    code = """class Linear(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 1), name="w")

    def call(self, x):
        return x @ self.w

custom = keras.Sequential([keras.Input((3,)), Linear(name="linear")])
"""
    assert run_quiet(kernel, code)["variables"] == []
    report = run_quiet(kernel, 'custom.get_layer("linear").w = custom.get_layer("linear").w - 0.1')
    [rebound] = changes_of(report, "attribute_rebound")
    assert rebound["name"] == "custom.get_layer('linear').w"
    assert rebound["before"] == "keras.Variable"
    assert "No gradients provided" in rebound["text"]


def test_layer_reachable_twice_is_reported_once(kernel: KernelSession) -> None:
    code = (
        'stack = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2, name="d1")])\n'
        'd1 = stack.get_layer("d1")\n'
        'stack.compile(optimizer="sgd", loss="mse")\n'
        "stack.fit(np.ones((4, 2)), np.ones((4, 2)), verbose=0)"
    )
    run_quiet(kernel, code)
    report = run_quiet(kernel, "d1.trainable = False")
    flags = changes_of(report, "trainable_flag")
    assert len(flags) == 1 and (flags[0]["before"], flags[0]["after"]) == (True, False)
    assert "`stack.compile(...)` again" in flags[0]["text"]
    # The count follows the flag: not a second entry.
    assert changes_of(report, "trainable_count") == []
    # Never fitted: freezing is simply right, nothing to say.
    code = 'fresh = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2, name="d2")])'
    run_quiet(kernel, code)
    assert run_quiet(kernel, 'fresh.get_layer("d2").trainable = False')["variables"] == []


def test_gradient_none_notes(kernel: KernelSession) -> None:
    code = """x = tf.constant(3.0)
frozen = tf.Variable(2.0, trainable=False)
with tf.GradientTape() as tape:
    y = x * x * frozen
grads = tape.gradient(y, [x, frozen])
"""
    report = run_quiet(kernel, code)
    notes = note_texts(report)
    # Sources are named as the cell names them.
    assert any("line 5 returned None for `x`" in n and "tape.watch" in n for n in notes)
    assert any("None for `frozen`" in n and "`trainable=True`" in n for n in notes)
    assert any("`frozen` is a tf.Variable with trainable=False" in n for n in notes)

    # Several sources with one cause: one note naming them all, with the cause this cell shows.
    code = """w1 = tf.Variable(1.0)
w2 = tf.Variable(2.0)
with tf.GradientTape() as tape:
    prediction = (w1 * 3.0 + w2).numpy()
    loss = tf.constant((prediction - 1.0) ** 2)
grads = tape.gradient(loss, [w1, w2])
"""
    [note] = note_texts(run_quiet(kernel, code))
    assert note.startswith("tape.gradient at line 6 returned None for `w1`, `w2`: ")
    assert "through NumPy" in note
    code = """w3 = tf.Variable([0.2, 0.6])
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.round(w3 * 2.0))
grads = tape.gradient(loss, [w3])
"""
    [note] = note_texts(run_quiet(kernel, code))
    assert "`tf.round` has no gradient" in note

    code = """v = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = v * v
grad = tape.gradient(y, v)
"""
    assert run_quiet(kernel, code)["notes"] == []


STEP = """@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((net(x) - y) ** 2)
    grads = tape.gradient(loss, net.trainable_variables)
    sgd.apply_gradients(zip(grads, net.trainable_variables))
    return loss
"""


def test_freezing_after_a_custom_training_step_traced(kernel: KernelSession) -> None:
    setup = (
        "net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name='hidden'),"
        " keras.layers.Dense(1)])\n"
        "sgd = keras.optimizers.SGD(0.1)\n"
        "xs = tf.random.normal((8, 3))\nys = tf.random.normal((8, 1))\n"
    )
    run_quiet(kernel, setup + STEP + "train_step(xs, ys)")
    freeze = (
        "net.get_layer('hidden').trainable = False\n"
        "before = net.get_layer('hidden').kernel.numpy().copy()\n"
        "for _ in range(3):\n    train_step(xs, ys)\n"
    )
    changed = "bool(np.any(before != net.get_layer('hidden').kernel.numpy()))"
    report = run_quiet(kernel, freeze)
    [flag] = changes_of(report, "trainable_flag")
    assert "`train_step` traced before this change" in flag["text"]
    assert "Run the `@tf.function def train_step(...)` definition again" in flag["text"]
    assert value_of(kernel, changed) is True  # what the entry says: it still trains it
    # The corrected cell, as the entry says: the definition again, then training.
    run_quiet(kernel, setup + STEP + "train_step(xs, ys)")
    report = run_quiet(kernel, freeze.replace("for _ in", STEP + "for _ in"))
    assert report["variables"] == []
    assert value_of(kernel, changed) is False


SECOND_DERIVATIVE = """a = tf.Variable(1.5)
with tf.GradientTape() as outer_tape:
    with tf.GradientTape() as inner_tape:
        energy = a**3
slope = inner_tape.gradient(energy, a)
curvature = outer_tape.gradient(slope, a)
"""


def test_target_computed_after_the_outer_tape_block(kernel: KernelSession) -> None:
    """A second derivative whose first gradient was taken after the outer tape's block:
    the note names the line that computed the target and the block to move it into, and
    the cell with that line moved gives the second derivative (6 * a = 9)."""
    [note] = note_texts(run_quiet(kernel, SECOND_DERIVATIVE))
    assert note.startswith("tape.gradient at line 6 returned None for `a`: ")
    assert "`slope` is computed at line 5 (`slope = inner_tape.gradient(energy, a)`)" in note
    assert (
        "after the block ended" in note
        and "`with tf.GradientTape() as outer_tape:` at line 2" in note
    )
    moved = SECOND_DERIVATIVE.replace(
        "\nslope = inner_tape.gradient", "\n    slope = inner_tape.gradient"
    )
    report = run_quiet(kernel, moved)
    assert note_texts(report) == []
    assert value_of(kernel, "round(float(curvature), 3)") == 9.0


def test_loss_after_the_tape_block_is_named(kernel: KernelSession) -> None:
    """The same reading on a first-order loop: the loss computed after the block."""
    cell = (
        "k = tf.Variable(2.0)\n"
        "with tf.GradientTape() as tape:\n"
        "    guess = k * 3.0\n"
        "gap = (guess - 5.0) ** 2\n"
        "dk = tape.gradient(gap, k)\n"
    )
    [note] = note_texts(run_quiet(kernel, cell))
    assert "`gap` is computed at line 4" in note and "after the block ended" in note
    correct = cell.replace("\ngap =", "\n    gap =")
    assert note_texts(run_quiet(kernel, correct)) == []
