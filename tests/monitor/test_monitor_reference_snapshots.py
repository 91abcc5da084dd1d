"""A reference kept where a copy was meant (issue #25): a name or a callback attribute
bound to the very variables training updates in place (``start = layer.kernel``,
``self.kept = self.model.weights``), meant as a snapshot (its name, a subtraction or a
restore says so). The note names the learner's statement and gives the copy in their
names; the test runs the fix and shows the symptom gone. Live handles and real copies
stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="",
)

SECTION = "variable-references"
DATA = """keras.utils.set_random_seed(4)
inputs = np.random.default_rng(4).normal(size=(64, 3)).astype("float32")
targets = (inputs @ np.array([[2.0, 0.0], [-1.0, 1.0], [0.5, 3.0]], "float32")).astype("float32")

class Affine(tf.Module):
    def __init__(self):
        super().__init__()
        self.kernel = tf.Variable(tf.ones((3, 2)), name="kernel")
        self.shift = tf.Variable(tf.zeros((2,)), name="shift")

    def __call__(self, x):
        return x @ self.kernel + self.shift
"""
LOOP = """sgd = keras.optimizers.SGD(0.05)
for _ in range(15):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(aff(inputs) - targets))
    grads = tape.gradient(loss, aff.trainable_variables)
    sgd.apply_gradients(zip(grads, aff.trainable_variables))
"""


def reference_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def test_variable_kept_by_reference_before_a_custom_loop(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "aff = Affine()\nstart_kernel = aff.kernel\n"
        + LOOP
        + "moved = float(tf.reduce_max(tf.abs(aff.kernel - start_kernel)))\n"
    )
    report = checked_report(run(kernel, cell))
    assert value_of(kernel, "moved") == 0.0  # the symptom
    notes = reference_notes(report)
    assert notes == [
        "`start_kernel = aff.kernel` (this cell) keeps a reference, not a copy: "
        "`start_kernel` and `aff.kernel` are the same `tf.Variable`, which training updated "
        "in place, so `start_kernel` always holds the current values (`aff.kernel - "
        "start_kernel` is 0 everywhere). Keep a copy of the values instead: "
        "`start_kernel = tf.identity(aff.kernel)`."
    ], report["notes"]
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    fixed = run(kernel, cell.replace("start_kernel = aff.kernel", fix))
    assert reference_notes(checked_report(fixed)) == []
    assert value_of(kernel, "moved") > 0.1


def test_snapshot_taken_in_an_earlier_cell(kernel: KernelSession) -> None:
    run(kernel, DATA + "aff = Affine()\nshift_prev = aff.shift\n")
    report = checked_report(run(kernel, LOOP))
    notes = reference_notes(report)
    assert len(notes) == 1, report["notes"]
    assert notes[0].startswith("`shift_prev = aff.shift` (an earlier cell) keeps a reference")
    assert notes[0].endswith("`shift_prev = tf.identity(aff.shift)`.")
    # Told once: more training of the same variable does not repeat it.
    assert reference_notes(checked_report(run(kernel, LOOP))) == []


def test_tuple_of_references_restored_after_assign_sub_steps(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """aff = Affine()
lowest, kept_kernel, kept_shift = float("inf"), None, None
for step in range(12):
    with tf.GradientTape() as tape:
        err = tf.reduce_mean(tf.square(aff(inputs) - targets))
    if err < lowest:
        lowest, kept_kernel, kept_shift = float(err), aff.kernel, aff.shift
    g_kernel, g_shift = tape.gradient(err, [aff.kernel, aff.shift])
    aff.kernel.assign_sub(2.5 * g_kernel)  # too large a step: the loss grows
    aff.shift.assign_sub(2.5 * g_shift)
