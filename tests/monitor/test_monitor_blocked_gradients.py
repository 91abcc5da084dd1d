"""A user layer's weight that ``fit`` barely moved because the layer passes it through an
op with no gradient (``training/blocked_gradients.py``): the note names the class, the
statement and the op, and prints the straight-through estimator; the fixed layer trains
its weight. The same layer written with the estimator, and a layer whose weight trains through
another path beside its rounded copy, stay quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, note_texts, run, run_quiet, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

DATA = """gen = np.random.default_rng(11)
feats = gen.uniform(-1, 1, (600, 6)).astype("float32")
target = (feats[:, 0] * 2.0 - feats[:, 3] + 0.5 * feats[:, 4]).astype("float32")[:, None]
"""

STEPPED = """class SteppedLinear(keras.layers.Layer):
    def __init__(self, width, levels=3, **kwargs):
        super().__init__(**kwargs)
        self.width, self.levels = width, levels

    def build(self, shape):
        self.mat = self.add_weight(shape=(shape[-1], self.width), initializer="glorot_uniform")
        self.shift = self.add_weight(shape=(self.width,), initializer="zeros")

    def call(self, inputs):
        unit = tf.reduce_max(tf.abs(self.mat)) / self.levels
        snapped = tf.floor(self.mat / unit + 0.5) * unit
        return tf.matmul(inputs, snapped) + self.shift

keras.utils.set_random_seed(5)
regressor = keras.Sequential([keras.Input((6,)), SteppedLinear(12), keras.layers.Activation("tanh"),
                              keras.layers.Dense(16, activation="tanh"), SteppedLinear(1)])
regressor.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
start_mat = regressor.layers[0].mat.numpy().copy()
regressor.fit(feats, target, epochs=4, batch_size=32, verbose=0)
"""


def test_a_flat_op_on_the_weight_is_named_with_the_estimator(kernel: KernelSession) -> None:
    run(kernel, DATA)
    report = run_quiet(kernel, STEPPED)
    notes = [t for t in note_texts(report) if "no gradient" in t]
    assert len(notes) == 1, note_texts(report)
    text = notes[0]
    assert "the `mat` of " in text and "`SteppedLinear` layer" in text
    assert (
        "`SteppedLinear.call` computes `snapped = tf.floor(self.mat / unit + 0.5) * unit`" in text
    )
    assert "`tf.floor` has no gradient" in text
    assert (
        report["notes"][[n["text"] for n in report["notes"]].index(text)]["course"]["section"]
        == "gradient-tape"
    )
    fix = text.split("Fix: `", 1)[1].rsplit("`", 1)[0]
    assert fix == "snapped = self.mat + tf.stop_gradient(snapped - self.mat)"
    fixed = STEPPED.replace(
        "        snapped = tf.floor(self.mat / unit + 0.5) * unit\n",
        "        snapped = tf.floor(self.mat / unit + 0.5) * unit\n        " + fix + "\n",
    )
    fixed_report = run_quiet(kernel, fixed)
    assert not [t for t in note_texts(fixed_report) if "no gradient" in t]
    # The weight now trains in (nearly) every entry.
    moved = value_of(kernel, "float(np.mean(regressor.layers[0].mat.numpy() != start_mat))")
    assert moved > 0.9


def test_a_flat_op_beside_a_path_that_trains_the_weight_is_quiet(kernel: KernelSession) -> None:
    run(kernel, DATA)
    report = run_quiet(
        kernel,
        """class RoundedReport(keras.layers.Layer):
    def build(self, shape):
        self.gain = self.add_weight(shape=(shape[-1], 4), initializer="glorot_uniform")

    def call(self, inputs):
        out = tf.matmul(inputs, self.gain)
        # The rounded copy adds nothing; the weight still trains through `out`.
        return out + 0.0 * tf.round(out)

keras.utils.set_random_seed(6)
probe = keras.Sequential([keras.Input((6,)), RoundedReport(), keras.layers.Dense(1)])
probe.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
probe.fit(feats, target, epochs=3, batch_size=32, verbose=0)
""",
    )
    assert not [t for t in note_texts(report) if "no gradient" in t], note_texts(report)
