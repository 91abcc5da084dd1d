"""A broadcast that turns two vectors into a matrix, ``(N, 1)`` against ``(N,)`` in a loss or
a metric (issue #25, silent bugs): found in a cell's own expressions (eager) and in the
graphs traced during a cell (a tf.function, with a known or an unknown batch size). The
entry names both operands as written, their shapes and the ``(N, N)`` result, and gives
two fixes in the user's names; each fix is run in the kernel and gets no entry. Correct
look-alikes (an outer difference meant as one, a bias, equal shapes) stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """readings = np.linspace(0.0, 1.0, 48).astype("float32").reshape(-1, 1)
wanted = (2.0 * readings[:, 0] - 1.0).astype("float32")   # (48,)
gain = tf.Variable([[0.5]])
"""


def broadcast_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "broadcasting"
    ]


def fixes_of(text: str) -> tuple[str, str]:
    spans = re.findall(r"`([^`]+)`", text.split("Make the shapes agree: ", 1)[1].split(". ")[0])
    assert len(spans) == 2, text
    return spans[0], spans[1]


def test_eager_loss_over_a_column_and_a_vector(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """for _ in range(3):
    with tf.GradientTape() as tape:
        guess = readings @ gain
        cost = tf.reduce_mean(tf.square(guess - wanted))
    gain.assign_sub(0.1 * tape.gradient(cost, gain))
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`guess - wanted` (line 4 of this cell) broadcasts `guess`")
    assert "a (48, 1) float32 tensor" in text and "a (48,) float32 NumPy array" in text
    assert "the result is (48, 48)" in text
    squeezed, widened = fixes_of(text)
    assert squeezed == "tf.squeeze(guess, axis=-1) - wanted"
    assert widened == "guess - wanted[:, None]"
    for fix in (squeezed, widened):
        fixed = cell.replace("guess - wanted", fix)
        report = checked_report(run(kernel, fixed))
        assert broadcast_notes(report) == [], fix


