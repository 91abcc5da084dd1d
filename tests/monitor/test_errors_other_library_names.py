"""Another library's attribute name asked of a Keras layer (``errors/other_library_names.py``):
PyTorch's ``running_mean``/``running_var`` of a BatchNormalization, ``weight`` of a Dense
or an Embedding, ``p`` of a Dropout. The entry gives Keras's name, renames the failing
line and the cell's later lines reading such names; the fixed cell runs and reads the
same weights. A name of the user's own class, and Keras's names, get no such reading."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import keras
net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="lift"),
                        keras.layers.BatchNormalization(name="scale"), keras.layers.Dropout(0.25)])
net.compile(optimizer="sgd", loss="mse")
net.fit(np.random.default_rng(0).normal(2.0, 1.0, (24, 3)), np.zeros((24, 4)), epochs=1, verbose=0)
"""
CELL = """norm = net.layers[1]
centre = norm.running_mean.numpy()
spread = norm.running_var.numpy()
"""


def test_batch_normalization_statistics_under_pytorch_names(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, CELL)
    text = error["explanation"]
    assert error["course"]["section"] == "training-argument"
    assert "`running_mean` is another library's name (PyTorch's)" in text, text
    assert "a Keras `BatchNormalization` keeps it as `moving_mean`" in text
    assert "`running_var` is `moving_variance`" in text
    fixes = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert fixes == [
        "centre = norm.moving_mean.numpy()",
        "spread = norm.moving_variance.numpy()",
    ]
    fixed = CELL.replace("centre = norm.running_mean.numpy()", fixes[0]).replace(
        "spread = norm.running_var.numpy()", fixes[1]
    )
    assert checked_report(run(kernel, fixed))["error"] is None
    same = "bool(np.array_equal(spread, net.get_layer('scale').moving_variance.numpy()))"
    assert value_of(kernel, same) is True


def test_weight_and_rate_under_pytorch_names(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "lift = net.layers[0]\nw = lift.weight")
    assert "a Keras `Dense` keeps it as `kernel`" in error["explanation"]
    error = failing(kernel, "drop = net.layers[2]\nkept = 1 - drop.p")
    assert "a Keras `Dropout` keeps it as `rate`" in error["explanation"]
    runs_cleanly(kernel, "kept = 1 - net.layers[2].rate")
    assert value_of(kernel, "kept") == 0.75


def test_a_name_of_the_learners_own_class_gets_no_such_reading(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(kernel, "class Box:\n    pass\n\nbox = Box()")
    execution = run(kernel, "box.running_mean", ok=False)
    assert execution.reply["status"] == "error"
    error = checked_report(execution)["error"]
    assert error is None or "PyTorch" not in (error.get("explanation") or "")
