"""Windows made on one line and indexed on a later one (issue #25): ``chunks =
series.window(n)`` then ``chunks.map(lambda c: c[-1])`` indexes a dataset (each window is
a small dataset). The entry follows the mapped dataset's name back to the ``window``
assignment and writes the ``flat_map`` fix there, inside a function and at a cell's top
level; each fix runs in the kernel and gives tensors. Windows batched first stay quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")

_FUNCTION = """def cut(values, span=4):
    parts = tf.data.Dataset.from_tensor_slices(values)
    parts = parts.window(span, shift=2, drop_remainder=True)
    parts = parts.map(lambda piece: (piece[:2], piece[2:]))
    return parts
"""


def test_windows_made_a_line_before_the_map_in_a_function(kernel: KernelSession) -> None:
    cell = _FUNCTION + "halves = cut(np.arange(10, dtype='float32'))"
    text = failing(kernel, cell)["explanation"]
    assert "`parts = parts.window(span, shift=2, drop_remainder=True)` (line 3" in text
    assert "`flat_map(lambda w: w.batch(span))`" in text
    fix = fix_of(text)
    assert fix == (
        "parts = parts.window(span, shift=2, drop_remainder=True).flat_map(lambda w: w.batch(span))"
    )
    runs_cleanly(kernel, cell.replace(cell.splitlines()[2].strip(), fix))
    assert value_of(kernel, "[float(v) for v in next(iter(halves))[1]]") == [2.0, 3.0]


def test_windows_made_in_an_earlier_statement_of_the_cell(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "readings = tf.data.Dataset.range(12)")
    cell = (
        "chunks = readings.window(size=3, drop_remainder=True)\nends = chunks.map(lambda c: c[-1])"
    )
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix == (
        "chunks = readings.window(size=3, drop_remainder=True).flat_map(lambda w: w.batch(3))"
    )
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))
    assert value_of(kernel, "[int(v) for v in ends]") == [2, 5, 8, 11]
    # The look-alike: windows batched before they are indexed.
    runs_cleanly(
        kernel,
        "firsts = readings.window(3, drop_remainder=True)"
        ".flat_map(lambda w: w.batch(3)).map(lambda c: c[0])",
    )
