"""A shape error whose operand was grown along one axis where two needed it (issue #25,
``errors/one_axis_growth.py``): a ``repeat`` or ``tile`` (TensorFlow's or NumPy's) that
grew one axis of its source, compared with a value as many times larger on another axis
too. The entry names the statement, the axis grown and the one left; the fix grows that
axis as well, runs, and gives the values of growing both. A factor that would not match,
or both axes grown, say nothing of it."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_repeat_along_one_axis_is_repeated_along_the_other(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "cells = np.arange(12, dtype='float32').reshape(3, 4)\n"
        "dense_map = tf.ones((6, 8))\n"
        "blocky = np.repeat(cells, 2, axis=0)",
    )
    cell = "residual = dense_map - blocky"
    text = failing(kernel, cell)["explanation"]
    assert "`blocky` was made by `blocky = np.repeat(cells, 2, axis=0)`" in text
    assert "which repeats along axis 0 only" in text
    assert "axis 1 still has 4 where the other operand has 8" in text
    fix = fix_of(text)
    assert fix == "blocky = np.repeat(np.repeat(cells, 2, axis=0), 2, axis=1)"
    runs_cleanly(kernel, f"{fix}\n{cell}")
    assert value_of(kernel, "bool(np.array_equal(blocky, np.kron(cells, np.ones((2, 2)))))")
    assert value_of(kernel, "list(residual.shape)") == [6, 8]


def test_a_tile_of_one_axis_gets_the_same_multiple_on_the_other(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "strip = tf.reshape(tf.range(10.0), (2, 5))\n"
        "canvas = tf.zeros((6, 15))\n"
        "pattern = tf.tile(strip, [1, 3])",
    )
    cell = "painted = canvas + pattern"
    text = failing(kernel, cell)["explanation"]
    assert "`pattern` was made by `pattern = tf.tile(strip, [1, 3])`" in text
    assert "which tiles axis 1 only" in text
    fix = fix_of(text)
    assert fix == "pattern = tf.tile(strip, [3, 3])"
    runs_cleanly(kernel, f"{fix}\n{cell}")
    assert value_of(kernel, "list(painted.shape)") == [6, 15]


def test_other_factors_and_both_axes_grown_say_nothing_of_it(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "seeds = np.ones((2, 3), 'float32')\n"
        "target_grid = tf.ones((4, 9))\n"
        "doubled = np.repeat(seeds, 2, axis=0)",
    )
    # Axis 1 needs a factor of 3, the repeat used 2: not the same growth.
    text = failing(kernel, "miss = target_grid * doubled")["explanation"]
    assert "was made by" not in text
    # Look-alike: both axes grown, as the other operand is.
    runs_cleanly(
        kernel,
        "both = np.repeat(np.repeat(seeds, 2, axis=0), 3, axis=1)\nhit = target_grid * both",
    )
