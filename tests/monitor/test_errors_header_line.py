"""A CSV file's header line parsed as data (issue #25, ``errors/families_header_line.py``):
the entry names the record and field and the word met, says it is the file's column names,
and skips that line where the lines are taken (a slice of the lines, ``.skip(1)`` after a
TextLineDataset, ``header=True`` for CsvDataset). Each printed fix runs in the kernel and
reads the numbers; the lines taken without the header get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """import os, tempfile
log_path = os.path.join(tempfile.mkdtemp(), "sensors.csv")
with open(log_path, "w") as handle:
    handle.write("station,temp\\n3,21.5\\n7,19.0\\n2,23.25\\n")
rows = tf.strings.split(tf.strings.strip(tf.io.read_file(log_path)), "\\n")
"""


def test_decoding_the_lines_with_their_header_skips_it(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, "ids, temps = tf.io.decode_csv(rows[:2], record_defaults=[[0], [0.0]])")
    assert error["course"]["section"] == "tf-data-files"
    text = error["explanation"]
    assert "Field 0 of record 0 holds `'station'`" in text and "an int32" in text
    assert "the file's header (its column names)" in text
    fix = fix_of(text)
    assert fix == "ids, temps = tf.io.decode_csv(rows[1:3], record_defaults=[[0], [0.0]])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "ids.numpy().tolist()") == [3, 7]
    runs_cleanly(kernel, "ids, temps = tf.io.decode_csv(rows[1:], record_defaults=[[0], [0.0]])")


def test_a_dataset_of_the_file_lines_skips_the_header(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    making = (
        "readings = tf.data.TextLineDataset(log_path)"
        ".map(lambda r: tf.io.decode_csv(r, record_defaults=[[0], [0.0]]))"
    )
    text = failing(kernel, making + "\nfirsts = [int(sid) for sid, t in readings]")["explanation"]
    assert "Field 0 of record 0 holds `'station'`" in text
    fix = fix_of(text)
    assert fix == making.replace("(log_path)", "(log_path).skip(1)")
    runs_cleanly(kernel, fix + "\nfirsts = [int(sid) for sid, t in readings]")
    assert value_of(kernel, "firsts") == [3, 7, 2]


def test_a_csv_dataset_reads_the_header_as_names(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "table = tf.data.experimental.CsvDataset(log_path, "
        "record_defaults=[tf.int32, tf.float32])\n"
        "temps = [float(t) for s, t in table]"
    )
    text = failing(kernel, cell)["explanation"]
    fix = fix_of(text)
    assert fix == (
        "table = tf.data.experimental.CsvDataset(log_path, record_defaults=[tf.int32, "
        "tf.float32], header=True)"
    )
    runs_cleanly(kernel, fix + "\ntemps = [float(t) for s, t in table]")
    assert value_of(kernel, "temps") == [21.5, 19.0, 23.25]


def test_a_text_value_in_a_later_line_is_not_called_a_header(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "gaps_path = os.path.join(tempfile.mkdtemp(), 'gaps.csv')\n"
        "with open(gaps_path, 'w') as handle:\n"
        "    handle.write('3,21.5\\n7,NA\\n')\n"
        "gappy = tf.data.TextLineDataset(gaps_path)"
        ".map(lambda r: tf.io.decode_csv(r, record_defaults=[[0], [0.0]]))\n"
        "values = [float(t) for s, t in gappy]"
    )
    text = failing(kernel, cell)["explanation"]
    assert "holds `'NA'`" in text and "is the file's header" not in text
    assert "Fix:" not in text
