"""A model ending in a layer of the user's own (issue #25, ``training/loss_agreement.py``,
``layer_output_width``): such a layer's ``units`` may be a hidden width (an ensemble of
small heads whose answers are averaged to one value), so the output-against-targets check
does not read it as the output's width and stays quiet when the model returns one value per
example. A library Dense of several units ending a model given one target per example is
still told, and the fix (one unit) is quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, note_texts, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """rs = np.random.default_rng(7)
feats = rs.normal(size=(512, 3)).astype("float32")
target = (feats[:, :1] * 1.5 - feats[:, 1:2]).astype("float32")

class AveragedHeads(keras.layers.Layer):
    def __init__(self, heads=3, units=12, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.heads = [keras.Sequential([keras.layers.Dense(units, activation="tanh"),
                                        keras.layers.Dense(1)]) for _ in range(heads)]

    def call(self, inputs):
        return tf.reduce_mean(tf.stack([h(inputs) for h in self.heads], axis=0), axis=0)
"""


def width_notes(kernel: KernelSession, code: str) -> list[str]:
    return [t for t in note_texts(checked_report(run(kernel, code))) if "values per example" in t]


def test_own_layer_with_a_units_attribute_is_not_read_as_its_width(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = """ensemble = keras.Sequential([keras.Input(shape=(3,)), AveragedHeads(name="avg")])
ensemble.compile(optimizer="adam", loss="mse")
ensemble.fit(feats, target, epochs=2, batch_size=64, verbose=0)
"""
    assert width_notes(kernel, cell) == []


def test_library_dense_of_several_units_is_still_told(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    line = "keras.layers.Dense(5)"
    cell = f"""hidden = keras.layers.Dense(8, activation="relu")
wide = keras.Sequential([keras.Input(shape=(3,)), hidden, {line}])
wide.compile(optimizer="adam", loss="mse")
wide.fit(feats, target, epochs=1, batch_size=64, verbose=0)
"""
    [text] = width_notes(kernel, cell)
    assert "(None, 5)" in text and "`target`" in text
    assert width_notes(kernel, cell.replace(line, "keras.layers.Dense(1)")) == []