def test_traced_loss_names_the_line_in_the_function(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """@tf.function
def nudge(inp, goal):
    with tf.GradientTape() as tape:
        approx = inp @ gain
        gap = tf.reduce_mean(tf.math.squared_difference(goal, approx))
    gain.assign_sub(0.1 * tape.gradient(gap, gain))
    return gap

nudge(readings, wanted)
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.math.squared_difference(goal, approx)` (line 5 of this cell, in `nudge`) "
        "broadcasts `approx`, a (48, 1) float32 tensor, against `goal`, a (48,) float32 tensor"
    )
    assert "(48, 48)" in text
    squeezed, widened = fixes_of(text)
    assert squeezed == "tf.math.squared_difference(goal, tf.squeeze(approx, axis=-1))"
    for fix in (squeezed, widened):
        report = checked_report(
            run(kernel, cell.replace("tf.math.squared_difference(goal, approx)", fix))
        )
        assert broadcast_notes(report) == [], fix
    # Calls that reuse the trace cost nothing and say nothing again.
    assert broadcast_notes(checked_report(run(kernel, "nudge(readings, wanted)"))) == []


def test_unknown_batch_in_a_metric(kernel: KernelSession) -> None:
    cell = """@tf.function(input_signature=[tf.TensorSpec([None, 1]), tf.TensorSpec([None])])
def hit_rate(scores, labels):
    return tf.reduce_mean(tf.cast(tf.equal(tf.round(scores), labels), tf.float32))

hit_rate(tf.ones((10, 1)), tf.ones((10,)))
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "`tf.equal(tf.round(scores), labels)`" in notes[0]
    assert "a (None, 1) float32 tensor" in notes[0] and "(None, None)" in notes[0]
    squeezed, _ = fixes_of(notes[0])
    assert squeezed == "tf.equal(tf.squeeze(tf.round(scores), axis=-1), labels)"
    fixed = cell.replace("tf.equal(tf.round(scores), labels)", squeezed)
    assert broadcast_notes(checked_report(run(kernel, fixed))) == []


def test_keras_train_step_loss(kernel: KernelSession) -> None:
    cell = """class Scorer(keras.Model):
    def __init__(self):
        super().__init__()
        self.head = keras.layers.Dense(1)

    def call(self, inputs):
        return self.head(inputs)

    def train_step(self, data):
        feats, goal = data
        with tf.GradientTape() as tape:
            score = self(feats, training=True)
            miss = tf.reduce_mean(tf.abs(score - goal))
        grads = tape.gradient(miss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"miss": miss}

scorer = Scorer()
scorer.compile(optimizer="sgd")
scorer.fit(np.ones((32, 3), "float32"), np.zeros(32, "float32"), batch_size=8, epochs=1, verbose=0)
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`score - goal` (line 13 of this cell, in `train_step`) broadcasts")
    # Keras traced the step for batches of 8.
    assert "a (8, 1) float32 tensor" in text and "the result is (8, 8)" in text
    squeezed, widened = fixes_of(text)
    assert squeezed == "tf.squeeze(score, axis=-1) - goal"
    for fix in (squeezed, widened):
        assert broadcast_notes(checked_report(run(kernel, cell.replace("score - goal", fix)))) == []


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    eager = """col = readings @ gain                   # (48, 1)
col_too = readings * 2.0                # (48, 1)
flat = wanted * 2.0                     # (48,)
shift = tf.constant([0.25])             # (1,)
pairwise = tf.reduce_sum(tf.abs(wanted[:, None] - wanted[None, :]))
spread = tf.reduce_mean(tf.abs(tf.expand_dims(flat, -1) - flat))
biased = tf.reduce_mean(col + shift)
same_cols = tf.reduce_mean(tf.square(col - col_too))
same_flat = tf.reduce_mean(tf.square(flat - wanted))
"""
    assert broadcast_notes(checked_report(run(kernel, eager))) == []
    traced = """@tf.function
def spread_of(v):
    return tf.reduce_mean(tf.abs(v[:, None] - v)) + tf.reduce_mean(tf.reshape(v, [-1, 1]) - v)

@tf.function
def with_bias(x):
    return tf.reduce_sum(x @ gain + tf.constant([0.1]))

spread_of(wanted)
with_bias(readings)
"""
    assert broadcast_notes(checked_report(run(kernel, traced))) == []


def test_numpy_operands_keep_numpy_in_both_fixes(kernel: KernelSession) -> None:
    """A metric computed in NumPy: the fixes index the arrays (``[:, 0]``, ``[:, None]``)
    and the result stays a NumPy number, as the user's line computed; ``tf.squeeze``
    would have made it a tensor."""
    run(kernel, "votes = np.linspace(-1.0, 1.0, 36).reshape(36, 1)\ntruth = np.ones(36)\n")
    cell = """flagged = votes > 0.0
agreement = np.mean(flagged == truth)
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "a (36, 1) bool NumPy array" in notes[0], notes[0]
    squeezed, widened = fixes_of(notes[0])
    assert squeezed == "flagged[:, 0] == truth"
    assert widened == "flagged == truth[:, None]"
    for fix in (squeezed, widened):
        report = checked_report(run(kernel, cell.replace("flagged == truth", fix)))
        assert broadcast_notes(report) == [], fix
        kind = run(kernel, "print(type(agreement).__module__, float(agreement))").stdout
        assert kind.split() == ["numpy", "0.5"], (fix, kind)


def test_a_numpy_column_against_a_tensor_is_indexed_not_squeezed(kernel: KernelSession) -> None:
    """The (N, 1) operand is the NumPy one: it is indexed in NumPy; the tensor stays a
    tensor and so does the result."""
    run(kernel, "levels = np.arange(20, dtype='float32').reshape(20, 1)\n")
    cell = """ramp = tf.range(20, dtype=tf.float32)
drift = tf.reduce_mean(tf.abs(levels - ramp))
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    squeezed, widened = fixes_of(notes[0])
    assert squeezed == "levels[:, 0] - ramp"
    assert widened == "levels - ramp[:, None]"
    for fix in (squeezed, widened):
        report = checked_report(run(kernel, cell.replace("levels - ramp", fix)))
        assert broadcast_notes(report) == [], fix
        shown = run(kernel, "print(type(drift).__name__, float(drift))").stdout.split()
        assert shown == ["EagerTensor", "0.0"], (fix, shown)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


@pytest.mark.parametrize(
    ("flat", "dtype"),
    [
        ("tf.cast(measured, tf.float32)", "float32"),
        ("tf.constant([20.0, 18.0, 26.0])", ""),
        ("-(-np.float32(measured))", "float32"),
        ("measured.astype('float32') * 1.0", ""),
    ],
)
def test_an_operand_computed_on_the_spot(kernel: KernelSession, flat: str, dtype: str) -> None:
    """A cast, an element-wise function, a sign, arithmetic with a number or a literal list
    keep the shape of what they work on: the broadcast is found through them."""
    run(
        kernel,
        "forecast = tf.constant([[21.0], [17.5], [25.0]])\nmeasured = np.array([20, 18, 26])",
    )
    cell = f"mean_error = float(tf.reduce_mean(tf.abs(forecast - {flat})))\n"
    [text] = broadcast_notes(checked_report(run(kernel, cell)))
    kind = "NumPy array" if "np." in flat or "astype" in flat else "tensor"
    described = f"a (3,) {dtype} {kind}" if dtype else f"a (3,) {kind}"
    assert f"against `{flat}`, {described}: the result is (3, 3)" in text, text
    assert shown(kernel, "round(mean_error, 2)") == "3.72"  # the wrong number, no error
    for fix in fixes_of(text):
        fixed = f"mean_error = float(tf.reduce_mean(tf.abs({fix})))\n"
        assert broadcast_notes(checked_report(run(kernel, fixed))) == []
        assert shown(kernel, "round(mean_error, 2)") == "0.83"


def test_computed_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(
        kernel,
        "forecast = tf.constant([[21.0], [17.5], [25.0]])\nmeasured = np.array([20, 18, 26])",
    )
    for cell in (
        # Already fixed: a squeeze or an index is not followed, and the shapes agree.
        "a = tf.reduce_mean(tf.abs(tf.squeeze(forecast, -1) - tf.cast(measured, tf.float32)))",
        "b = tf.reduce_mean(tf.abs(forecast - tf.cast(measured, tf.float32)[:, None]))",
        # A number against a column: a scale, not two vectors.
        "c = tf.reduce_mean(forecast * 2.0 - 1.0)",
        # Two columns computed on the spot.
        "d = tf.reduce_mean(tf.abs(forecast - tf.cast(measured[:, None], tf.float32)))",
    ):
        assert broadcast_notes(checked_report(run(kernel, cell))) == [], cell


def test_a_mask_made_on_the_spot_against_labels(kernel: KernelSession) -> None:
    """``(scores < 0.5) == labels``: a comparison with a number keeps the shape of what it
    compares, so a (N, 1) column cut into a mask and compared with (N,) labels is found, and
    both printed fixes give the accuracy of the vectors (not of the (N, N) matrix)."""
    run(kernel, "closeness = np.linspace(0.0, 1.0, 40).reshape(40, 1)\n")
    run(kernel, "same_pair = (np.linspace(0.0, 1.0, 40) < 0.5).astype(int)\n")
    cell = "hit_rate = np.mean((closeness < 0.5) == same_pair)\n"
    [text] = broadcast_notes(checked_report(run(kernel, cell)))
    assert "broadcasts `closeness < 0.5`, a (40, 1) bool NumPy array" in text, text
    assert "`same_pair`, a (40,) int64 NumPy array" in text, text
    assert shown(kernel, "hit_rate") == "0.5"  # the wrong number, no error
    for fix in fixes_of(text):
        report = checked_report(run(kernel, f"hit_rate = np.mean({fix})\n"))
        assert broadcast_notes(report) == [], fix
        assert shown(kernel, "hit_rate") == "1.0", fix


def test_a_column_against_the_layers_own_parameter_vector_stays_silent(
    kernel: KernelSession,
) -> None:
    """``(None, 1)`` against a ``(K,)`` vector built from a layer's weights (cut points of an
    ordinal head, centres of radial features) is every example against every parameter
    on purpose: no entry, where a per-example vector in the same place still gets one."""
    cell = """class RankCuts(keras.layers.Layer):
    def build(self, input_shape):
        self.low = self.add_weight(shape=(1,), initializer="zeros", name="low")
        self.steps = self.add_weight(shape=(4,), initializer="ones", name="steps")

    def call(self, rating):
        cuts = tf.concat([self.low, self.low + tf.cumsum(tf.abs(self.steps))], axis=0)
        return rating - cuts

