"""A Sequential model's inputs or layer outputs read before it was built
(``errors/families_unbuilt_sequential.py``).

``keras.Model(scorer.inputs, ...)`` of a ``keras.Sequential`` written without
``keras.Input`` fails: it has no inputs yet. The entry says why and gives the
``keras.Input`` to put first in its list, with the shape of one example of the notebook's
data; inserted, the cell runs and the new model gives each layer's output. With data of
two feature counts the shape is not guessed. The same model with its Input runs without
an entry."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

DATA = """readings = np.random.default_rng(2).normal(size=(120, 6)).astype("float32")
grades = np.zeros(120, dtype="float32")
"""

CELL = """scorer = keras.Sequential([
    keras.layers.Dense(8, activation="relu", name="hidden_a"),
    keras.layers.Dense(4, activation="relu", name="hidden_b"),
    keras.layers.Dense(1, name="score"),
])
probe = keras.Model(scorer.inputs, [scorer.get_layer(n).output for n in ("hidden_a", "score")])"""


def test_the_input_shape_from_the_data(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, CELL)
    text = error["explanation"]
    assert error["course"]["section"] == "keras-model-api"
    assert "`scorer` is a `keras.Sequential` made without `keras.Input`" in text, text
    assert "`readings` give one example of shape (6,)" in text
    assert "in the list of `scorer = keras.Sequential([` (line 1 of this cell)" in text
    spans = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert spans[-1] == "keras.Input(shape=(6,)),"
    fixed = CELL.replace("keras.Sequential([\n", "keras.Sequential([\n    " + spans[-1] + "\n", 1)
    runs_cleanly(kernel, fixed + "\nparts = probe(readings[:5])")
    assert value_of(kernel, "[list(p.shape) for p in parts]") == [[5, 8], [5, 1]]


def test_data_of_two_shapes_leaves_the_shape_open(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA + "others = np.ones((30, 9), dtype='float32')\n")
    text = failing(kernel, CELL)["explanation"]
    assert "`keras.Input(shape=...)`, in the list of" in text, text
    assert "Fix:" not in text


def test_a_sequential_with_its_input_stays_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    runs_cleanly(
        kernel,
        CELL.replace("keras.Sequential([\n", "keras.Sequential([\n    keras.Input(shape=(6,)),\n"),
    )
