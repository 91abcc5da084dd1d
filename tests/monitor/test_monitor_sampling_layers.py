"""Monte Carlo passes of a model whose own layer class samples only when told
``training``, taken in inference mode (issue #25, ``symptoms/repeated_draws.py``).

A layer of the learner's that adds noise with ``keras.random.normal`` (or drops units
with ``tf.nn.dropout``) only under ``if training:`` gives identical passes when the model
is called without the flag: told with its class named and the fix that passes
``training=True``; the fix, applied, gives passes that differ and no note. A layer of the
learner's that reads ``training`` but draws nothing, and a deterministic model averaged
on purpose, stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

LAYERS = """keras.utils.set_random_seed(5)
pts = np.random.default_rng(5).uniform(-2, 2, size=(40, 3)).astype("float32")

class JitterDense(keras.layers.Layer):
    def __init__(self, units, scale=0.2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.scale = scale

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")

    def call(self, inputs, training=None):
        out = tf.matmul(inputs, self.kernel)
        if training:
            out = out + keras.random.normal(tf.shape(out), stddev=self.scale)
        return out

class DropUnits(keras.layers.Layer):
    def call(self, inputs, training=False):
        return tf.nn.dropout(inputs, rate=0.3) if training else inputs

class ScaleOnTrain(keras.layers.Layer):
    def call(self, inputs, training=False):
        return inputs * 0.5 if training else inputs

inp = keras.Input((3,))
regressor = keras.Model(inp, keras.layers.Dense(1)(JitterDense(8)(inp)))
inp2 = keras.Input((3,))
dropper = keras.Model(inp2, keras.layers.Dense(2)(DropUnits()(keras.layers.Dense(8)(inp2))))
inp3 = keras.Input((3,))
steady = keras.Model(inp3, keras.layers.Dense(2)(ScaleOnTrain()(inp3)))
"""


def notes_about(code: str, kernel: KernelSession, word: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if word in n["text"]]


def test_own_sampling_layer_called_without_training(kernel: KernelSession) -> None:
    run(kernel, LAYERS)
    cell = (
        "runs = tf.stack([regressor(pts) for _ in range(30)])\n"
        "band = tf.math.reduce_std(runs, axis=0)"
    )
    [text] = notes_about(cell, kernel, "identical")
    assert text.startswith("`runs` holds 30 passes of `regressor` over the same inputs")
    assert "`JitterDense` layers draw nothing" in text
    assert "samples only when `training` is true" in text
    fix = fix_in(text)
    assert fix == "runs = tf.stack([regressor(pts, training=True) for _ in range(30)])"
    assert notes_about(fix + "\nband = tf.math.reduce_std(runs, axis=0)", kernel, "identical") == []
    assert value_of(kernel, "float(tf.reduce_max(band)) > 1e-4") is True


def test_own_dropout_layer_sampled_with_predict(kernel: KernelSession) -> None:
    run(kernel, LAYERS)
    cell = (
        "outs = []\n"
        "for rep in range(10):\n"
        "    outs.append(dropper.predict(pts, verbose=0))\n"
        "outs = np.array(outs)\n"
        "print(outs.std(axis=0).mean())"
    )
    [text] = notes_about(cell, kernel, "identical")
    assert "`DropUnits` layers draw nothing" in text
    fix = fix_in(text)
    assert fix == "outs.append(dropper(pts, training=True).numpy())"
    fixed = cell.replace("outs.append(dropper.predict(pts, verbose=0))", fix)
    assert notes_about(fixed, kernel, "identical") == []
    assert value_of(kernel, "bool(outs.std(axis=0).mean() > 1e-4)") is True


def test_deterministic_models_stay_silent(kernel: KernelSession) -> None:
    run(kernel, LAYERS)
    # A layer of the learner's that reads training but draws nothing.
    cell = "reps = np.stack([steady(pts).numpy() for _ in range(4)])\nprint(reps.std(axis=0).max())"
    assert notes_about(cell, kernel, "passes") == []
    # Already sampling.
    cell = "mc = np.stack([regressor(pts, training=True).numpy() for _ in range(4)])"
    assert notes_about(cell, kernel, "passes") == []
