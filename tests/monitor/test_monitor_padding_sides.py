"""Tokens and their per-token labels padded on different sides by ``pad_sequences`` (issue
#25, silent bugs): told with the call to change; the fix runs in the kernel and lines the
labels up with their tokens. Sequences of different lengths (a translation pair) and two
calls padded alike stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """words = [[3, 8, 2], [5, 4, 4, 9, 1], [7, 6]]
roles = [[0, 2, 1], [1, 0, 0, 2, 1], [2, 0]]
targets = [[1, 2, 3, 4], [6], [2, 2, 2]]
"""
# Each row's real values sit where the side puts them, in both arrays.
ALIGNED = """for row, (w, r) in enumerate(zip(words, roles)):
    cut = slice(0, len(w)) if {post} else slice({width} - len(w), {width})
    assert list({tokens}[row][cut]) == w and list({labels}[row][cut]) == r
"""


def side_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "Pad both on the same side" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("Pad both on the same side", 1)[1])[-1]


def test_labels_left_at_the_default_side(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """tok = keras.utils.pad_sequences(words, padding="post")
lab = keras.utils.pad_sequences(roles, value=0)
"""
    notes = side_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith('`tok` is padded at the end (`padding="post"`) and `lab` at the')
    fix = fix_of(notes[0])
    assert fix == 'keras.utils.pad_sequences(roles, value=0, padding="post")'
    fixed = cell.replace("keras.utils.pad_sequences(roles, value=0)", fix)
    assert side_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, ALIGNED.format(post=True, width=5, tokens="tok", labels="lab")))


def test_both_sides_written_out(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """from keras.utils import pad_sequences
ids_in = pad_sequences(words, maxlen=6, padding="pre")
tags_in = pad_sequences(roles, maxlen=6, padding="post")
"""
    notes = side_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix == 'pad_sequences(roles, maxlen=6, padding="pre")'
    fixed = cell.replace('pad_sequences(roles, maxlen=6, padding="post")', fix)
    assert side_notes(checked_report(run(kernel, fixed))) == []
    aligned = ALIGNED.format(post=False, width=6, tokens="ids_in", labels="tags_in")
    checked_report(run(kernel, aligned))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    translation = """src = keras.utils.pad_sequences(words, maxlen=5, padding="pre")
dst = keras.utils.pad_sequences(targets, maxlen=5, padding="post")
"""
    alike = """same_a = keras.utils.pad_sequences(words, padding="post")
same_b = keras.utils.pad_sequences(roles, padding="post")
"""
    twice = """front = keras.utils.pad_sequences(words, padding="pre")
back = keras.utils.pad_sequences(words, padding="post")
"""
    for cell in (translation, alike, twice):
        assert side_notes(checked_report(run(kernel, cell))) == [], cell