aff.kernel.assign(kept_kernel)
aff.shift.assign(kept_shift)
after = float(tf.reduce_mean(tf.square(aff(inputs) - targets)))
"""
    report = checked_report(run(kernel, cell))
    assert value_of(kernel, "after") > 100 * value_of(kernel, "lowest")  # nothing restored
    notes = reference_notes(report)
    assert len(notes) == 1, report["notes"]
    statement = "lowest, kept_kernel, kept_shift = float(err), aff.kernel, aff.shift"
    assert notes[0].startswith(f"`{statement}` (this cell) keeps a reference, not a copy")
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == (
        "lowest, kept_kernel, kept_shift = float(err), tf.identity(aff.kernel), "
        "tf.identity(aff.shift)"
    )
    fixed = run(kernel, cell.replace(statement, fix))
    assert reference_notes(checked_report(fixed)) == []
    assert abs(value_of(kernel, "after") - value_of(kernel, "lowest")) < 1e-4


CALLBACK = """class KeepLowest(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.lowest = float("inf")
        self.lowest_state = None

    def on_epoch_end(self, epoch, logs=None):
        if logs["val_loss"] < self.lowest:
            self.lowest = logs["val_loss"]
            self.lowest_state = self.model.weights

    def on_train_end(self, logs=None):
        self.model.set_weights([v.numpy() for v in self.lowest_state])

watch = KeepLowest()
reg_net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
reg_net.compile(keras.optimizers.SGD(2.0), "mse")  # too large: the loss grows
hist = reg_net.fit(inputs[:48], targets[:48], epochs=6, batch_size=8,
                   validation_data=(inputs[48:], targets[48:]), callbacks=[watch], verbose=0)
gap = reg_net.evaluate(inputs[48:], targets[48:], verbose=0) - watch.lowest
"""


def test_callback_keeps_the_live_weights_as_its_best(kernel: KernelSession) -> None:
    run(kernel, DATA)
    report = checked_report(run(kernel, CALLBACK))
    losses = value_of(kernel, "hist.history['val_loss']")
    assert losses[-1] > min(losses)  # the last epoch is not the best one
    assert value_of(kernel, "gap") > 0.01  # the symptom: the restore restored the last
    notes = reference_notes(report)
    assert len(notes) == 1, report["notes"]
    text = notes[0]
    assert text.startswith(
        "`self.lowest_state = self.model.weights` (in `KeepLowest.on_epoch_end`) keeps a "
        "reference, not a copy: `self.model.weights` is a list of the live variables"
    )
    assert "`watch.lowest_state` always holds the current values" in text
    assert text.endswith(
        "Keep a copy of the values instead: `self.lowest_state = self.model.get_weights()`, "
        "and restore them with `self.model.set_weights(self.lowest_state)` (in place of "
        "`self.model.set_weights([v.numpy() for v in self.lowest_state])`)."
    )
    codes = re.findall(r"`([^`]+)`", text)
    fixed = CALLBACK.replace("self.lowest_state = self.model.weights", codes[-3]).replace(
        "self.model.set_weights([v.numpy() for v in self.lowest_state])", codes[-2]
    )
    assert reference_notes(checked_report(run(kernel, DATA + fixed))) == []
    # The best weights are back: evaluating them gives the lowest validation loss.
    assert abs(value_of(kernel, "gap")) < 1e-4 * value_of(kernel, "watch.lowest")


def test_live_handles_and_real_copies_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "aff = Affine()\nkern = aff.kernel\nparams = aff.trainable_variables\n"
        "kernel_before = tf.identity(aff.kernel)\nshift_initial = aff.shift.numpy().copy()\n"
        "initial_scale = tf.Variable(1.0)\n"
        + LOOP
        + "print(kern.shape, len(params), float(tf.reduce_max(aff.kernel - kernel_before)))\n"
    )
    assert reference_notes(checked_report(run(kernel, cell))) == []
    cell = CALLBACK.replace(
        "self.lowest_state = self.model.weights", "self.lowest_state = self.model.get_weights()"
    ).replace(
        "self.model.set_weights([v.numpy() for v in self.lowest_state])",
        "self.model.set_weights(self.lowest_state)",
    )
    assert reference_notes(checked_report(run(kernel, DATA + cell))) == []


# A list of snapshots filled with references: every entry holds the same live variables.
TRAJECTORY = """aff = Affine()
trajectory = []
sgd = keras.optimizers.SGD(0.05)
for _ in range(6):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(aff(inputs) - targets))
    grads = tape.gradient(loss, aff.trainable_variables)
    sgd.apply_gradients(zip(grads, aff.trainable_variables))
    trajectory.append(aff.trainable_variables)
drift = float(np.abs(np.asarray(trajectory[0][0]) - np.asarray(trajectory[-1][0])).max())
"""
EPOCH_KEEPER = """class EveryOtherEpoch(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.kept = []

    def on_epoch_end(self, epoch, logs=None):
        if epoch % 2 == 1:
            self.kept.append(self.model.weights)


keeper = EveryOtherEpoch()
reg = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
reg.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
reg.fit(inputs, targets, epochs=6, batch_size=16, verbose=0, callbacks=[keeper])
spread = max(
    float(np.abs(np.asarray(a) - np.asarray(b)).max())
    for a, b in zip(keeper.kept[0], keeper.kept[-1])
)
"""


def fix_in_note(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_snapshots_appended_by_reference(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = reference_notes(checked_report(run(kernel, TRAJECTORY)))
    assert text.startswith(
        "`trajectory.append(aff.trainable_variables)` (this cell) appends a reference, not a "
        "copy: `aff.trainable_variables` is a list of the live variables"
    ), text
    assert "all 6 entries of `trajectory` hold the very same variables" in text
    assert value_of(kernel, "drift") == 0.0
    fix = fix_in_note(text)
    assert fix == "trajectory.append([v.numpy().copy() for v in aff.trainable_variables])"
    fixed = TRAJECTORY.replace("trajectory.append(aff.trainable_variables)", fix)
    assert reference_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "drift > 0") is True
    # A Keras callback keeping the model's weights every other epoch.
    [kept_text] = reference_notes(checked_report(run(kernel, EPOCH_KEEPER)))
    assert kept_text.startswith(
        "`self.kept.append(self.model.weights)` (in `EveryOtherEpoch.on_epoch_end`) appends "
        "a reference, not a copy"
    ), kept_text
    assert "all 3 entries of `keeper.kept` hold the very same variables" in kept_text
    assert value_of(kernel, "spread") == 0.0
    kept_fix = fix_in_note(kept_text)
    assert kept_fix == "self.kept.append(self.model.get_weights())"
    fixed_keeper = EPOCH_KEEPER.replace("self.kept.append(self.model.weights)", kept_fix)
    assert reference_notes(checked_report(run(kernel, fixed_keeper))) == []
    assert value_of(kernel, "spread > 0") is True


def test_groups_of_variables_kept_on_purpose_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # One entry per model: groups of variables for two optimizers, not snapshots.
    cell = """first_part, second_part = Affine(), Affine()
groups = []
groups.append(first_part.trainable_variables)
groups.append(second_part.trainable_variables)
opts = [keras.optimizers.SGD(0.05), keras.optimizers.SGD(0.01)]
for _ in range(3):
    with tf.GradientTape() as tape:
        hidden = first_part(inputs) @ tf.ones((2, 3))
        loss = tf.reduce_mean(tf.square(second_part(hidden) - targets))
    grads = tape.gradient(loss, groups[0] + groups[1])
    opts[0].apply_gradients(zip(grads[:2], groups[0]))
    opts[1].apply_gradients(zip(grads[2:], groups[1]))
"""
    assert reference_notes(checked_report(run(kernel, cell))) == []
