"""A value whose name states a dtype it does not have (issue #25, silent bugs): a "64" twin
of a float32 tensor made float32 by default, an ``_f32`` NumPy array made float64, an
``_int64`` tensor made int32 are told with the making call asking for the stated dtype;
the fix runs in the kernel and the value then has it. Names whose number is a size, a
correct pair of precisions, and values that hold their stated dtype stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)


def dtype_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "but its name says" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("where it is made:", 1)[1])[0]


def test_a_precision_twin_made_in_the_default_dtype(kernel: KernelSession) -> None:
    cell = """rows = [[float(b) ** p for p in range(6)] for b in range(1, 7)]
V32 = tf.convert_to_tensor(rows, dtype=tf.float32)
V64 = tf.convert_to_tensor(rows)
cond32 = float(tf.linalg.norm(tf.linalg.inv(V32) @ V32 - tf.eye(6)))
"""
    notes = dtype_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`V64` (line 3 of this cell) is a float32 tensor, but its name says float64 (next "
        "to `V32`, which does hold float32). `tf.convert_to_tensor(rows)` asks for no dtype"
    )
    fix = fix_of(notes[0])
    assert fix == "V64 = tf.convert_to_tensor(rows, dtype=tf.float64)"
    fixed = cell.replace("V64 = tf.convert_to_tensor(rows)", fix)
    assert dtype_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert V64.dtype == tf.float64"))


def test_names_that_spell_a_dtype(kernel: KernelSession) -> None:
    cell = """coords_f32 = np.array([[0.5, 1.5], [2.0, 3.0]])
counts_int64 = tf.constant([4, 7, 1])
"""
    notes = dtype_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`coords_f32` (line 1 of this cell) is a float64 NumPy array, but its name says float32"
    )
    assert "`counts_int64` holds int32" in notes[0]
    fix = fix_of(notes[0])
    assert fix == "coords_f32 = np.array([[0.5, 1.5], [2.0, 3.0]], dtype=np.float32)"
    second = "counts_int64 = tf.constant([4, 7, 1])\n"
    notes = dtype_notes(checked_report(run(kernel, f"{fix}\n{second}")))
    assert len(notes) == 1, notes
    counts_fix = fix_of(notes[0])
    assert counts_fix == "counts_int64 = tf.constant([4, 7, 1], dtype=tf.int64)"
    assert dtype_notes(checked_report(run(kernel, f"{fix}\n{counts_fix}\n"))) == []
    checked_report(
        run(kernel, "assert coords_f32.dtype == np.float32 and counts_int64.dtype == tf.int64")
    )


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cell = """emb32, emb64 = tf.zeros((4, 32)), tf.zeros((4, 64))
base = tf.random.uniform((3, 3))
m16 = tf.cast(base, tf.float16)
m32 = tf.cast(base, tf.float32)
scale_f64 = np.linspace(0.0, 1.0, 5)
pixels_u8 = (np.ones((2, 2)) * 255).astype(np.uint8)
first_half = base[:1]
dense64 = keras.layers.Dense(64)
"""
    assert dtype_notes(checked_report(run(kernel, cell))) == []
