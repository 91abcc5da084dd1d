"""A model of the learner's class saved to ``.keras`` without ``get_config`` (issue #25):
beside writing ``get_config``, a teacher names the other way, saving the weights alone
(``save_weights`` to a ``.weights.h5`` file) and rebuilding the class. When no
``get_config`` can be printed (an argument is not kept on ``self``), that call is the
fix; it runs, and the weights load into a rebuilt model with the same predictions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport keras")

_UNKEPT = """
class Tower(keras.Model):
    def __init__(self, floors, width):
        super().__init__()
        self.floors = [keras.layers.Dense(width, activation="relu") for _ in range(floors)]
        self.roof = keras.layers.Dense(1)

    def call(self, x):
        for floor in self.floors:
            x = floor(x)
        return self.roof(x)
"""


def test_weights_saved_alone_when_no_config_can_be_written(
    kernel: KernelSession, tmp_path: Path
) -> None:
    runs_cleanly(
        kernel,
        _UNKEPT + "tower = Tower(2, 6)\nrows = np.random.rand(4, 3).astype('float32')\n"
        "before = tower(rows).numpy()",
    )
    target = str(tmp_path / "tower.keras")
    text = failing(kernel, f"tower.save({target!r})")["explanation"]
    fix = fix_of(text)
    assert fix == f"tower.save_weights({str(tmp_path / 'tower.weights.h5')!r})"
    runs_cleanly(kernel, fix)
    runs_cleanly(
        kernel,
        "copy = Tower(2, 6)\ncopy(rows)\n"
        f"copy.load_weights({str(tmp_path / 'tower.weights.h5')!r})\n"
        "assert np.allclose(copy(rows).numpy(), before)",
    )


_KEPT = """
class Shift(keras.Model):
    def __init__(self, units, offset=1.0):
        super().__init__()
        self.units = units
        self.offset = offset
        self.dense = keras.layers.Dense(units)

    def call(self, x):
        return self.dense(x) + self.offset
"""


def test_weights_saved_alone_named_beside_get_config(kernel: KernelSession, tmp_path: Path) -> None:
    runs_cleanly(kernel, _KEPT + "shift = Shift(3)\nshift(np.ones((2, 5), 'float32'))")
    target = str(tmp_path / "shift.keras")
    text = failing(kernel, f'shift.save("{target}")')["explanation"]
    weights = f'shift.save_weights("{tmp_path / "shift.weights.h5"}")'
    assert f"save the weights alone, `{weights}`" in text
    assert fix_of(text).startswith("def get_config(self)")
    runs_cleanly(kernel, weights)
