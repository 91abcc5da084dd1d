"""A Dataset.map (or filter) lambda that only forwards to the learner's own function but
calls it short: ``pairs.map(lambda s: jitter(s))`` where ``def jitter(signal, target)``
takes both components (issue #25, ``errors/calls.py``). The function's signature is read
from its code object (never called), and the fix forwards every component,
``lambda s, y: jitter(s, y)``, instead of an adapter that would call ``jitter`` with one
argument again. The printed fix runs and gives the function's elements; the lambda that
forwards both, and a forwarding lambda to a one-parameter function, behave as before."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

# Multiples of 1/16 (exact in float32), so "plus 1.0" compares exactly.
DATA = """waves = (np.arange(160).reshape(10, 16) / 16).astype("float32")
tags = np.arange(10) % 3
pairs = tf.data.Dataset.from_tensor_slices((waves, tags))

def jitter(signal, target):
    return signal + 1.0, target * 2

def keep_class(row, cls, threshold=1):
    return cls >= threshold

def double(signal):
    return signal * 2.0
"""


def test_a_map_lambda_calling_a_two_parameter_function_with_one(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "noisy = pairs.map(lambda s: jitter(s))")
    text = error["explanation"]
    assert "`jitter` itself takes every component" in text
    fix = fix_of(text)
    assert fix == "pairs.map(lambda s, y: jitter(s, y))"
    runs_cleanly(kernel, f"noisy = {fix}")
    assert value_of(kernel, "[int(t) for _, t in noisy.take(3)]") == [0, 2, 4]
    assert value_of(kernel, "float(next(iter(noisy))[0][0] - waves[0, 0])") == 1.0
    runs_cleanly(kernel, "fine = pairs.map(lambda s, t: jitter(s, t))")
    # A forwarding lambda to a one-parameter function keeps the adapter that passes the
    # label on.
    error = failing(kernel, "twice = pairs.map(lambda s: double(s))")
    assert fix_of(error["explanation"]) == "pairs.map(lambda s, y: (double(s), y))"


def test_a_filter_lambda_with_a_defaulted_parameter(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "some = pairs.filter(lambda r: keep_class(r))")
    fix = fix_of(error["explanation"])
    assert fix == "pairs.filter(lambda r, y: keep_class(r, y))"
    runs_cleanly(kernel, f"some = {fix}")
    assert value_of(kernel, "sorted({int(t) for _, t in some})") == [1, 2]
