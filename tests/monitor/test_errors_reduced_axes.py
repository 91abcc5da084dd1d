"""A reduction without ``keepdims=True`` met by the value it was reduced from (issue #25):
``x - tf.reduce_mean(x, axis=1)`` drops the reduced axis, so one value per row lines up
under the columns and the shapes clash. The entry names the reduction as written and the
fix adds ``keepdims=True`` where the reduction is written (on the line, or where the name
it is kept in was made); each fix is run in the kernel. The correct look-alikes (keepdims
already given, a reduction over the first axis) raise nothing and get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")

DATA = "scores = tf.random.uniform((12, 4))\nheights = np.random.rand(9, 3).astype('float32')\n"


def test_a_row_mean_subtracted_on_the_line(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "row_centred = scores - tf.reduce_mean(scores, axis=1)")
    explanation = error["explanation"]
    assert error["course"]["section"] == "broadcasting"
    assert "`tf.reduce_mean(scores, axis=1)` drops the axis it reduces (1)" in explanation
    assert "keepdims=True" in explanation
    fix = fix_of(explanation)
    assert fix == "row_centred = scores - tf.reduce_mean(scores, axis=1, keepdims=True)"
    runs_cleanly(kernel, fix + "\nassert row_centred.shape == (12, 4)")
    # The look-alike that is right stays quiet.
    runs_cleanly(kernel, "col_centred = scores - tf.reduce_mean(scores, axis=0)")


def test_a_row_sum_kept_in_a_name_is_fixed_where_it_is_made(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    runs_cleanly(kernel, "row_totals = heights.sum(axis=-1)")
    error = failing(kernel, "shares = tf.constant(heights) / row_totals")
    explanation = error["explanation"]
    assert "`row_totals` comes from `heights.sum(axis=-1)`" in explanation
    fix = fix_of(explanation)
    assert fix == "row_totals = heights.sum(axis=-1, keepdims=True)"
    runs_cleanly(kernel, fix + "\nshares = tf.constant(heights) / row_totals")
    runs_cleanly(
        kernel,
        "kept = tf.reduce_max(scores, axis=1, keepdims=True)\nscaled = scores / kept",
    )
