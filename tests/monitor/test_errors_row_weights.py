"""A vector of one float per row multiplying or dividing a table of rows (issue #25,
``errors/row_weights.py``): ``(N, F) * (N,)`` fails because a vector lines up with the
last axis. The entry says the vector holds one value per row and gives it its trailing
axis (``w[:, None]``, ``[:, None, None]`` for three axes); the fixed cell runs and scales
each row. A vector that is not a float vector known by its value (a cast of class ids)
and a sum stay with the broadcast family's general reading; the correct cell is silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

PER_ROW = "holds one value per row of"


def test_a_per_row_weight_in_a_function_gets_its_trailing_axis(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "resid = tf.reshape(tf.range(12, dtype=tf.float32), (3, 4))\n"
        "sample_w = tf.constant([0.5, 1.0, 2.0])",
    )
    cell = (
        "def weighted_sq(r, w):\n"
        "    return tf.reduce_sum(tf.square(r) * w)\n"
        "total = weighted_sq(resid, sample_w)"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`w` holds one value per row of `tf.square(r)` (3 values for its 3 rows" in text
    assert "its 4 columns" in text, text
    assert error["course"]["section"] == "broadcasting"
    fix = fix_of(text)
    assert fix == "return tf.reduce_sum(tf.square(r) * w[:, None])"
    runs_cleanly(kernel, cell.replace("return tf.reduce_sum(tf.square(r) * w)", fix))
    # Rows of squares 0+1+4+9, 16+25+36+49, 64+81+100+121 weighted 0.5, 1, 2.
    assert value_of(kernel, "float(total)") == pytest.approx(0.5 * 14 + 126 + 2 * 366)


def test_a_division_by_one_length_per_row(kernel: KernelSession) -> None:
    cell = (
        "sums = np.arange(18, dtype='float32').reshape(3, 6)\n"
        "lengths = tf.constant([2.0, 3.0, 6.0])\n"
        "per_step = tf.divide(sums, lengths)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "To divide each row by its own value" in text, text
    fix = fix_of(text)
    assert fix == "per_step = tf.divide(sums, lengths[:, None])"
    runs_cleanly(kernel, cell.replace("per_step = tf.divide(sums, lengths)", fix))
    assert value_of(kernel, "per_step.numpy()[:, 0].tolist()") == [0.0, 2.0, 2.0]


def test_three_axes_get_two_new_axes(kernel: KernelSession) -> None:
    cell = (
        "frames = tf.ones((4, 5, 2))\n"
        "gains = tf.constant([1.0, 2.0, 3.0, 4.0])\n"
        "louder = frames * gains"
    )
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix == "louder = frames * gains[:, None, None]", text
    runs_cleanly(kernel, cell.replace("louder = frames * gains", fix))
    assert value_of(kernel, "louder.numpy()[:, 4, 1].tolist()") == [1.0, 2.0, 3.0, 4.0]


def test_class_ids_and_sums_are_not_read_as_row_weights(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "grades = tf.ones((5, 3))\nwho = tf.constant([0, 2, 1, 1, 0])")
    # A cast of integer ids: not a float vector known by its value; labels upstream.
    text = failing(kernel, "odd = grades * tf.cast(who, tf.float32)")["explanation"]
    assert PER_ROW not in text and "[:, None]" not in text
    # A difference: predictions against labels as often as a per-row offset.
    text = failing(kernel, "gap = grades - tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])")["explanation"]
    assert PER_ROW not in text
    # The correct look-alike runs with no entry.
    runs_cleanly(kernel, "ok = grades * tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])[:, None]")
