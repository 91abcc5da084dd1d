"""One point taken out of an array with an integer index and given to a function of the
learner's that takes rows of points (issue #25, ``errors/families_lost_batch_axis.py``,
``_indexed_beside_sibling``): the function fails inside, on an axis or a shape, and the
entry names the index as what dropped the axis (the sibling argument shows the rows the
function expects), with the slice as the fix where the index is written; the function is
left as it is. The fix runs. A slice, and an error with no index involved, get no such
entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """centres = tf.random.normal((8, 3), seed=1)
cloud = np.random.default_rng(5).normal(size=(200, 3)).astype("float32")
memory = tf.random.normal((6, 4), seed=2)

def nearest(cloud_points, centre_points):
    gaps = tf.expand_dims(cloud_points, 1) - tf.expand_dims(centre_points, 0)
    return tf.argmin(tf.reduce_sum(gaps ** 2, axis=2), axis=1)

def attend(queries, keys):
    weights = tf.nn.softmax(tf.matmul(queries, keys, transpose_b=True), axis=-1)
    return tf.matmul(weights, keys)
"""

DROPPED = "the integer index dropped the first axis"


def test_a_name_assigned_one_point_is_sliced_where_it_is_assigned(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = "one = cloud[17]\nlabel = nearest(one, centres)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "batch-dimension"
    assert f"`one` (`cloud[17]`) is (3,): {DROPPED} of `cloud` (200, 3)" in text, text
    assert "`nearest` is given `centres` as (8, 3)" in text
    fix = fix_of(text)
    assert fix == "one = cloud[17:18]"
    runs_cleanly(kernel, cell.replace("one = cloud[17]", fix))
    assert value_of(kernel, "label.shape.as_list()") == [1]


def test_an_index_written_in_the_call_is_sliced_there(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    text = failing(kernel, "mixed = attend(memory[0], memory)")["explanation"]
    assert f"`memory[0]` is (4,): {DROPPED} of `memory` (6, 4)" in text, text
    fix = fix_of(text)
    assert fix == "mixed = attend(memory[:1], memory)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "mixed.shape.as_list()") == [1, 4]


def test_slices_and_errors_without_an_index_stay_out(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    runs_cleanly(kernel, "labels = nearest(cloud[17:19], centres)")
    # Another shape mistake (the centres cut to two features): no index to blame.
    text = failing(kernel, "bad = nearest(cloud[:5], centres[:, :2])")["explanation"]
    assert DROPPED not in text
    # An integer index whose array is not shaped like a sibling (a row of the centres
    # given with the cloud) is not read as a dropped point axis either.
    text = failing(kernel, "odd = nearest(cloud, memory[2])")["explanation"]
    assert DROPPED not in text
