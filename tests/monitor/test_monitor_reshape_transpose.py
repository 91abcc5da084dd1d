"""A reshape written where a transpose was meant (issue #25, silent bugs): reshaping a
value to its own sizes in another order gives the asked-for shape with scrambled
contents. Found after the cell from its source and the shapes its names hold; the note
names the statement and gives it as a transpose, in the module the learner called (or
the array's own method); the test runs that fix, which moves the axes (checked against
NumPy's transpose) and gets no note. Look-alikes stay silent: a flatten, moving a size of
1, a reshape to the same shape, a transpose, and a source rebound later in the cell."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "joining-indexing"


def reshape_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def axes_moved(kernel: KernelSession, check: str) -> bool:
    return run(kernel, f"print(bool({check}))").stdout.strip() == "True"


def test_sequences_reshaped_to_features_first(kernel: KernelSession) -> None:
    run(kernel, "waves = tf.reshape(tf.range(2 * 7 * 3, dtype=tf.float32), (2, 7, 3))\n")
    cell = "per_channel = tf.reshape(waves, (2, 3, 7))\n"
    notes = reshape_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`per_channel = tf.reshape(waves, (2, 3, 7))` (line 1 of this cell)")
    assert "`waves`, a (2, 7, 3) float32 tensor, to (2, 3, 7)" in text
    fix = last_code(text)
    assert fix == "per_channel = tf.transpose(waves, [0, 2, 1])"
    assert reshape_notes(checked_report(run(kernel, fix))) == []
    expected = "np.transpose(waves.numpy(), (0, 2, 1))"
    assert axes_moved(kernel, f"np.array_equal(per_channel.numpy(), {expected})")


def test_numpy_images_height_width_channels_to_channels_first(kernel: KernelSession) -> None:
    run(kernel, "tiles = np.random.default_rng(5).random((3, 6, 6, 4))\n")
    cell = "planes = tiles.reshape(3, 4, 6, 6)\nfirst = np.reshape(tiles, (3, 6, 4, 6))\n"
    notes = reshape_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 2, notes
    method_fix, function_fix = last_code(notes[0]), last_code(notes[1])
    assert method_fix == "planes = tiles.transpose(0, 3, 1, 2)"
    assert function_fix == "first = np.transpose(tiles, [0, 1, 3, 2])"
    report = checked_report(run(kernel, f"{method_fix}\n{function_fix}\n"))
    assert reshape_notes(report) == []
    assert axes_moved(
        kernel,
        "np.array_equal(planes, np.moveaxis(tiles, 3, 1)) and "
        "np.array_equal(first, np.swapaxes(tiles, 2, 3)) and isinstance(planes, np.ndarray)",
    )


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, "bars = tf.ones((5, 9, 2))\nvec = np.arange(8.0).reshape(8, 1)\n")
    cell = """flat_bars = tf.reshape(bars, (5, 18))
row_vec = np.reshape(vec, (1, 8))
same_bars = tf.reshape(bars, (5, 9, 2))
moved_bars = tf.transpose(bars, [0, 2, 1])
temp = tf.ones((4, 6))
swapped = tf.reshape(temp, (6, 4))
temp = swapped
"""
    assert reshape_notes(checked_report(run(kernel, cell))) == []
