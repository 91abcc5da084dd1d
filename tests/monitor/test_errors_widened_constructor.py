"""A float32 tensor made by a TensorFlow constructor at its default dtype meets float64
data (issue #25, ``errors/dtypes.py``, ``_widened_constructors``): the learner made that
tensor, so the entry's fix gives the constructor ``dtype=tf.float64`` and keeps the float64
data as it is, never casting it down. The fix applied runs and the result stays float64.
A float32 side that holds values of its own (a variable) keeps the cast fix, and so does
float64 data that only NumPy's default made float64 (no cell spells float64)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """draws = np.random.default_rng(3).normal(size=(6, 6))
gram = tf.constant(draws @ draws.T, dtype=tf.float64)
scale = tf.Variable(tf.ones((6, 6)))
"""


def test_identity_at_its_default_dtype_is_widened(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = "precision = tf.linalg.inv(gram + 0.1 * tf.linalg.eye(6))"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "dtype-casting"
    assert "`tf.linalg.eye(6)` makes float32 unless given a dtype" in text, text
    assert "tf.cast(gram" not in text
    fix = fix_of(text)
    assert fix == "precision = tf.linalg.inv(gram + 0.1 * tf.linalg.eye(6, dtype=tf.float64))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "precision.dtype.name") == "float64"


def test_random_draws_at_their_default_dtype_are_widened(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = "jittered = gram + tf.random.normal([6, 6], stddev=0.01)"
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix == "jittered = gram + tf.random.normal([6, 6], stddev=0.01, dtype=tf.float64)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "jittered.dtype.name") == "float64"


def test_float32_values_of_their_own_keep_the_cast(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    text = failing(kernel, "blended = gram * scale")["explanation"]
    assert "makes float32 unless given a dtype" not in text
    text = failing(kernel, "mixed = gram + scale * tf.eye(6)")["explanation"]
    assert "makes float32 unless given a dtype" not in text
    assert "tf.eye(6, dtype=tf.float64)" not in text