class Bumps(keras.layers.Layer):
    def build(self, input_shape):
        self.centres = self.add_weight(shape=(6,), initializer="random_normal", name="c")

    def call(self, height):
        return tf.exp(-tf.square(height - self.centres))

rng = np.random.default_rng(5)
wines = rng.normal(size=(100, 4)).astype("float32")  # a last batch of 4: traced as None
stars = rng.integers(0, 2, size=(100, 5)).astype("float32")
inp = keras.Input((4,))
ranker = keras.Model(inp, RankCuts()(keras.layers.Dense(1)(inp)))
ranker.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True))
ranker.fit(wines, stars, batch_size=16, epochs=1, verbose=0)
bumpy = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1), Bumps(),
                          keras.layers.Dense(1)])
bumpy.compile("sgd", "mse")
bumpy.fit(wines, wines[:, :1], batch_size=16, epochs=1, verbose=0)
"""
    assert broadcast_notes(checked_report(run(kernel, cell))) == []
    # The same subtraction against a per-example vector fed by fit's batches is told.
    told = """class Judge(keras.Model):
    def __init__(self):
        super().__init__()
        self.out = keras.layers.Dense(1)

    def call(self, inputs):
        return self.out(inputs)

    def train_step(self, data):
        feats, marks = data
        with tf.GradientTape() as tape:
            err = tf.reduce_mean(tf.square(self(feats, training=True) - marks))
        grads = tape.gradient(err, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"err": err}

judge = Judge()
judge.compile(optimizer="sgd")
judge.fit(wines, wines[:, 0], epochs=1, verbose=0)
"""
    [text] = broadcast_notes(checked_report(run(kernel, told)))
    assert "self(feats, training=True) - marks" in text, text
