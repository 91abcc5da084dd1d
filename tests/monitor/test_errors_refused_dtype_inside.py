"""A refused dtype read inside an expression (issue #25, ``errors/families_refused_dtype.py``):
``tf.math.lgamma(counts + 1)`` with integer counts, ``mask * weights - offsets`` with a bool
mask. The entry names the one name holding the refused dtype and casts it where it enters:
a parameter of the function the line is in as that function's first statement, another
name at each place the failing statement reads it. Each fix runs and gives the right
value; float counts are quiet."""

from __future__ import annotations

import math

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

FACTORIALS = """def log_factorials(counts, scale):
    return tf.reduce_sum(tf.math.lgamma(counts + 1)) * scale

visits = np.array([0, 3, 1, 4], dtype="int64")
total = log_factorials(visits, 0.5)
"""


def test_an_integer_parameter_is_cast_as_the_functions_first_statement(
    kernel: KernelSession,
) -> None:
    text = failing(kernel, FACTORIALS)["explanation"]
    assert "`tf.math.lgamma` accepts only" in text
    assert "`counts` is a (4,) int64 NumPy array" in text
    assert "`counts` is a parameter of `log_factorials`" in text
    assert "Fix: as the first statement of `log_factorials`" in text
    fix = fix_of(text)
    assert fix == "counts = tf.cast(counts, tf.float32)"
    fixed = FACTORIALS.replace(
        "def log_factorials(counts, scale):\n", f"def log_factorials(counts, scale):\n    {fix}\n"
    )
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "float(total)") == pytest.approx(0.5 * math.log(144.0), rel=1e-5)
    # Counts that are floats already: quiet.
    runs_cleanly(kernel, FACTORIALS.replace('dtype="int64"', 'dtype="float32"'))


def test_a_bool_mask_in_arithmetic_is_cast_where_the_statement_reads_it(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        "mask_t = tf.constant(np.array([True, False, True]))\n"
        "gains = tf.constant([0.5, 1.5, 2.0])\noffsets = tf.constant([0.1, 0.1, 0.1])",
    )
    cell = "score = tf.reduce_sum(mask_t * gains - offsets)"
    text = failing(kernel, cell)["explanation"]
    assert "`mask_t` is a (3,) bool tensor" in text
    fix = fix_of(text)
    assert fix == "score = tf.reduce_sum(tf.cast(mask_t, tf.float32) * gains - offsets)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(score)") == pytest.approx(2.2, rel=1e-5)
