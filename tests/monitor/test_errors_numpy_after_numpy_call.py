"""``.numpy()`` inside a tf.function whose value goes on into a NumPy function (issue #25):
``np.mean(hits.numpy() == wanted)``. Dropping ``.numpy()`` alone would still give NumPy a
symbolic tensor, so the entry's fix drops it and writes NumPy's functions as graph ops
(``errors/numpy_calls.numpy_calls_as_graph_ops``); the fix runs and gives NumPy's value. Two
dtypes under ``==`` get no such fix (graph ``==`` does not convert), and the same function
written with TensorFlow ops gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """votes = np.random.default_rng(7).normal(size=(40, 5)).astype("float32")
wanted_class = np.random.default_rng(8).integers(0, 5, size=40).astype("int32")
gaps = np.random.default_rng(9).normal(size=(6, 3)).astype("float32")
"""

SHARE = """@tf.function
def share_right(logits, wanted):
    hits = tf.argmax(logits, axis=1, output_type=tf.int32)
    return np.mean(hits.numpy() == wanted)
share = share_right(tf.constant(votes), tf.constant(wanted_class))"""


def test_numpy_function_after_dropping_numpy(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, SHARE)
    assert error["course"]["section"] == "numpy-in-graphs"
    text = error["explanation"]
    assert "`hits` is such a tensor" in text
    assert "`np.mean` would still be given a symbolic tensor" in text
    line = "return np.mean(hits.numpy() == wanted)"
    assert f"replace `{line}` by" in text
    fix = fix_of(text)
    assert fix == "return keras.ops.mean(hits == wanted)"
    runs_cleanly(kernel, SHARE.replace(line, fix))
    expected = "float((votes.argmax(axis=1) == wanted_class).mean())"
    assert abs(value_of(kernel, "float(share)") - value_of(kernel, expected)) < 1e-6


def test_nested_numpy_functions(kernel: KernelSession) -> None:
    cell = """@tf.function
def spread(d):
    return np.sqrt(np.sum(np.square(d.numpy()), axis=1))
lengths = spread(tf.constant(gaps))"""
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix == "return keras.ops.sqrt(keras.ops.sum(keras.ops.square(d), axis=1))"
    assert "np." not in fix
    runs_cleanly(kernel, cell.replace("return np.sqrt(np.sum(np.square(d.numpy()), axis=1))", fix))
    assert value_of(kernel, "np.allclose(lengths.numpy(), np.linalg.norm(gaps, axis=1))") is True


def test_two_dtypes_get_no_numpy_fix(kernel: KernelSession) -> None:
    cell = """@tf.function
def share_long(logits, wanted):
    hits = tf.argmax(logits, axis=1)
    return np.mean(hits.numpy() == wanted)
share = share_long(tf.constant(votes), tf.constant(wanted_class))"""
    text = failing(kernel, cell)["explanation"]
    assert "np.mean(hits == wanted)" not in text
    assert "keras.ops.mean(hits == wanted)" not in text  # int64 == int32 fails in a graph


def test_graph_ops_look_alike_is_quiet(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """@tf.function
def share_ops(logits, wanted):
    hits = tf.argmax(logits, axis=1, output_type=tf.int32)
    return tf.reduce_mean(tf.cast(hits == wanted, tf.float32))
share = share_ops(tf.constant(votes), tf.constant(wanted_class))
print(float(share))""",
    )


def test_a_batch_axis_fix_inside_a_traced_function_uses_no_numpy(kernel: KernelSession) -> None:
    # One example given to a model inside a tf.function: the fix must work on the symbolic
    # tensor (``np.expand_dims`` of it fails while tracing).
    runs_cleanly(
        kernel,
        "judge = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])\n"
        "judged = judge(gaps)",
    )
    cell = """@tf.function
def judge_one(item):
    return judge(item)
verdict = judge_one(tf.constant(gaps[2]))"""
    text = failing(kernel, cell)["explanation"]
    assert "np.expand_dims" not in text
    assert "`tf.expand_dims(item, 0)` adds the same axis in front" in text
    assert text.endswith("Give it a batch of one example: `judge(item[None, ...])`.")
    fix = "judge(item[None, ...])"
    runs_cleanly(kernel, cell.replace("return judge(item)", f"return {fix}"))
    assert value_of(kernel, "tuple(verdict.shape)") == [1, 2]
