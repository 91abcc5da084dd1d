"""An integer tensor that meets Python floats on several lines (issue #25,
``errors/families_tensors.py``, PYTHON_NUMBER): casting it on the failing line alone moves
the same TypeError one line down, so the entry's fix casts it on every line of the function
where it meets a float, and the fixed cell runs. A line where it meets an int is left as
it is, and one float line gets the single cast."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

WARMUP = """class Warmup:
    def __init__(self, peak=0.5, floor=0.1):
        self.peak, self.floor = peak, floor
        self.count = tf.Variable(0, dtype=tf.int32)

    def rate(self):
        self.count.assign_add(1)
        following = self.count + 1
        rise = self.peak * self.count
        fall = self.floor / self.count
        return rise + fall

schedule = Warmup()
first_rate = schedule.rate()
"""


def test_every_line_where_the_integer_meets_a_float_is_cast(kernel: KernelSession) -> None:
    text = failing(kernel, WARMUP)["explanation"]
    assert "`self.count` meets a float again on line 10" in text
    spans = text.split("Fix: ", 1)[1]
    assert "`tf.cast(self.count, tf.float32)`" in spans
    assert "on line 10 `fall = self.floor / tf.cast(self.count, tf.float32)`" in spans
    assert "following" not in spans
    assert fix_of(text) == "fall = self.floor / tf.cast(self.count, tf.float32)"
    fixed = WARMUP.replace(
        "rise = self.peak * self.count", "rise = self.peak * tf.cast(self.count, tf.float32)"
    ).replace("fall = self.floor / self.count", fix_of(text))
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "float(first_rate)") == pytest.approx(0.6)


def test_one_float_line_gets_the_single_cast(kernel: KernelSession) -> None:
    cell = "hits_here = tf.constant(7)\nshare = 0.25 * hits_here\nnext_hits = hits_here + 1"
    text = failing(kernel, cell)["explanation"]
    assert "meets a float again" not in text
    fix = fix_of(text)
    assert fix == "tf.cast(hits_here, tf.float32)"
    runs_cleanly(kernel, cell.replace("0.25 * hits_here", f"0.25 * {fix}"))
