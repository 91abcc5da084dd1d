"""A library's result unpacked into the wrong number of names (``errors/families_unpacking.py``).

Python raises "too many values to unpack" in the learner's line after Keras or TensorFlow
returned; the entry says what came back, read from the model's compiled metrics, the
dataset's element spec or the value unpacked. The printed fix runs; correct cells and a
pure-Python unpacking stay without an entry from this family.
"""

from __future__ import annotations

import re

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    checked_report,
    run,
    value_of,
)
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
keras.utils.set_random_seed(0)
rows_u = np.random.rand(40, 4).astype("float32")
labels_u = (rows_u[:, :1] > 0.5).astype("float32")
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")

GRADER = """grader = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")]
)
grader.compile("adam", "binary_crossentropy", metrics=["accuracy", keras.metrics.AUC()])
"""


def test_evaluate_unpacked_into_fewer_names_than_it_returns(kernel: KernelSession) -> None:
    run(kernel, GRADER)
    cell = "test_loss, test_acc = grader.evaluate(rows_u, labels_u, verbose=0)"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`grader.evaluate(...)` returns one value for the loss and one for each metric" in text
    assert '3 here ("loss", "accuracy", "auc"), while the line unpacks 2' in text
    assert error["course"]["section"] == "keras-model-api"
    fixed = re.search(r"Fix: unpack all 3: `([^`]+)`", text)
    assert fixed is not None, text
    assert fixed.group(1) == (
        "test_loss, test_acc, auc = grader.evaluate(rows_u, labels_u, verbose=0)"
    )
    runs_cleanly(kernel, fixed.group(1))
    assert value_of(kernel, "0.0 <= test_acc <= 1.0 and 0.0 <= auc <= 1.0") is True
    keyed = re.search(r"return_dict=True\)`", text)
    assert keyed is not None
    runs_cleanly(kernel, "scores = grader.evaluate(rows_u, labels_u, verbose=0, return_dict=True)")
    assert value_of(kernel, "sorted(scores)") == ["accuracy", "auc", "loss"]


def test_a_dataset_of_three_parts_looped_over_with_two_names(kernel: KernelSession) -> None:
    cell = """weights_u = np.ones((40, 1), "float32")
batches_u = tf.data.Dataset.from_tensor_slices((rows_u, labels_u, weights_u)).batch(8)
for xb, yb in batches_u:
    pass
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert (
        "Each element of `batches_u` is a tuple of 3 ((None, 4) float32; (None, 1) float32;" in text
    )
    assert "the line unpacks it into 2 names" in text
    assert error["course"]["section"] == "tf-data"
    runs_cleanly(kernel, "for xb, yb, wb in batches_u:\n    pass")


def test_nested_elements_unpacked_into_flat_names(kernel: KernelSession) -> None:
    """Elements ``((a, b), c)`` (a dataset built from a nested tuple, or a ``zip`` of
    datasets), read through ``take``/``shuffle``: the entry shows the nesting and the fix
    nests the learner's names the same way."""
    runs_cleanly(
        kernel,
        """ids_u = np.arange(40)
paired_u = tf.data.Dataset.from_tensor_slices(((rows_u, ids_u), labels_u)).batch(5)""",
    )
    cell = "for feats, idx, target in paired_u.shuffle(8).take(2):\n    total = idx + 1"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "Each element of `paired_u.shuffle(8).take(2)` is nested: `(((None, 4) float32," in text
    assert "unpacking it into 3 flat names fails" in text
    assert error["course"]["section"] == "tf-data"
    header = re.findall(r"Fix: `([^`]+)`", text)[-1]
    assert header == "for (feats, idx), target in paired_u.shuffle(8).take(2):"
    runs_cleanly(kernel, header + "\n    total = idx + 1")
    assert value_of(kernel, "total.shape[0]") == 5
    # A zip of two datasets, read with next(iter(...)): the assignment nested the same way.
    runs_cleanly(
        kernel,
        "zipped_u = tf.data.Dataset.zip((paired_u, tf.data.Dataset.range(8)))",
    )
    text = failing(kernel, "a_u, b_u, c_u, d_u = next(iter(zipped_u))")["explanation"]
    assert (
        "is nested: `((((None, 4) float32, (None,) int64), (None, 1) float32), () int64)`" in text
    )
    fix = re.findall(r"Fix: `([^`]+)`", text)[-1]
    assert fix == "((a_u, b_u), c_u), d_u = next(iter(zipped_u))"
    runs_cleanly(kernel, fix)
    # Fewer names than the leaves: the nesting is named, no fix is printed.
    text = failing(kernel, "for a_u, b_u, c_u in zipped_u.take(1):\n    pass")["explanation"]
    assert "unpacking it into 3 flat names fails" in text
    assert "Fix:" not in text
    # The correct nested loop, and a flat dataset looped with the right count, stay quiet.
    runs_cleanly(kernel, "for (feats, idx), target in paired_u.take(1):\n    pass")
    runs_cleanly(kernel, "for ((f_u, i_u), t_u), n_u in zipped_u.take(1):\n    pass")


def test_a_dataset_of_single_tensors_unpacked_into_two(kernel: KernelSession) -> None:
    cell = """only_rows = tf.data.Dataset.from_tensor_slices(rows_u).batch(8)
for xb, yb in only_rows:
    pass
"""
    text = failing(kernel, cell)["explanation"]
    assert "Each element of `only_rows` is one (None, 4) float32 tensor, not a tuple" in text
    assert "from_tensor_slices((features, labels))" in text


def test_a_tensor_unpacked_into_more_names_than_its_first_axis(kernel: KernelSession) -> None:
    cell = "size_u = tf.shape(rows_u)\nheight, width, depth = size_u"
    text = failing(kernel, cell)["explanation"]
    assert "`size_u` is a (2,) int32 tensor: unpacking a tensor or array gives one value" in text
    assert "(2), and the line unpacks 3" in text


def test_correct_unpacking_and_pure_python_lists_get_no_entry_from_it(
    kernel: KernelSession,
) -> None:
    run(kernel, GRADER)
    runs_cleanly(kernel, "l_u, a_u, auc_u = grader.evaluate(rows_u, labels_u, verbose=0)")
    runs_cleanly(
        kernel,
        "pairs_u = tf.data.Dataset.from_tensor_slices((rows_u, labels_u))\n"
        "for xb, yb in pairs_u.batch(8):\n    pass",
    )
    # Not TensorFlow's: a plain list unpacked wrongly is left to Python's own message.
    plain = run(kernel, "plain_u = [1, 2, 3]\nfirst_u, second_u = plain_u", ok=False)
    assert plain.reply["status"] == "error"
    assert checked_report(plain)["error"] is None
