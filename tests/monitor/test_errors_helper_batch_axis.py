"""One example given to a function of the learner's that hands it on to a model built on
batches (issue #25, ``errors/families_lost_batch_axis.py``): the function is right for
the batches it is also called with, so the entry's fix adds the batch axis where the
function is called, never inside it. Each fix runs in the kernel, and the function still
takes a batch afterwards; a batch given to it gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """net = keras.Sequential([
    keras.Input((6, 2)),
    keras.layers.Conv1D(4, 3, padding="same"),
    keras.layers.GlobalAveragePooling1D(),
])
samples = np.random.rand(9, 6, 2).astype("float32")
pieces = [np.random.rand(6, 2).astype("float32") for _ in range(3)]


def scaled_scores(batch, scale=1.0):
    scores = net(batch, training=False)
    return scores * scale
"""


def test_an_indexed_array_is_sliced_where_the_helper_is_called(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(kernel, "whole = scaled_scores(samples, 2.0)")
    error = failing(kernel, "part = scaled_scores(samples[4], 2.0)")
    text = error["explanation"]
    assert (
        "`scaled_scores` hands its `batch` to `net(batch, training=False)`, and `net` was "
        "built on batches (None, 6, 2)"
    ) in text, text
    assert "`samples[4]` is (6, 2), one example without that axis" in text
    fix = fix_of(text)
    assert fix == "part = scaled_scores(samples[4:5], 2.0)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(part.shape)") == [1, 4]
    # The helper is unchanged and still takes the batch it was written for.
    runs_cleanly(kernel, "whole = scaled_scores(samples, 2.0)")
    assert value_of(kernel, "list(whole.shape)") == [9, 4]


def test_an_item_of_a_list_given_by_keyword_gets_a_new_axis(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "one = scaled_scores(scale=0.5, batch=pieces[1])")
    text = error["explanation"]
    assert "`pieces[1]` is (6, 2)" in text, text
    fix = fix_of(text)
    assert fix == "one = scaled_scores(scale=0.5, batch=pieces[1][None])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(one.shape)") == [1, 4]


def test_a_batch_of_one_through_the_helper_stays_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(kernel, "first = scaled_scores(samples[:1])")
    runs_cleanly(kernel, "listed = scaled_scores(np.stack(pieces))")
    assert value_of(kernel, "list(listed.shape)") == [3, 4]
