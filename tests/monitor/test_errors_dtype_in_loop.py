"""A dtype clash whose operand is made inside a loop of the cell and read again below
the failing line (issue #25, ``errors/dtypes.py``): one cast at the failing use would
move the error to the next line, so the fix is the line that makes the value; it runs in
the kernel and every line after it runs too."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


SWEEP = """truth = np.array([1, 0, 1, 1, 0, 0])
probs = np.array([0.9, 0.2, 0.6, 0.4, 0.7, 0.1])
for cut in (0.3, 0.5):
    guess = tf.cast(probs >= cut, tf.int32)
    gold = tf.constant(truth)
    hits = tf.reduce_sum(guess * gold)
    misses = tf.reduce_sum((1 - guess) * gold)
    print(cut, int(hits), int(misses))
"""


def test_a_dtype_made_in_a_loop_is_fixed_where_it_is_made(kernel: KernelSession) -> None:
    """``guess`` (int32, made in the loop) meets int64 labels on two lines: the fix is
    the one line that makes it, so every later line runs too."""
    error = failing(kernel, SWEEP)
    text = error["explanation"]
    assert "The cell reads `guess` again on line 7" in text
    fix = fix_of(text)
    assert fix == "guess = tf.cast(probs >= cut, tf.int64)"
    runs_cleanly(kernel, SWEEP.replace("guess = tf.cast(probs >= cut, tf.int32)", fix))
    assert value_of(kernel, "[int(hits), int(misses)]") == [2, 1]
