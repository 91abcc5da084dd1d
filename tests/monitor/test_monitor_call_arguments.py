"""Arguments that do not fit what they were passed to (issue #25): data given to a
library function as separate positional arguments (the second lands on ``name``), and a
dataset function whose parameters do not match the dataset's elements. The entry names
the user's call, values and function, links the tf.data section, and its fix is run in
the kernel. The cells are our own; correct look-alikes get no error entry.
"""

from __future__ import annotations

import pytest

from tests.harness import (
    KernelSession,
    KernelSetup,
    run,
)
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")

DATA = """readings = np.random.rand(12, 4).astype("float32")
grades = np.arange(12) % 3
"""


def test_features_and_labels_given_as_two_arguments(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "sensor_ds = tf.data.Dataset.from_tensor_slices(readings, grades).batch(4)\n"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "tf-data"
    assert "`grades` lands on `name`" in text
    assert "`from_tensor_slices(tensors, name)`" in text
    fix = fix_of(text)
    assert fix == "tf.data.Dataset.from_tensor_slices((readings, grades))"
    runs_cleanly(kernel, cell.replace("tf.data.Dataset.from_tensor_slices(readings, grades)", fix))
    runs_cleanly(kernel, "assert len(sensor_ds.element_spec) == 2")


def test_three_parts_given_as_three_arguments(kernel: KernelSession) -> None:
    run(kernel, DATA + "weights_per_row = np.ones(12, 'float32')\n")
    cell = "trio = tf.data.Dataset.from_tensor_slices(readings, grades, weights_per_row)\n"
    text = failing(kernel, cell)["explanation"]
    assert "`weights_per_row` is one argument too many" in text
    fix = fix_of(text)
    assert fix == "tf.data.Dataset.from_tensor_slices((readings, grades, weights_per_row))"
    runs_cleanly(kernel, cell.replace(cell.split(" = ", 1)[1].strip(), fix))


def test_a_name_given_as_a_string_is_not_claimed(kernel: KernelSession) -> None:
    run(kernel, DATA)
    runs_cleanly(kernel, "named = tf.data.Dataset.from_tensor_slices(readings, 'sensors')\n")


def test_map_function_with_one_parameter_on_pairs(kernel: KernelSession) -> None:
    run(kernel, DATA + "pairs_ds = tf.data.Dataset.from_tensor_slices((readings, grades))\n")
    cell = """def centre(r):
    return r - 0.5

centred = pairs_ds.map(centre)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "tf-data"
    assert "each element of `pairs_ds` is a tuple of 2 ((4,) float32, () int64)" in text
    assert "`centre` takes 1 (r)" in text
    fix = fix_of(text)
    assert fix == "pairs_ds.map(lambda r, y: (centre(r), y))"
    runs_cleanly(kernel, cell.replace("pairs_ds.map(centre)", fix))
    runs_cleanly(kernel, "assert len(centred.element_spec) == 2")


def test_map_lambda_with_one_parameter_on_pairs(kernel: KernelSession) -> None:
    run(kernel, DATA + "pairs_ds = tf.data.Dataset.from_tensor_slices((readings, grades))\n")
    cell = "halved = pairs_ds.map(lambda row: row / 2.0).batch(3)\n"
    text = failing(kernel, cell)["explanation"]
    assert "the lambda takes 1 (row)" in text
    fix = fix_of(text)
    assert fix == "pairs_ds.map(lambda row, y: (row / 2.0, y))"
    runs_cleanly(kernel, cell.replace("pairs_ds.map(lambda row: row / 2.0)", fix))


def test_filter_predicate_with_one_parameter_on_pairs(kernel: KernelSession) -> None:
    run(kernel, DATA + "pairs_ds = tf.data.Dataset.from_tensor_slices((readings, grades))\n")
    cell = """def bright(r):
    return tf.reduce_mean(r) > 0.5

kept = pairs_ds.filter(bright)
"""
    text = failing(kernel, cell)["explanation"]
    assert "`pairs_ds`.filter calls its function" in text
    fix = fix_of(text)
    assert fix == "pairs_ds.filter(lambda r, y: bright(r))"
    runs_cleanly(kernel, cell.replace("pairs_ds.filter(bright)", fix))


def test_map_function_with_two_parameters_on_single_values(kernel: KernelSession) -> None:
    run(kernel, DATA + "rows_only = tf.data.Dataset.from_tensor_slices(readings)\n")
    cell = """def tag(r, g):
    return r, g

tagged = rows_only.map(tag)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "tf-data"
    assert "each element of `rows_only` is one value ((4,) float32)" in text
    assert "`tag` takes 2 (r, g)" in text
    assert "no component for `g`" in text
    runs_cleanly(
        kernel,
        "rows_only = tf.data.Dataset.from_tensor_slices((readings, grades))\n"
        + cell.replace("tagged", "tagged2"),
    )


def test_matching_map_functions_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    runs_cleanly(
        kernel,
        """pairs_ok = tf.data.Dataset.from_tensor_slices((readings, grades))
def shift(r, g, by=1.0):
    return r + by, g
def keep_all(*parts):
    return parts
a = pairs_ok.map(shift).map(keep_all).filter(lambda r, g: g > 0)
b = tf.data.Dataset.from_tensor_slices({"r": readings}).map(lambda d: d["r"])
""",
    )


def test_map_chain_over_several_lines_read_as_one_value(kernel: KernelSession) -> None:
    # The chain is written over two lines inside parentheses: the fix is printed on one
    # line; the loop below reads each element as one value, so the adapter returns only
    # the lambda's result.
    run(kernel, DATA)
    cell = """preview = (tf.data.Dataset.from_tensor_slices((readings, grades))
           .map(lambda sig: sig - tf.reduce_mean(sig)))
centred_means = []
for sig in preview.take(3):
    centred_means.append(float(tf.reduce_mean(sig)))
"""
    text = failing(kernel, cell)["explanation"]
    assert "the lambda takes 1 (sig)" in text
    assert "`for sig in preview.take(3)` reads each element as one value" in text
    fix = fix_of(text)
    assert fix == (
        "tf.data.Dataset.from_tensor_slices((readings, grades))"
        ".map(lambda sig, y: sig - tf.reduce_mean(sig))"
    )
    written = (
        "tf.data.Dataset.from_tensor_slices((readings, grades))\n"
        "           .map(lambda sig: sig - tf.reduce_mean(sig))"
    )
    assert written in cell
    runs_cleanly(kernel, cell.replace(written, fix))
    runs_cleanly(
        kernel,
        "assert len(centred_means) == 3 and max(abs(m) for m in centred_means) < 1e-6\n"
        "assert preview.element_spec.shape == (4,)",
    )


def test_map_chain_over_several_lines_unpacked_keeps_the_labels(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """scaled = (
    tf.data.Dataset.from_tensor_slices((readings, grades))
    .map(lambda r: r * 10.0)
    .batch(4)
)
for r, g in scaled:
    pass
"""
    text = failing(kernel, cell)["explanation"]
    assert "passes the other components on unchanged" in text
    fix = fix_of(text)
    assert fix == (
        "tf.data.Dataset.from_tensor_slices((readings, grades)).map(lambda r, y: (r * 10.0, y))"
    )
    written = "tf.data.Dataset.from_tensor_slices((readings, grades))\n    .map(lambda r: r * 10.0)"
    runs_cleanly(kernel, cell.replace(written, fix))
    runs_cleanly(kernel, "assert len(scaled.element_spec) == 2")


def test_map_chain_over_several_lines_that_fits_stays_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    runs_cleanly(
        kernel,
        """looked = (tf.data.Dataset.from_tensor_slices((readings, grades))
          .map(lambda r, g: r - tf.reduce_mean(r)))
for r in looked.take(2):
    pass
""",
    )
