"""A learning-rate schedule of the learner's class saved without get_config (issue #25,
``errors/families_keras_lifecycle.py``, NO_CONFIG): ``model.save`` writes the optimizer and
its schedule, whose base class's ``get_config`` raises. The entry names the schedule class
and ``get_config`` (not the save path), and the method it prints, added to the class, lets
the model save and load. A schedule with its own ``get_config`` saves quietly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SCHEDULE = """class Shrinking(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, start, ratio):
        self.first_rate = start
        self.ratio = ratio

    def __call__(self, step):
        return self.first_rate * tf.pow(self.ratio, tf.cast(step, tf.float32))
"""
DATA = """rng = np.random.default_rng(5)
feats = rng.normal(size=(64, 3)).astype("float32")
targets = feats.sum(axis=1, keepdims=True)
"""


def _train(name: str, schedule: str) -> str:
    return (
        f"{name} = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        f"{name}.compile(optimizer=keras.optimizers.SGD({schedule}), loss='mse')\n"
        f"{name}.fit(feats, targets, epochs=1, verbose=0)\n"
    )


def test_a_schedule_without_get_config_gets_the_method(
    kernel: KernelSession, tmp_path: Path
) -> None:
    runs_cleanly(kernel, DATA + SCHEDULE)
    saved = str(tmp_path / "shrinking.keras")
    cell = _train("reg", "Shrinking(0.1, 0.99)") + f"reg.save({saved!r})"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "keras-saving"
    assert "`Shrinking` derives from `LearningRateSchedule`, whose `get_config` only raises" in text
    assert "must end in" not in text
    fix = fix_of(text)
    assert fix == 'def get_config(self): return {"start": self.first_rate, "ratio": self.ratio}'
    runs_cleanly(kernel, SCHEDULE + "    " + fix + "\n")
    runs_cleanly(kernel, cell)
    load = f'back = keras.models.load_model({saved!r}, custom_objects={{"Shrinking": Shrinking}})'
    runs_cleanly(kernel, load)
    assert value_of(kernel, "float(back.optimizer._learning_rate.ratio)") == pytest.approx(0.99)


def test_a_schedule_named_in_the_namespace(kernel: KernelSession, tmp_path: Path) -> None:
    runs_cleanly(kernel, DATA + SCHEDULE)
    saved = str(tmp_path / "named.keras")
    cell = "decay = Shrinking(0.05, 0.9)\n" + _train("reg2", "decay") + f"reg2.save({saved!r})"
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == 'def get_config(self): return {"start": self.first_rate, "ratio": self.ratio}'


def test_a_schedule_with_its_own_get_config_saves_quietly(
    kernel: KernelSession, tmp_path: Path
) -> None:
    runs_cleanly(kernel, DATA)
    runs_cleanly(
        kernel,
        """class Halving(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, rate):
        self.rate = rate
    def __call__(self, step):
        return self.rate * 0.5
    def get_config(self):
        return {"rate": self.rate}
""",
    )
    saved = str(tmp_path / "halving.keras")
    runs_cleanly(kernel, _train("reg3", "Halving(0.1)") + f"reg3.save({saved!r})")
