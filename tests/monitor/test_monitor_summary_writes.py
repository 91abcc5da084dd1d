"""``tf.summary`` calls with no default writer (issue #25, metrics logged nowhere; the core
``tf.summary.write``, as TensorBoard is not installed here): they
return False and write nothing. The entry names the calls and the writer the cell made;
the calls put inside ``with <writer>.as_default():`` return True and get no entry."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(before_load="import tempfile\nimport tensorflow as tf\n", after_load="")

CELL = """board = tf.summary.create_file_writer(tempfile.mkdtemp())
mse_now = tf.constant(0.25)
logged = bool(tf.summary.write("eval/mse", mse_now, step=1))
board.flush()
"""

FIXED = """board = tf.summary.create_file_writer(tempfile.mkdtemp())
mse_now = tf.constant(0.25)
with board.as_default():
    logged = bool(tf.summary.write("eval/mse", mse_now, step=1))
board.flush()
"""


def summary_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "summary writer" in note["text"]]


def test_summary_outside_the_writer(kernel: KernelSession) -> None:
    notes = summary_notes(checked_report(run(kernel, CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        '`tf.summary.write("eval/mse", mse_now, step=1)` (line 3 of this cell) ran with no '
        "default summary writer"
    ), text
    assert "Put the calls inside `with board.as_default():`" in text
    assert value_of(kernel, "logged") is False
    report = checked_report(run(kernel, FIXED))
    assert summary_notes(report) == []
    assert value_of(kernel, "logged") is True
