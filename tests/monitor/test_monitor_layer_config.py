"""A custom layer whose ``get_config`` leaves out a constructor parameter
(``symptoms/layer_config.py``, issue #25 part 2): reloading builds the layer with the
parameter's default, silently. Told after the cell that defines the class, naming the
class and the missing parameters; the printed statement, put in place of the learner's,
makes a saved and reloaded model keep the value. Look-alikes stay silent: a complete
get_config, one that adds a dict it cannot read, and a class that is not a Keras one."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(after_load=f"{IMPORTS}\nimport tempfile, os\n")

LAYER = """class Scale(keras.layers.Layer):
    def __init__(self, units, factor=1.0, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.factor = factor

    def call(self, x):
        return x[:, : self.units] * self.factor

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config
"""
# A model saved and loaded again: what its Scale layer's factor is after reloading.
RELOADED = """folder = tempfile.mkdtemp()
saved = os.path.join(folder, "scaled.keras")
scaled = keras.Sequential([keras.Input((4,)), Scale(2, factor=3.0)])
scaled.save(saved)
again = keras.models.load_model(saved, custom_objects={"Scale": Scale})
"""


def config_notes(report: dict) -> list[str]:
    return [n["text"] for n in report["notes"] if "get_config" in n["text"]]


def test_a_parameter_left_out_of_get_config(kernel: KernelSession) -> None:
    [text] = config_notes(checked_report(run(kernel, LAYER)))
    assert text.startswith("`Scale.__init__` (line 2 of this cell) takes `factor`, but"), text
    assert "`Scale.get_config` (line 10) does not put it in the config" in text
    run(kernel, RELOADED)
    assert value_of(kernel, "again.layers[0].factor") == 1.0  # silently the default
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == 'config.update({"units": self.units, "factor": self.factor})'
    fixed = LAYER.replace('config.update({"units": self.units})', fix)
    assert config_notes(checked_report(run(kernel, fixed))) == []
    run(kernel, RELOADED)
    assert value_of(kernel, "again.layers[0].factor") == 3.0


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    complete = LAYER.replace(
        'config.update({"units": self.units})',
        'config.update({"units": self.units, "factor": self.factor})',
    )
    assert config_notes(checked_report(run(kernel, complete))) == []
    unreadable = LAYER.replace(
        'config.update({"units": self.units})', "config.update(self.extra_config())"
    )
    assert config_notes(checked_report(run(kernel, unreadable))) == []
    plain = LAYER.replace("class Scale(keras.layers.Layer):", "class Scale:").replace(
        "super().__init__(**kwargs)", "pass"
    )
    plain = plain.replace("config = super().get_config()", "config = {}")
    assert config_notes(checked_report(run(kernel, plain))) == []
