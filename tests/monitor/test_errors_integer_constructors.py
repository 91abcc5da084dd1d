"""An op that takes only floats given a tensor made on the line from Python integers
(``errors/families_refused_dtype.py``): ``tf.math.sqrt(tf.range(1, n + 1))`` refuses the
int32 tensor ``tf.range`` made, and no name holds it. The entry names the constructor and
gives it ``dtype=tf.float32``; the printed fix runs in the kernel (in a function the cell
calls, too) and is right. The constructor asked for floats gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_range_inside_a_function_is_asked_for_floats(kernel: KernelSession) -> None:
    definition = (
        "def root_weights(n):\n"
        "    w = 1.0 / tf.math.sqrt(tf.range(1, n + 1))\n"
        "    return w / tf.reduce_sum(w)\n"
    )
    error = failing(kernel, definition + "weights = root_weights(4)")
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert "`tf.range(1, n + 1)` is an int32 tensor" in text, text
    fix = fix_of(text)
    assert fix == "w = 1.0 / tf.math.sqrt(tf.range(1, n + 1, dtype=tf.float32))"
    fixed = definition.replace("w = 1.0 / tf.math.sqrt(tf.range(1, n + 1))", fix)
    runs_cleanly(kernel, fixed + "weights = root_weights(4)")
    assert value_of(kernel, "round(float(weights[0]), 4)") == round(
        1.0 / (1 + 2**-0.5 + 3**-0.5 + 0.5), 4
    )


def test_a_constant_of_integers_on_the_line(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "offset = 2")
    error = failing(kernel, "growth = tf.math.exp(tf.constant([0, 1, offset]))")
    fix = fix_of(error["explanation"])
    assert fix == "growth = tf.math.exp(tf.constant([0, 1, offset], dtype=tf.float32))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "round(float(growth[2]), 3)") == 7.389
    # Asked for floats: no entry.
    runs_cleanly(kernel, "ok = tf.math.sqrt(tf.range(1, 5, dtype=tf.float32))")
