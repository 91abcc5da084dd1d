"""NumPy's in-place ``.sort()`` (and ``.argsort()``) asked of a tensor
(``errors/families_library_values.py``, TENSOR_ATTRIBUTE): the entry says a tensor cannot
be changed in place, names ``tf.sort``, and when the tensor came from calling a Keras model
directly, that ``predict`` would have given a NumPy array. The printed fix keeps the sorted
tensor and sorts along the axis the learner asked for; a NumPy array's ``.sort`` stays
silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_sort_on_a_model_output(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "ranker = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(5)])\n"
        "readings = np.random.default_rng(2).normal(size=(12, 4)).astype('float32')",
    )
    cell = "ranks = ranker(readings)\nranks.sort(axis=1)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "tensors-immutable"
    text = error["explanation"]
    assert "`ranks` is a (12, 5) float32 tensor; a tensor cannot be changed in place" in text
    assert "`tf.sort` returns a new, sorted tensor" in text
    assert "`ranks` is what calling `ranker` returned" in text and "`predict`" in text
    fix = fix_of(text)
    assert fix == "ranks = tf.sort(ranks, axis=1)"
    runs_cleanly(kernel, cell.replace("ranks.sort(axis=1)", fix))
    # Each row ascending, and still the model's values.
    assert value_of(kernel, "bool(np.all(np.diff(ranks.numpy(), axis=1) >= 0))") is True
    assert value_of(
        kernel, "bool(np.allclose(ranks.numpy(), np.sort(ranker(readings).numpy(), axis=1)))"
    )


def test_argsort_without_arguments(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "heights = tf.constant([3.0, 1.0, 2.0])")
    text = failing(kernel, "order = heights.argsort()")["explanation"]
    fix = fix_of(text)
    assert fix == "order = tf.argsort(heights)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "order.numpy().tolist()") == [1, 2, 0]


def test_a_numpy_arrays_sort_stays_silent(kernel: KernelSession) -> None:
    report = checked_report(
        run(kernel, "marks = np.array([[3.0, 1.0], [0.5, 2.0]])\nmarks.sort(axis=1)")
    )
    assert report["error"] is None and report["notes"] == []
    assert value_of(kernel, "marks.tolist()") == [[1.0, 3.0], [0.5, 2.0]]
