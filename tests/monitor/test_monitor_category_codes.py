"""Category codes outside the range a one-hot op or a layer expects (issue #25, silent
bugs): ``tf.one_hot(codes, 3)`` with codes 1..3 or a code past the depth gives rows of
zeros, ``keras.ops.one_hot`` of a negative code too, a ``CategoryEncoding(num_tokens=3)``
the same, and an ``Embedding`` reads a negative id from the end of its table. Found after
the cell from the codes' smallest and largest value and the depth the call or the layer
holds; the note names the call, the range and the depth, and gives the depth the codes
need (or the codes shifted to start at 0). Each fix is run in the kernel: every row is
one-hot (sums to 1), and no note. Codes inside the range stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "joining-indexing"


def code_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "codes run from" in note["text"]
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_one_hot_of_codes_counted_from_one(kernel: KernelSession) -> None:
    run(kernel, "grades = np.array([1, 2, 3, 3, 1, 2])\n")
    cell = "targets = tf.one_hot(grades, 3)\n"
    notes = code_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.one_hot(grades, 3)` (line 1 of this cell) is given `grades`, a (6,) int64 NumPy "
        "array whose codes run from 1 to 3, but the depth is 3: codes 0 to 2."
    )
    assert "2 of the codes here belong to no class" in text
    assert shown(kernel, "tf.reduce_sum(targets, axis=1).numpy().tolist()") == (
        "[1.0, 1.0, 0.0, 0.0, 1.0, 1.0]"
    )
    fix = last_code(text)
    assert fix == "tf.one_hot(grades - 1, 3)"
    assert code_notes(checked_report(run(kernel, f"targets = {fix}\n"))) == []
    assert shown(kernel, "tf.reduce_sum(targets, axis=1).numpy().tolist()") == str([1.0] * 6)


def test_one_hot_depth_short_of_the_largest_code(kernel: KernelSession) -> None:
    run(kernel, "kinds = tf.constant([0, 4, 2, 1, 4])\nn_kinds = 4\n")
    notes = code_notes(checked_report(run(kernel, "coded = tf.one_hot(kinds, depth=n_kinds)\n")))
    assert len(notes) == 1, notes
    assert "`kinds`, a (5,) int32 tensor whose codes run from 0 to 4" in notes[0]
    assert "the depth is 4" in notes[0]
    fix = last_code(notes[0])
    assert fix == "tf.one_hot(kinds, depth=5)"
    assert code_notes(checked_report(run(kernel, f"coded = {fix}\n"))) == []
    assert shown(kernel, "bool(tf.reduce_all(tf.reduce_sum(coded, axis=1) == 1))") == "True"


def test_negative_codes_and_coding_layers(kernel: KernelSession) -> None:
    run(kernel, "ids = np.array([0, -1, 2, 1])\nbig = np.array([0, 3, 4, 1])\n")
    notes = code_notes(checked_report(run(kernel, "rows = keras.ops.one_hot(ids, 3)\n")))
    assert len(notes) == 1 and "A negative code gives a row of zeros" in notes[0], notes
    cell = (
        "enc = keras.layers.CategoryEncoding(num_tokens=3, output_mode='one_hot')\nv = enc(big)\n"
    )
    notes = code_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "the `CategoryEncoding` layer `enc` has `num_tokens=3`" in notes[0]
    assert "`num_tokens=5`" in notes[0]
    fixed = cell.replace("num_tokens=3", "num_tokens=5")
    assert code_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "v.numpy().sum(axis=1).tolist()") == str([1.0] * 4)
    cell = "emb = keras.layers.Embedding(3, 2)\nvectors = emb(ids)\n"
    notes = code_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1 and "`-1` is the row of id 2" in notes[0], notes
    # The symptom itself: id -1 got id 2's vector, without any error.
    assert shown(kernel, "bool(np.all(vectors.numpy()[1] == vectors.numpy()[2]))") == "True"


def test_codes_in_range_stay_silent(kernel: KernelSession) -> None:
    run(kernel, "ok_codes = np.array([0, 1, 2, 2])\n")
    for cell in (
        "a = tf.one_hot(ok_codes, 3)\n",
        "b = keras.ops.one_hot(ok_codes, num_classes=3)\n",
        "e = keras.layers.Embedding(3, 2)\nvecs = e(ok_codes)\n",
        "c = tf.one_hot(ok_codes, 5)\n",  # spare classes are fine
    ):
        assert code_notes(checked_report(run(kernel, cell))) == [], cell


def test_codes_written_in_the_cell_past_a_coding_layers_range(kernel: KernelSession) -> None:
    # Codes written as a literal (no name holds them) are read from the cell itself.
    cell = (
        "floors = keras.layers.CategoryEncoding(num_tokens=4, output_mode='one_hot')\n"
        "rows = floors(np.array([1, 2, 4]))\n"
    )
    notes = code_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`floors(np.array([1, 2, 4]))` (line 2 of this cell) is given `np.array([1, 2, 4])`, "
        "3 codes written in the cell whose codes run from 1 to 4, but the `CategoryEncoding` "
        "layer `floors` has `num_tokens=4`: codes 0 to 3."
    )
    assert shown(kernel, "rows.numpy().sum(axis=1).tolist()") == "[1.0, 1.0, 0.0]"
    assert last_code(notes[0]) == "num_tokens=5"
    fixed = cell.replace("num_tokens=4", last_code(notes[0]))
    assert code_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "rows.numpy().sum(axis=1).tolist()") == str([1.0] * 3)
    # Look-alike: written codes inside the range.
    assert code_notes(checked_report(run(kernel, "ok_rows = floors([0, 3, 4])\n"))) == []
