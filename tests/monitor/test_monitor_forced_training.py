"""``training=True`` written as a literal in a custom Keras layer's ``call`` (issue #25, a
training flag that keeps Dropout on at inference): told in the cell that defines the
class, before any fit, naming the class, the layers it forces and the fix in the class's
own statements. The fix applied makes two predictions of one input agree and gets no
entry; a layer that passes its ``training`` argument through stays silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

CELL = """class NoisyMix(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.mix = keras.layers.Dense(6)
        self.thin = keras.layers.Dropout(0.5)

    def call(self, inputs, training=None):
        mixed = self.thin(self.mix(inputs), training=True)
        return mixed

mixer = NoisyMix()
probe = np.ones((4, 6), "float32")
same = bool(np.allclose(mixer(probe), mixer(probe)))
"""


def flag_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "training-argument"
    ]


def test_forced_flag_told_where_the_layer_is_defined(kernel: KernelSession) -> None:
    notes = flag_notes(checked_report(run(kernel, CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`NoisyMix.call` passes `training=True` to `self.thin` (line 8: "
        "`mixed = self.thin(self.mix(inputs), training=True)`)"
    ), text
    assert "`Dropout` drops units at random" in text
    fix = "mixed = self.thin(self.mix(inputs), training=training)"
    assert f"Pass the flag through: `{fix}`." in text
    assert value_of(kernel, "same") is False
    fixed = CELL.replace("mixed = self.thin(self.mix(inputs), training=True)", fix)
    assert flag_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "same") is True


def test_flag_passed_through_stays_silent(kernel: KernelSession) -> None:
    silent = CELL.replace("training=True)", "training=training)")
    assert flag_notes(checked_report(run(kernel, silent))) == []


# A noise layer's subclass that forces its own base into training mode is a layer made to
# sample at inference too (Monte Carlo dropout): built so on purpose, never told.
ALWAYS_ON = """class KeptNoise(keras.layers.GaussianNoise):
    def call(self, inputs, training=None):
        return super().call(inputs, training=True)

sampler_net = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(4), KeptNoise(0.3)])
draws = np.stack([sampler_net.predict(np.ones((3, 5), "float32"), verbose=0) for _ in range(4)])
spread = float(draws.std(axis=0).mean())
"""


def test_always_on_noise_subclass_stays_silent(kernel: KernelSession) -> None:
    assert flag_notes(checked_report(run(kernel, ALWAYS_ON))) == []
    assert value_of(kernel, "spread") > 0.0
