"""Readings that named the wrong cause or printed a fix that fails (issue #25): a saved
model needing several classes of the learner's own (the fix must register all of them),
a layer's weight read before ``build`` ran (not an API name), a Python float passed where
TensorFlow wants an integer (the float32 of the message is that argument), an ``(N, 1)``
against ``(N,)`` loss whose line holds another ``(N, 1)`` operand (squeezing one alone
still broadcasts, so that fix is not offered), and an operand reshaped to ``(N, 1)`` on the
spot. Every printed fix is applied in the kernel; correct look-alikes stay silent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="",
)


def broadcast_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "broadcasting"
    ]


# ------------------------------------------------------------- several custom classes
def test_loading_needs_every_custom_class(kernel: KernelSession, tmp_path: Path) -> None:
    saved = str(tmp_path / "pair.keras")
    setup = f"""class Shifter(keras.layers.Layer):
    def call(self, x):
        return x + 1.0

class Squasher(keras.layers.Layer):
    def call(self, x):
        return x * 0.5

inp = keras.Input((3,))
out = keras.layers.Dense(2)(Squasher()(Shifter()(inp)))
pair = keras.Model(inp, out)
pair.save({saved!r})
pair_file = {saved!r}
"""
    runs_cleanly(kernel, setup)
    error = failing(kernel, "again = keras.models.load_model(pair_file)\n")
    text = error["explanation"]
    assert error["course"]["section"] == "keras-saving", text
    assert "`Shifter`" in text and "`Squasher`" in text, text
    fix = fix_of(text)
    assert '"Shifter": Shifter' in fix and '"Squasher": Squasher' in fix, fix
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "len(again.layers) == len(pair.layers)") is True


def test_loading_a_sequential_with_three_custom_layers(
    kernel: KernelSession, tmp_path: Path
) -> None:
    saved = str(tmp_path / "stack.keras")
    setup = f"""class Doubling(keras.layers.Layer):
    def call(self, x):
        return 2.0 * x

class Halving(keras.layers.Layer):
    def call(self, x):
        return 0.5 * x

class Negating(keras.layers.Layer):
    def call(self, x):
        return -x

stack = keras.Sequential([keras.Input((4,)), Doubling(), Halving(), Negating()])
stack.save({saved!r})
"""
    runs_cleanly(kernel, setup)
    error = failing(kernel, f"copy = keras.models.load_model({saved!r})\n")
    text = error["explanation"]
    fix = fix_of(text)
    for name in ("Doubling", "Halving", "Negating"):
        assert f'"{name}": {name}' in fix, fix
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "copy(np.ones((1, 4), 'float32')).numpy().tolist()") == [[-1.0] * 4]


# ------------------------------------------------------------- a weight before build
def test_a_weight_read_before_the_custom_layer_is_built(kernel: KernelSession) -> None:
    run(
        kernel,
        """class Offset(keras.layers.Layer):
    def build(self, input_shape):
        self.shift = self.add_weight(shape=(input_shape[-1],), initializer="ones")

    def call(self, x):
        return x + self.shift
""",
    )
    error = failing(kernel, "nudge = Offset()\nprint(nudge.shift.shape)\n")
    text = error["explanation"]
    assert "`nudge` has no `shift` yet" in text and "`Offset.build`" in text, text
    assert "version" not in text, text
    # What it says to do: call the layer on a batch first, then read the weight.
    runs_cleanly(kernel, "nudge(np.zeros((2, 5), 'float32'))\nprint(nudge.shift.shape)\n")
    assert value_of(kernel, "list(nudge.shift.shape)") == [5]


def test_an_annotated_table_read_before_build(kernel: KernelSession) -> None:
    run(
        kernel,
        """class Lookup(keras.layers.Layer):
    def build(self, input_shape):
        self.table: keras.Variable = self.add_weight(shape=(3, 2), initializer="zeros")

    def call(self, ids):
        return tf.gather(self.table, ids)
""",
    )
    error = failing(kernel, "finder = Lookup()\nrows = finder.table.numpy()\n")
    text = error["explanation"]
    assert "`finder` has no `table` yet" in text and "`Lookup.build`" in text, text
    runs_cleanly(kernel, "finder(tf.constant([0, 2]))\nrows = finder.table.numpy()\n")
    # Look-alike: a name the built layer really lacks is still an API-name entry.
    other = failing(kernel, "print(finder.tabel)\n")["explanation"]
    assert "build" not in other and "`tabel`" in other, other


# ------------------------------------------------------------- a float where an int goes
def test_a_float_frame_length_is_named(kernel: KernelSession) -> None:
    run(kernel, "wave = np.random.default_rng(1).standard_normal(2000).astype('float32')\n")
    cell = (
        "WINDOW = 8000 * 0.032\n"
        "HOP = WINDOW / 2\n"
        "chunks = tf.signal.frame(wave, frame_length=WINDOW, frame_step=HOP)\n"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "float32 is what TensorFlow made of the Python float passed as" in text, text
    assert "`frame_length=WINDOW` (use `int(WINDOW)`)" in text, text
    assert "the dtype of `wave`" not in text, text
    runs_cleanly(
        kernel,
        cell.replace(
            "frame_length=WINDOW, frame_step=HOP", "frame_length=int(WINDOW), frame_step=int(HOP)"
        ),
    )
    assert value_of(kernel, "list(chunks.shape)") == [14, 256]


def test_a_float_stft_length_is_named(kernel: KernelSession) -> None:
    run(kernel, "clip = np.zeros((3, 1600), 'float32')\n")
    cell = "LENGTH = 0.5 * 400\nspec = tf.signal.stft(clip, frame_length=LENGTH, frame_step=100)\n"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "the dtype of `clip`" not in text, text
    assert "`frame_length=LENGTH` (use `int(LENGTH)`)" in text, text
    runs_cleanly(kernel, cell.replace("frame_length=LENGTH", "frame_length=int(LENGTH)"))
    assert value_of(kernel, "list(spec.shape)") == [3, 15, 129]


# ------------------------------------------------------------- a second (N, 1) operand
LAPLACE = """def laplace_nll(target, pred):
    loc = pred[:, :1]
    scale = pred[:, 1:]
    return tf.reduce_mean(scale + tf.abs(target - loc) * tf.exp(-scale))

