"""Errors of ops that cut, pack and parse data (issue #25,
``errors/families_data_ops.py``): each entry says what the op needs in the learner's
names; where one edit makes the call right the fix is printed and runs; the correct
calls beside them raise nothing."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_split_into_parts_that_do_not_divide_the_axis(kernel: KernelSession) -> None:
    cell = "N_MICRO = 3\nbatch = tf.zeros((64, 10))\nmicro = tf.split(batch, N_MICRO)"
    text = failing(kernel, cell)["explanation"]
    assert "cuts axis 0 of `batch` (64 long) into `N_MICRO` = 3 equal parts" in text
    fix = fix_of(text)
    assert fix == "N_MICRO = 4"
    runs_cleanly(kernel, cell.replace("N_MICRO = 3", fix))
    assert value_of(kernel, "[int(m.shape[0]) for m in micro]") == [16, 16, 16, 16]
    fix = fix_of(failing(kernel, "micro = tf.split(batch, 3)")["explanation"])
    assert fix == "micro = tf.split(batch, 4)"
    runs_cleanly(kernel, fix)


def test_row_lengths_given_as_row_splits(kernel: KernelSession) -> None:
    cell = (
        "flat_ids = tf.range(8)\n"
        "rows = tf.RaggedTensor.from_row_splits(flat_ids, row_splits=[3, 2, 3])"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`[3, 2, 3]` adds up to 8: it is each row's length" in text
    fix = fix_of(text)
    assert fix == "rows = tf.RaggedTensor.from_row_lengths(flat_ids, row_lengths=[3, 2, 3])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "rows.row_lengths().numpy().tolist()") == [3, 2, 3]
    runs_cleanly(kernel, "ok = tf.RaggedTensor.from_row_splits(flat_ids, row_splits=[0, 3, 5, 8])")


def test_a_filter_that_answers_per_value_and_text_made_numbers(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "rows_ds = tf.data.Dataset.from_tensor_slices("
        "(np.arange(40, dtype='float32').reshape(10, 4) - 20, np.zeros(10)))",
    )
    error = failing(kernel, "kept = rows_ds.filter(lambda x, y: x > 0.0)")
    assert error["course"]["section"] == "tf-data"
    assert (
        "returns one answer per value of the element (a (4,) bool tensor)" in (error["explanation"])
    )
    runs_cleanly(kernel, "kept = rows_ds.filter(lambda x, y: x[0] > 0.0)")
    cell = (
        'table = tf.strings.split(tf.constant(["name,qty", "pen,3"]), ",").to_tensor()\n'
        "qty = tf.strings.to_number(table[:, 1], out_type=tf.int32)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "met `'qty'` in `table[:, 1]`, which is not a number" in text
    runs_cleanly(kernel, cell.replace("table[:, 1]", "table[1:, 1]"))


RECORDS = """import os, tempfile
record_rows = np.random.rand(6, 3).astype("float32")
records_file = os.path.join(tempfile.mkdtemp(), "rows.tfrecord")
with tf.io.TFRecordWriter(records_file) as out:
    for i in range(6):
        row = tf.train.Example(features=tf.train.Features(feature={
            "row": tf.train.Feature(float_list=tf.train.FloatList(value=record_rows[i])),
        }))
        out.write(row.SerializeToString())
"""
PARSE = """row_spec = {"row": tf.io.FixedLenFeature([], tf.float32)}

def read_row(serialized):
    return tf.io.parse_single_example(serialized, row_spec)

for parsed in tf.data.TFRecordDataset(records_file).map(read_row).take(2):
    print(parsed["row"].numpy())
"""


def test_an_example_feature_declared_with_fewer_values_than_written(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, RECORDS)
    error = failing(kernel, PARSE)
    text = error["explanation"]
    assert error["course"]["section"] == "tf-data"
    assert "`row_spec` declares `'row'` as `tf.io.FixedLenFeature([], tf.float32)`" in text
    assert "(in `read_row`, the function the dataset maps)" in text
    assert "each record holds 3 values (written as" in text
    fix = fix_of(text)
    assert fix == "tf.io.FixedLenFeature([3], tf.float32)"
    runs_cleanly(kernel, PARSE.replace("tf.io.FixedLenFeature([], tf.float32)", fix))
    assert value_of(kernel, 'list(parsed["row"].shape)') == [3]
