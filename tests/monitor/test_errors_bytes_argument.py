"""A string tensor given where Python wants bytes (``errors/families_bytes_argument.py``):
protobuf raises in the learner's line naming only a type; the entry says the value is a
string tensor and the fix, with ``.numpy()``, parses the record in the kernel."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

RECORDS = """import os, tempfile
rec_path = os.path.join(tempfile.mkdtemp(), "rows.tfrecord")
with tf.io.TFRecordWriter(rec_path) as sink:
    for k in range(3):
        row = tf.train.Example(features=tf.train.Features(feature={
            "score": tf.train.Feature(float_list=tf.train.FloatList(value=[k / 2]))}))
        sink.write(row.SerializeToString())
"""


def test_a_record_element_given_to_a_protobuf_parser(kernel: KernelSession) -> None:
    runs_cleanly(kernel, RECORDS)
    cell = (
        "scores = []\n"
        "for blob in tf.data.TFRecordDataset(rec_path):\n"
        "    parsed = tf.train.Example.FromString(blob)\n"
        "    scores.append(parsed.features.feature['score'].float_list.value[0])"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`blob` is a () string tensor" in text
    assert "reads Python `bytes`" in text
    fix = fix_of(text)
    assert fix == "parsed = tf.train.Example.FromString(blob.numpy())"
    runs_cleanly(kernel, cell.replace("FromString(blob)", "FromString(blob.numpy())"))
    assert value_of(kernel, "scores") == [0.0, 0.5, 1.0]
    # ParseFromString on a message: the same reading; the bytes themselves stay quiet.
    runs_cleanly(
        kernel, "one = next(iter(tf.data.TFRecordDataset(rec_path)))\nmsg = tf.train.Example()"
    )
    error = failing(kernel, "msg.ParseFromString(one)")
    assert fix_of(error["explanation"]) == "msg.ParseFromString(one.numpy())"
    runs_cleanly(kernel, "msg.ParseFromString(one.numpy())")
