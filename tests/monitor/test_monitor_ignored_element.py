"""A dataset's function that ignores its element (issue #25,
``symptoms/ignored_element.py``): the note names the call and the unread parameter, and
the fix (reading the element in place of the collection) gives one result per element;
a function that reads its element, or ignores it on purpose with ``_``, gets no note."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

CELL = """shard_ds = tf.data.Dataset.from_tensor_slices(shard_files)
records = shard_ds.interleave(
    lambda path: tf.data.TFRecordDataset(shard_files), cycle_length=2
)
count = sum(1 for _ in records)
"""


def data_notes(kernel: KernelSession, code: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == "tf-data"]


def write_shards(kernel: KernelSession, folder: Path) -> None:
    """Three TFRecord files of four records each, named in ``shard_files``."""
    run(
        kernel,
        f"shard_files = [str({str(folder)!r} + f'/shard{{i}}.tfrecord') for i in range(3)]\n"
        "for shard in shard_files:\n"
        "    with tf.io.TFRecordWriter(shard) as writer:\n"
        "        for k in range(4):\n"
        "            writer.write(str(k).encode())\n",
    )


def test_an_interleave_function_that_never_reads_its_element(
    kernel: KernelSession, tmp_path: Path
) -> None:
    write_shards(kernel, tmp_path)
    [text] = data_notes(kernel, CELL)
    assert text.startswith(
        "The function given to `shard_ds.interleave` (line 2 of this cell) never reads its "
        "argument `path`"
    ), text
    assert value_of(kernel, "count") == 36  # every shard read all three files
    fix = "lambda path: tf.data.TFRecordDataset(path)"
    assert f"`{fix}`" in text
    fixed = CELL.replace("lambda path: tf.data.TFRecordDataset(shard_files)", fix)
    assert data_notes(kernel, fixed) == []
    assert value_of(kernel, "count") == 12


def test_functions_that_read_or_deliberately_ignore_the_element_are_quiet(
    kernel: KernelSession,
) -> None:
    names = "names_ds = tf.data.Dataset.from_tensor_slices(['a', 'b'])\n"
    assert data_notes(kernel, names + "upper = names_ds.map(lambda s: tf.strings.upper(s))") == []
    assert data_notes(kernel, names + "noise = names_ds.map(lambda _: tf.random.uniform(()))") == []
