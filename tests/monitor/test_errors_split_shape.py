"""A random op given its sizes as separate positional arguments, NumPy's ``randn(16, 2)``
style (``errors/families_arguments.py``): TensorFlow's message only says the shape must
be a vector; the entry says the first number alone became ``shape`` and the next filled
the parameter after it, and the fix, one tuple, runs in the kernel."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]


def test_sizes_as_separate_arguments_of_random_ops(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "code_size = 5")
    error = failing(kernel, "noise_batch = tf.random.normal(32, code_size)")
    text = error["explanation"]
    assert (
        "the first alone became `shape` and `code_size` filled the next parameter, `mean`" in text
    )
    fix = fix_of(text)
    assert fix == "noise_batch = tf.random.normal((32, code_size))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(noise_batch.shape)") == [32, 5]
    error = failing(kernel, "grid_u = tf.random.uniform(3, 4)")
    fix = fix_of(error["explanation"])
    assert fix == "grid_u = tf.random.uniform((3, 4))"
    runs_cleanly(kernel, fix)
    # The shape given as one tuple, with a mean after it, stays quiet.
    runs_cleanly(kernel, "ok = tf.random.normal((2, code_size), 1.0)")
