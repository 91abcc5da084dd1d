"""A reshape written in the input's own axis names out of their order (issue #25, silent
bugs, ``symptoms/named_axes_reshape.py``): ``batch, steps, width = seq.shape`` then
``tf.reshape(seq, (batch, heads, steps, width // heads))`` puts the heads before the
steps with a reshape alone, which cuts the memory order and moves no piece of an axis.
Read from the cell's source; the note names the statement and the order its names ask
for, and its fix (split, transpose, reshape as written) is run: the note is gone and the
result is the reordering the names meant (checked against a NumPy transpose). Look-alikes
stay silent: the split followed by a transpose, merges and splits of neighbouring axes,
``-1``, and a reshape of a name bound again since its axes were named."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

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


HEADS = """def heads_first(seq, n_heads):
    batch, steps, width = seq.shape
    return tf.reshape(seq, (batch, n_heads, steps, width // n_heads))

tokens = tf.reshape(tf.range(2 * 5 * 12, dtype=tf.float32), (2, 5, 12))
split = heads_first(tokens, 3)
"""
HEADS_LINE = "    return tf.reshape(seq, (batch, n_heads, steps, width // n_heads))"


def test_heads_split_by_a_reshape_alone(kernel: KernelSession) -> None:
    [text] = reshape_notes(checked_report(run(kernel, HEADS)))
    assert text.startswith(
        "`return tf.reshape(seq, (batch, n_heads, steps, width // n_heads))` (line 3 of this "
        "cell, in `heads_first`) reshapes `seq`, whose axes the cell names (batch, steps, "
        "width) from its shape"
    ), text
    assert "(batch); (part of width); (steps); (part of width)" in text
    fix = last_code(text)
    assert fix == (
        "return tf.reshape(tf.transpose(tf.reshape(seq, (batch, steps, n_heads, "
        "width // n_heads)), [0, 2, 1, 3]), (batch, n_heads, steps, width // n_heads))"
    )
    fixed = HEADS.replace(HEADS_LINE, f"    {fix}")
    assert reshape_notes(checked_report(run(kernel, fixed))) == []
    expected = "np.transpose(tokens.numpy().reshape(2, 5, 3, 4), (0, 2, 1, 3))"
    assert value_of(kernel, f"bool(np.array_equal(split.numpy(), {expected}))") is True


PLANES = """n_img, rows, cols, chans = photos.shape
planar = np.reshape(photos, (n_img, chans, rows * cols))
"""


def test_channels_moved_first_in_numpy_and_a_plain_reorder_told_once(
    kernel: KernelSession,
) -> None:
    run(kernel, "photos = np.random.default_rng(3).random((2, 4, 6, 5))")
    [text] = reshape_notes(checked_report(run(kernel, PLANES)))
    assert "(n_img); (chans); (rows and cols)" in text
    fix = last_code(text)
    assert (
        fix
        == "planar = np.reshape(np.transpose(photos, [0, 3, 1, 2]), (n_img, chans, rows * cols))"
    )
    assert (
        reshape_notes(checked_report(run(kernel, PLANES.replace(PLANES.splitlines()[1], fix))))
        == []
    )
    check = "np.array_equal(planar, np.moveaxis(photos, 3, 1).reshape(2, 5, 24))"
    assert value_of(kernel, f"bool({check})") is True
    # The sizes in another order: the shapes' check would tell it too; one note.
    run(kernel, "grid = tf.reshape(tf.range(12.0), (3, 4))")
    cell = "height, width = grid.shape\nacross = tf.reshape(grid, (width, height))\n"
    [swap] = reshape_notes(checked_report(run(kernel, cell)))
    assert "whose axes the cell names (height, width)" in swap
    assert last_code(swap) == "across = tf.reshape(tf.transpose(grid, [1, 0]), (width, height))"


LOOK_ALIKES = """def heads_first(seq, n_heads):
    batch, steps, width = seq.shape
    parts = tf.reshape(seq, (batch, steps, n_heads, width // n_heads))
    return tf.transpose(parts, (0, 2, 1, 3))

def merged(seq):
    batch, steps, width = tf.unstack(tf.shape(seq))
    rows = tf.reshape(seq, [batch * steps, width])
    pairs = tf.reshape(seq, [batch, steps * 2, width // 2])
    flat = tf.reshape(seq, [batch, -1])
    return rows, pairs, flat

def rebound(seq):
    batch, steps, width = seq.shape
    seq = tf.transpose(seq, (0, 2, 1))
    return tf.reshape(seq, (batch, width, steps))

outs = heads_first(tokens, 3), merged(tokens), rebound(tokens)
"""


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, "tokens = tf.reshape(tf.range(2 * 5 * 12, dtype=tf.float32), (2, 5, 12))")
    assert reshape_notes(checked_report(run(kernel, LOOK_ALIKES))) == []
