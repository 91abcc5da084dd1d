"""A layer computing in float16 under a mixed-precision policy whose output overflowed
(issue #25, silent bugs, ``symptoms/float16_overflow.py``): the learner's own layer squares
inputs of a few hundred (rows of zeros) or exponentiates inputs of a few tens (inf); told
with the rows, the input's magnitude and the layer created with ``dtype="float32"``. Each
printed fix runs and gives the float32 result. Correct look-alikes stay silent: small
inputs under the same policy, the same inputs in float32, a built-in ReLU layer whose
zeros are its own."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import keras
from keras import layers, ops

class UnitLength(layers.Layer):
    def __init__(self, floor=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.floor = floor

    def call(self, v):
        length = ops.sqrt(ops.sum(v ** 2, axis=-1, keepdims=True))
        return v / (length + self.floor)

class SoftCount(layers.Layer):
    def call(self, v):
        return ops.sum(ops.exp(v), axis=-1)

reference = np.random.default_rng(3).normal(0, 500, size=(5, 6)).astype("float32")
reference[1] /= 100.0
expected = reference / np.linalg.norm(reference, axis=-1, keepdims=True)
"""
KERNEL = KernelSetup(after_load=SETUP)


def overflow_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "computes in float16" in n["text"]]


CELL = """keras.mixed_precision.set_global_policy("mixed_float16")
unit = UnitLength()
directions = unit(reference)
keras.mixed_precision.set_global_policy("float32")
"""


def test_rows_of_zeros_from_a_squared_input(kernel: KernelSession) -> None:
    [text] = overflow_notes(checked_report(run(kernel, CELL)))
    assert text.startswith(
        "`directions = unit(reference)` (line 3 of this cell): `unit` computes in float16 "
        "(its dtype policy is `mixed_float16`), and rows 0, 2, 3, 4 of `directions` are 0 "
        "everywhere. "
        "`reference` reaches"
    ), text
    assert "is above 65504, the largest float16 number" in text
    fix = re.findall(r"`([^`]+)`", text.split("Compute this layer in float32", 1)[1])[0]
    assert fix == 'unit = UnitLength(dtype="float32")'
    fixed = CELL.replace("unit = UnitLength()", fix)
    assert overflow_notes(checked_report(run(kernel, fixed))) == []
    out = run(kernel, "print(np.allclose(ops.convert_to_numpy(directions), expected, atol=1e-4))")
    assert out.stdout.strip() == "True"


def test_inf_from_an_exponential(kernel: KernelSession) -> None:
    cell = """keras.mixed_precision.set_global_policy("mixed_float16")
counter = SoftCount()
logits = np.full((3, 4), 20.0, dtype="float32")
totals = counter(logits)
keras.mixed_precision.set_global_policy("float32")
"""
    [text] = overflow_notes(checked_report(run(kernel, cell)))
    assert "and `totals` holds inf or NaN. `logits` reaches 20 in magnitude" in text
    assert "the exponential of anything above 11.1" in text
    # SoftCount has no __init__ of its own: Layer's takes dtype=.
    fix = re.findall(r"`([^`]+)`", text.split("Compute this layer in float32", 1)[1])[0]
    assert fix == 'counter = SoftCount(dtype="float32")'
    run(kernel, cell.replace("counter = SoftCount()", fix))
    out = run(kernel, "print(bool(np.all(np.isfinite(ops.convert_to_numpy(totals)))))")
    assert out.stdout.strip() == "True"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    small = CELL.replace("unit(reference)", "unit(reference / 1000.0)")
    small = small.replace(
        "directions = unit(reference / 1000.0)",
        "tiny = reference / 1000.0\ndirections = unit(tiny)",
    )
    assert overflow_notes(checked_report(run(kernel, small))) == []
    plain = "unit32 = UnitLength()\ndirections32 = unit32(reference)\n"
    assert overflow_notes(checked_report(run(kernel, plain))) == []
    relu = """keras.mixed_precision.set_global_policy("mixed_float16")
clip = layers.ReLU()
negative = -np.abs(reference)
clipped = clip(negative)
keras.mixed_precision.set_global_policy("float32")
"""
    assert overflow_notes(checked_report(run(kernel, relu))) == []
