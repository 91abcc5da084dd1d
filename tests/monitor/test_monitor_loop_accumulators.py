"""A loop variable started as an integer and given floats inside a tf.function (issue #25,
"advice applied must not lead back to the same error"): ``n = 0`` before a graph loop
(``tf.range``, a dataset, a ``while`` on a tensor) and ``n += float_value`` in it. A cast
inside the loop only turns the dtype mismatch into AutoGraph's "dtype int32 before the
loop, but dtype float32 after one iteration": the printed fix starts the variable as a
float, in the user's statement, and each fix is run and raises nothing. Look-alikes keep
their own advice: an integer operand that is not the loop variable is still cast where
it is used, and a loop variable started as a float raises nothing."""

from __future__ import annotations

import pytest

from tests.harness import (
    KernelSession,
    error_of_failing_cell,
    fix_in,
    run,
    runs_without_error_entry,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = "scales = tf.Variable(tf.fill((6,), 0.5))\n"


def fixed_cell(cell: str, written: str, fix: str) -> str:
    assert cell.count(written) == 1, (cell, written)
    return cell.replace(written, fix)


def test_augmented_sum_over_a_tf_range(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = """@tf.function
def weighted_total(steps):
    running = 0
    for k in tf.range(steps):
        running += tf.reduce_sum(scales) * tf.cast(k, tf.float32)
    return running

out = weighted_total(tf.constant(3))
"""
    text = error_of_failing_cell(kernel, cell)["explanation"]
    assert "`running` is a loop variable" in text, text
    assert "`running = 0` (line 3)" in text, text
    fix = fix_in(text)
    assert fix == "running = 0.0"
    runs_without_error_entry(kernel, fixed_cell(cell, "running = 0", fix))
    assert run(kernel, "print(float(out))").stdout.strip() == "9.0"


def test_dataset_loop_with_a_float64_sum_and_an_int_constant(kernel: KernelSession) -> None:
    cell = """@tf.function
def column_mass(batches):
    mass = tf.constant(0)
    for block in batches:
        mass = mass + tf.reduce_sum(block)
    return mass

grid = tf.data.Dataset.from_tensor_slices(tf.ones((4, 3), tf.float64)).batch(2)
heavy = column_mass(grid)
"""
    text = error_of_failing_cell(kernel, cell)["explanation"]
    fix = fix_in(text)
    assert fix == "mass = tf.constant(0.0, dtype=tf.float64)"
    runs_without_error_entry(kernel, fixed_cell(cell, "mass = tf.constant(0)", fix))
    assert run(kernel, "print(heavy.dtype.name, float(heavy))").stdout.split() == [
        "float64",
        "12.0",
    ]


def test_a_running_maximum_in_a_while_loop(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = """@tf.function
def peak(limit):
    idx = tf.constant(0)
    top = -1
    while idx < limit:
        top = tf.maximum(top, tf.reduce_max(scales))
        idx += 1
    return top

highest = peak(4)
"""
    text = error_of_failing_cell(kernel, cell)["explanation"]
    fix = fix_in(text)
    assert fix == "top = -1.0"
    runs_without_error_entry(kernel, fixed_cell(cell, "top = -1", fix))
    assert run(kernel, "print(float(highest))").stdout.strip() == "0.5"


def test_a_cast_inside_the_loop_is_sent_back_to_the_start(kernel: KernelSession) -> None:
    """What a cast at the use leads to: AutoGraph's loop-dtype message, whose fix is the
    same start as a float."""
    run(kernel, SETUP)
    cell = """@tf.function
def damped(rounds):
    level = 1
    for _ in tf.range(rounds):
        level = tf.cast(level, tf.float32) * tf.reduce_mean(scales)
    return level

final = damped(tf.constant(2))
"""
    error = error_of_failing_cell(kernel, cell)
    assert "before the loop, but dtype float32" in error["message"]
    text = error["explanation"]
    assert "`level` is int32 before the loop and float32 after one iteration" in text, text
    assert error["course"]["section"] == "python-loops"
    fix = fix_in(text)
    assert fix == "level = 1.0"
    runs_without_error_entry(kernel, fixed_cell(cell, "level = 1", fix))
    assert run(kernel, "print(float(final))").stdout.strip() == "0.25"


def test_look_alikes_keep_their_own_advice(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    # The integer operand is the loop counter, not the loop variable: cast where it is used.
    cell = """@tf.function
def ramp_total(steps):
    acc = 0.0
    for k in tf.range(steps):
        acc += k * scales[0]
    return acc

ramped = ramp_total(tf.constant(4))
"""
    text = error_of_failing_cell(kernel, cell)["explanation"]
    assert "loop variable" not in text, text
    assert "tf.cast(k, tf.float32) * scales[0]" in text, text
    runs_without_error_entry(
        kernel, cell.replace("k * scales[0]", "tf.cast(k, tf.float32) * scales[0]")
    )
    # A loop variable started as a float raises nothing.
    runs_without_error_entry(
        kernel,
        """@tf.function
def plain_total(steps):
    acc = 0.0
    for _ in tf.range(steps):
        acc += tf.reduce_sum(scales)
    return acc

plain_total(tf.constant(2))
""",
    )
