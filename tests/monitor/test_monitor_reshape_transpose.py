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


TILES = """def tiles_of(batch, edge):
    flat = tf.image.extract_patches(batch, sizes=[1, edge, edge, 1], strides=[1, edge, edge, 1],
                                    rates=[1, 1, 1, 1], padding="VALID")
    flat = tf.reshape(flat, [-1, batch.shape[-1], edge, edge])
    return tf.transpose(flat, [0, 2, 3, 1])
"""


def patch_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "from `extract_patches`" in n["text"]]


def test_extracted_patches_reshaped_channels_first(kernel: KernelSession) -> None:
    """Told from the source when the function is defined (it runs in a later cell); the
    fix, applied, gives the image's own pieces; the right order is silent."""
    [text] = patch_notes(checked_report(run(kernel, TILES)))
    assert text.startswith(
        "`flat = tf.reshape(flat, [-1, batch.shape[-1], edge, edge])` (line 4 of this cell, "
        "in `tiles_of`) cuts the last axis of `flat` (from `extract_patches`) into "
        "(batch.shape[-1], edge, edge)"
    )
    assert "The `tf.transpose(flat, [0, 2, 3, 1])` after it only moves the scrambled" in text
    fix = last_code(text)
    assert fix == "flat = tf.reshape(flat, [-1, edge, edge, batch.shape[-1]])"
    fixed = TILES.replace(
        "    flat = tf.reshape(flat, [-1, batch.shape[-1], edge, edge])", f"    {fix}"
    )
    fixed = fixed.replace("return tf.transpose(flat, [0, 2, 3, 1])", "return flat")
    assert patch_notes(checked_report(run(kernel, fixed))) == []
    check = (
        "pic = tf.reshape(tf.range(2 * 4 * 4 * 3, dtype=tf.float32), (2, 4, 4, 3))\n"
        "print(bool(tf.reduce_all(tiles_of(pic, 2)[1] == pic[0, :2, 2:, :])))"
    )
    assert run(kernel, check).stdout.strip() == "True"
    # At the top level with written sizes; one channel, or the right order, is silent.
    cell = """photo = tf.random.uniform((1, 6, 6, 4))
cut = tf.image.extract_patches(photo, sizes=[1, 3, 3, 1], strides=[1, 3, 3, 1],
                               rates=[1, 1, 1, 1], padding="VALID")
pieces = tf.reshape(cut, (-1, 4, 3, 3))
"""
    [text] = patch_notes(checked_report(run(kernel, cell)))
    assert last_code(text) == "pieces = tf.reshape(cut, (-1, 3, 3, 4))"
    fixed = cell.replace("pieces = tf.reshape(cut, (-1, 4, 3, 3))", last_code(text))
    assert patch_notes(checked_report(run(kernel, fixed))) == []
    assert (
        patch_notes(
            checked_report(
                run(
                    kernel,
                    cell.replace("(-1, 4, 3, 3)", "(-1, 1, 3, 3)").replace(
                        "(1, 6, 6, 4)", "(1, 6, 6, 1)"
                    ),
                )
            )
        )
        == []
    )
