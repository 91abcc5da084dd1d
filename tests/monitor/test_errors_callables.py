"""A function called where TensorFlow or Keras wanted the function itself (issue #25,
``errors/families_callables.py``): the entry names the call the learner wrote and what
the API does with a function; the fix as printed runs and does what was meant, and the
correct cells (the function passed, a factory that returns one) get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """def make_rows(n):
    for i in range(n):
        yield np.array([i, i + 1], np.int32)

def halve(x):
    return tf.cast(x, tf.float32) / 2

def scaler(factor):
    return lambda x: tf.cast(x, tf.float32) * factor

ids = tf.data.Dataset.range(4)
spec = tf.TensorSpec((2,), tf.int32)
"""


def test_a_generator_object_given_to_from_generator(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = "rows = tf.data.Dataset.from_generator(make_rows(3), output_signature=spec)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "tf-data"
    assert "`make_rows(3)` calls `make_rows` right here" in text
    assert "a generator object runs out after one pass" in text
    fix = fix_of(text)
    assert fix == cell.replace("make_rows(3)", "lambda: make_rows(3)")
    runs_cleanly(kernel, fix)
    # Each pass over the dataset starts a fresh generator: two epochs see every row.
    assert value_of(kernel, "[len(list(rows)), len(list(rows))]") == [3, 3]


def test_a_function_called_inside_map_and_tf_function(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "halves = ids.map(halve(tf.constant(1)))")
    text = error["explanation"]
    assert "`halve(tf.constant(1))` calls `halve` right here" in text and "`ids.map`" in text
    fix = fix_of(text)
    assert fix == "halves = ids.map(halve)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "[float(v) for v in halves]") == [0.0, 0.5, 1.0, 1.5]
    error = failing(kernel, "fast_halve = tf.function(halve(tf.constant(3)))")
    assert error["course"]["section"] == "tracing"
    fix = fix_of(error["explanation"])
    assert fix == "fast_halve = tf.function(halve)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(fast_halve(tf.constant(3)))") == 1.5


def test_passing_the_function_or_a_factorys_result_is_quiet(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(
        kernel,
        "ok_rows = tf.data.Dataset.from_generator(lambda: make_rows(3), output_signature=spec)\n"
        "ok_halves = ids.map(halve)\n"
        # A call that returns a function is right: the call is the point.
        "tripled = ids.map(scaler(3.0))\n"
        "total = sum(float(v) for v in tripled)",
    )
    assert value_of(kernel, "total") == 18.0
