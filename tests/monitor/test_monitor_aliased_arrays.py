"""A function that names its NumPy array parameter again, writes through the new name
and returns it (``symptoms/aliased_arrays.py``): the caller's array is overwritten, through
a slice (a view) too. The note names the function, the parameter, the alias, the write and
the caller's array, and its fix (``.copy()``) applied leaves the caller's array as it was.
A copy made first, a copy passed in, ``a = f(a)``, a function working in place on its
parameter, tensors and lists stay silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DIMMER = """def dim_bright_pixels(frame, limit):
    dimmed = {copy}
    dimmed[dimmed > limit] = limit
    dimmed[:, 0] -= 1
    return dimmed
"""

READINGS = "scan = np.arange(40, dtype=np.int64).reshape(8, 5) * 3\n"


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    return note_texts(checked_report(run(kernel, code)))


def aliased(texts: list[str]) -> list[str]:
    return [t for t in texts if "copies nothing" in t and "very array" in t]


def test_a_slice_passed_to_an_aliasing_function_is_overwritten(kernel: KernelSession) -> None:
    run(kernel, READINGS + "whole = scan\nscan = whole[2:]")
    notes = aliased(
        notes_of(kernel, DIMMER.format(copy="frame") + "capped = dim_bright_pixels(scan[:3], 50)")
    )
    assert len(notes) == 1, notes
    text = notes[0]
    assert "`dimmed = frame` in `dim_bright_pixels` copies nothing" in text, text
    assert "passed as `frame`" in text
    assert "`dimmed[dimmed > limit] = limit` (line 3 of the cell defining" in text
    assert "`capped = dim_bright_pixels(scan[:3], 50)` (line 6)" in text
    assert "`scan[:3]` is a view of `scan`, not a copy" in text
    assert "(and `whole`, whose view `scan` is)" in text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "dimmed = frame.copy()"
    # Told once per function.
    assert aliased(notes_of(kernel, "again = dim_bright_pixels(scan[3:], 50)")) == []

    # The fix in the function: the caller's array keeps its values, the result is capped.
    fixed = DIMMER.format(copy=fix.split(" = ", 1)[1])
    code = READINGS + fixed + "capped = dim_bright_pixels(scan[:3], 50)"
    assert aliased(notes_of(kernel, code)) == []
    assert value_of(kernel, "scan[:3].tolist()") == [
        [0, 3, 6, 9, 12],
        [15, 18, 21, 24, 27],
        [30, 33, 36, 39, 42],
    ]
    assert value_of(kernel, "capped.tolist()") == [
        [-1, 3, 6, 9, 12],
        [14, 18, 21, 24, 27],
        [29, 33, 36, 39, 42],
    ]
    assert value_of(kernel, "bool(np.shares_memory(capped, scan))") is False


def test_the_whole_array_passed_by_keyword_is_named(kernel: KernelSession) -> None:
    code = (
        "def jitter(grid, *, rng):\n"
        "    out = np.asarray(grid)\n"
        "    rng.shuffle(out)\n"
        "    return out\n"
        "board = np.arange(12.0).reshape(6, 2)\n"
        "mixed = jitter(grid=board, rng=np.random.default_rng(3))\n"
    )
    notes = aliased(notes_of(kernel, code))
    assert len(notes) == 1, notes
    assert "`board` now holds what `jitter` wrote" in notes[0], notes[0]
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "out = np.array(grid)"
    fixed = code.replace("out = np.asarray(grid)", fix)
    assert aliased(notes_of(kernel, fixed)) == []
    assert value_of(kernel, "board[:, 0].tolist()") == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert value_of(kernel, "sorted(mixed[:, 0].tolist())") == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_copies_in_place_functions_tensors_and_lists_stay_silent(
    kernel: KernelSession,
) -> None:
    silent = [
        # A copy first, under the parameter's own name.
        "def cap(values):\n    values = values.copy()\n    out = values\n"
        "    out[out > 4] = 4\n    return out\n"
        "series = np.arange(9)\ncapped = cap(series[2:])",
        # A copy passed in; an index array (a new array) passed in.
        DIMMER.format(copy="frame") + READINGS + "a1 = dim_bright_pixels(scan.copy(), 9)",
        DIMMER.format(copy="frame") + READINGS + "a2 = dim_bright_pixels(scan[[0, 2]], 9)",
        # The caller replaces its array with the result anyway.
        DIMMER.format(copy="frame") + READINGS + "scan = dim_bright_pixels(scan, 9)",
        # Working in place is the function's job: it writes its parameter, returns nothing.
        "def clip_in_place(block, top):\n    block[block > top] = top\n"
        "levels = np.arange(6)\nresult = clip_in_place(levels, 3)",
        # An alias that is written but not returned: in place again.
        "def zero_edges(plate):\n    view = plate\n    view[0] = 0\n"
        "sheet = np.ones((3, 3))\nout = zero_edges(sheet)",
        # Tensors take no writes: a new tensor is returned.
        "def shift(t):\n    moved = t\n    moved += 1\n    return moved\n"
        "tokens = tf.constant([1, 2, 3])\nlater = shift(tokens)",
        # A list argument: not an array.
        "def pad(items):\n    longer = items\n    longer += [0]\n    return longer\n"
        "row = [4, 5]\npadded = pad(row)",
    ]
    for code in silent:
        assert aliased(notes_of(kernel, code)) == [], code
