"""A NumPy method asked of a tensor written as an expression whose value no name holds
(``tf.concat(parts, 0).var(axis=1)``): Python's message names the tensor class, which is
enough to say what the receiver is, without reading its value. The entry names the
method, the TensorFlow function that does it (the call's arguments carried over) and the
cell's later lines that ask the same of the same expression; each fix runs and computes
what NumPy would have. The same method on a NumPy array is no error; a method a tensor
lacks but NumPy also lacks gets no such reading (``errors/families_library_values.py``)."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
pieces = [tf.constant(np.arange(6, dtype="float32").reshape(2, 3) + k) for k in range(4)]
"""
CELL = """centre = tf.concat(pieces, 0).sum(axis=1)
spread = tf.concat(pieces, 0).std(axis=1)
print(float(tf.reduce_max(spread)))
"""


def test_method_of_an_unnamed_tensor(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, CELL)
    text = error["explanation"]
    assert "`tf.concat(pieces, 0)` is a TensorFlow tensor (an EagerTensor)" in text, text
    assert "`.sum` is a NumPy array's method" in text
    assert "the TensorFlow function is `tf.reduce_sum(tf.concat(pieces, 0), axis=1)`" in text
    later = "spread = tf.math.reduce_std(tf.concat(pieces, 0), axis=1)"
    assert f"The same holds further down: `{later}` (line 2)." in text
    first = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])[-1]
    assert first == "centre = tf.reduce_sum(tf.concat(pieces, 0), axis=1)"
    fixed = CELL.replace("centre = tf.concat(pieces, 0).sum(axis=1)", first).replace(
        "spread = tf.concat(pieces, 0).std(axis=1)", later
    )
    report = checked_report(run(kernel, fixed))
    assert report["error"] is None
    expected = "np.concatenate([p.numpy() for p in pieces])"
    assert value_of(kernel, f"bool(np.allclose(centre, {expected}.sum(axis=1)))") is True
    assert value_of(kernel, f"bool(np.allclose(spread, {expected}.std(axis=1)))") is True


def test_the_same_methods_on_an_array_are_no_error(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(kernel, CELL.replace("tf.concat(pieces, 0)", "np.concatenate(pieces, 0)"))