outs = tf.concat([tf.zeros((6, 1)), tf.zeros((6, 1))], axis=-1)
truth = tf.constant(np.arange(6, dtype="float32"))
value = float(laplace_nll(truth, outs))
"""


def test_a_fix_that_would_still_broadcast_is_not_offered(kernel: KernelSession) -> None:
    notes = broadcast_notes(checked_report(run(kernel, LAPLACE)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert "`target - loc`" in text and "`scale` on the same line is (6, 1)" in text, text
    assert "tf.squeeze(loc" not in text, text
    fixes = re.findall(r"`([^`]+)`", text.split("Make the shapes agree: ", 1)[1])
    fixed = fixes[0]
    assert fixed == "target[:, None] - loc", text
    report = checked_report(run(kernel, LAPLACE.replace("target - loc", fixed)))
    assert broadcast_notes(report) == []
    # |t - 0| * exp(0) averaged over 0..5: 2.5.
    assert abs(value_of(kernel, "value") - 2.5) < 1e-6


def test_a_top_level_line_with_two_columns(kernel: KernelSession) -> None:
    run(
        kernel,
        "obs = np.linspace(0, 1, 10).astype('float32')\n"
        "centre = obs[:, None] + 0.1\n"
        "spread = np.full((10, 1), 2.0, 'float32')\n",
    )
    cell = "err = np.mean(np.square(obs - centre) / spread)\n"
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert "`spread` on the same line is (10, 1)" in text, text
    fixed = re.findall(r"`([^`]+)`", text.split("Make the shapes agree: ", 1)[1])[0]
    assert broadcast_notes(checked_report(run(kernel, cell.replace("obs - centre", fixed)))) == []
    assert abs(value_of(kernel, "float(err)") - 0.005) < 1e-6
    # Look-alike: one (N, 1) operand alone keeps both fixes.
    alone = broadcast_notes(checked_report(run(kernel, "gap = np.mean(obs - centre)\n")))
    assert len(alone) == 1 and "centre[:, 0]" in alone[0], alone


# ------------------------------------------------------------- reshaped on the spot
def test_labels_reshaped_to_a_column_in_the_comparison(kernel: KernelSession) -> None:
    run(
        kernel,
        "guess_ids = np.array([0, 1, 2, 1, 0, 2, 2, 1])\n"
        "truth = np.array([0, 1, 2, 0, 0, 2, 1, 1])\n",
    )
    cell = "share = (guess_ids == truth.reshape(-1, 1)).mean()\n"
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert "`truth.reshape(-1, 1)`, a (8, 1) int64 NumPy array" in text, text
    for fixed in re.findall(r"`([^`]+)`", text.split("Make the shapes agree: ", 1)[1])[:2]:
        assert (
            broadcast_notes(
                checked_report(
                    run(kernel, cell.replace("guess_ids == truth.reshape(-1, 1)", fixed))
                )
            )
            == []
        )
        assert value_of(kernel, "float(share)") == 0.75, fixed
    # Look-alike: both sides reshaped alike.
    same = "share = (guess_ids.reshape(-1, 1) == truth.reshape((-1, 1))).mean()\n"
    assert broadcast_notes(checked_report(run(kernel, same))) == []


def test_a_tensor_reshaped_by_tf_reshape(kernel: KernelSession) -> None:
    run(
        kernel,
        "level = tf.constant([1.0, 2.0, 3.0, 4.0])\nmark = tf.constant([1.0, 2.0, 3.0, 5.0])\n",
    )
    cell = "off = tf.reduce_mean(tf.abs(level - tf.reshape(mark, (-1, 1))))\n"
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1 and "(4, 4)" in notes[0], notes
    fixed = re.findall(r"`([^`]+)`", notes[0].split("Make the shapes agree: ", 1)[1])[0]
    assert (
        broadcast_notes(
            checked_report(run(kernel, cell.replace("level - tf.reshape(mark, (-1, 1))", fixed)))
        )
        == []
    )
    assert abs(value_of(kernel, "float(off)") - 0.25) < 1e-6


# ------------------------------------------------------------- constant output, never trained
def test_constant_predictions_of_a_model_never_trained(kernel: KernelSession) -> None:
    run(
        kernel,
        "flat_net = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4, "
        "kernel_initializer='zeros'), keras.layers.Dense(2, kernel_initializer='zeros')])\n"
        "flat_net.compile(optimizer='sgd', loss='mse')\n"
        "rows = np.random.default_rng(3).normal(size=(30, 5)).astype('float32')\n",
    )
    report = checked_report(run(kernel, "out = flat_net.predict(rows, verbose=0)\n"))
    told = [n["text"] for n in report["notes"] if "rows it returned" in n["text"]]
    assert len(told) == 1, report["notes"]
    assert "never trained" in told[0], told[0]
    # No step was taken: the entry does not blame what training does to units.
    assert "during training" not in told[0], told[0]
