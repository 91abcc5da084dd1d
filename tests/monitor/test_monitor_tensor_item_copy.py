"""Item assignment on an eager tensor with positions that are not constants (a loop's
row, a list of columns), issue #25: the entry copies the tensor into a NumPy array once,
before the loop that holds the line, and keeps the learner's indexing as written. The
fix is applied and the copy holds the new values; a tensor made inside the loop gets its
copy right before the line; constant positions keep the ``tensor_scatter_nd_update`` fix."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run
from tests.harness import error_of_failing_cell as failing

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
"""
KERNEL = KernelSetup(before_load=SETUP, after_load="")


def fix_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])


def test_copy_made_before_the_loop(kernel: KernelSession) -> None:
    cell = """grid = tf.reshape(tf.range(12, dtype=tf.float32), (3, 4))
blocked = {0: [1, 3], 2: [0]}
for r, cols in blocked.items():
    grid[r, cols] = -1.0
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "tensors-immutable"
    assert "`grid` cannot be changed in place" in text, text
    assert "before line 3 (once, ahead of the loop)" in text, text
    copy, statement = fix_spans(text)[:2]
    assert copy == "grid = np.array(grid)"
    assert statement == "grid[r, cols] = -1.0"
    fixed = cell.replace("for r, cols", f"{copy}\nfor r, cols")
    assert checked_report(run(kernel, fixed))["error"] is None
    shown = run(kernel, "print(grid[0].tolist(), grid[2].tolist())")
    assert shown.stdout.strip() == "[0.0, -1.0, 2.0, -1.0] [-1.0, 9.0, 10.0, 11.0]"


def test_tensor_made_inside_the_loop_and_constant_positions(kernel: KernelSession) -> None:
    cell = """rows = []
for k in range(2):
    frame = tf.ones((2, 3)) * k
    picked = [0, 2]
    frame[1, picked] = 5.0
    rows.append(frame)
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`frame = np.array(frame)` before line 5;" in text, text
    copy = fix_spans(text)[0]
    assert copy == "frame = np.array(frame)"
    fixed = cell.replace("    frame[1, picked]", f"    {copy}\n    frame[1, picked]")
    assert checked_report(run(kernel, fixed))["error"] is None
    assert run(kernel, "print(rows[1][1].tolist())").stdout.strip() == "[5.0, 1.0, 5.0]"
    # Constant positions: the TensorFlow rewrite, as before.
    error = failing(kernel, "g = tf.ones((3, 1))\ng[0, 0] = 0.0")
    assert fix_spans(error["explanation"])[-1] == (
        "g = tf.tensor_scatter_nd_update(g, [[0, 0]], [0.0])"
    )
    # A NumPy array changed in place raises nothing and gets no entry.
    ok = run(kernel, "board = np.ones((2, 4))\nfor j in range(2):\n    board[j, [1]] = 0.0")
    assert checked_report(ok)["error"] is None


def test_tensor_used_as_a_tensor_after_the_loop_is_made_again(kernel: KernelSession) -> None:
    """The copy rebinds the name to an array; where the same code later reads an attribute
    only a tensor has (``.numpy()``), the fix makes the tensor again after the loop."""
    cell = """marks = tf.zeros((2, 5))
hits = [[0, 4], [2]]
for i, where in enumerate(hits):
    marks[i, where] = 1.0
print(marks.numpy().sum())
"""
    error = failing(kernel, cell)
    text = error["explanation"]
    spans = fix_spans(text)
    assert spans[0] == "marks = np.array(marks)", text
    assert "then `marks = tf.convert_to_tensor(marks)` after line 4" in text, text
    fixed = cell.replace("for i, where", f"{spans[0]}\nfor i, where").replace(
        "print(", f"{spans[2]}\nprint("
    )
    result = run(kernel, fixed)
    assert checked_report(result)["error"] is None
    assert result.stdout.strip() == "3.0"
    # Without a tensor-only use later, the fix stops at the copy.
    plain = failing(kernel, cell.replace("print(marks.numpy().sum())", "print(marks.sum())"))
    assert "convert_to_tensor(marks)` after" not in plain["explanation"]
