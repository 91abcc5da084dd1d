"""``+`` between NumPy arrays written to join them as lists are joined
(``errors/families_joined_arrays.py``): the parts of one array around a cut, or two arrays
given to a joining call. Each printed fix runs in the kernel and gives the joined values;
arithmetic on overlapping slices and arrays added outside a joining call keep their own
readings."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

HOLDOUT = """def leave_one_block_out(n_rows, n_blocks):
    shuffled = np.random.default_rng(7).permutation(n_rows)
    blocks = shuffled.reshape(n_blocks, -1)
    pairs = []
    for b in range(n_blocks):
        fit_rows = np.concatenate(blocks[:b] + blocks[b + 1:])
        pairs.append((fit_rows, blocks[b]))
    return pairs
"""


def test_the_parts_around_a_cut_joined_in_a_concatenate(kernel: KernelSession) -> None:
    runs_cleanly(kernel, HOLDOUT)
    error = failing(kernel, "pairs = leave_one_block_out(20, 4)")
    text = error["explanation"]
    assert error["course"]["section"] == "joining-indexing"
    assert "in `leave_one_block_out`" in text
    assert "`blocks[:b]` and `blocks[b + 1:]` are the parts of `blocks`" in text
    assert "(0, 5) and a (3, 5) NumPy array" in text
    assert "never joins them the way `+` joins two lists" in text
    assert "the result is a (15,) array" in text
    fix = fix_of(text)
    assert fix == "fit_rows = np.concatenate([*blocks[:b], *blocks[b + 1:]])"
    fixed = HOLDOUT.replace("fit_rows = np.concatenate(blocks[:b] + blocks[b + 1:])", fix)
    assert fixed != HOLDOUT
    runs_cleanly(kernel, fixed + "pairs = leave_one_block_out(20, 4)")
    # Every row is held out once, and the other 15 are the ones fitted on.
    assert (
        value_of(
            kernel,
            "[sorted(set(f.tolist()) | set(h.tolist())) == list(range(20)) and len(f) == 15"
            " and not set(f.tolist()) & set(h.tolist()) for f, h in pairs]",
        )
        == [True] * 4
    )


def test_two_vectors_added_inside_a_concatenate(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "early = np.array([3.0, 1.0, 4.0])\nlate = np.array([1.0, 5.0])")
    error = failing(kernel, "timeline = np.concatenate(early + late)")
    text = error["explanation"]
    assert "given to `np.concatenate` to join" in text
    fix = fix_of(text)
    assert fix == "timeline = np.concatenate([early, late])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "timeline.tolist()") == [3.0, 1.0, 4.0, 1.0, 5.0]


def test_the_parts_around_a_cut_outside_a_joining_call(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "grid = np.arange(12).reshape(4, 3)\ndrop = 0")
    error = failing(kernel, "kept = grid[:drop] + grid[drop + 1:]")
    text = error["explanation"]
    assert "the parts of `grid` before and after the cut" in text
    fix = fix_of(text)
    assert fix == "kept = np.concatenate([grid[:drop], grid[drop + 1:]])"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "kept.tolist()") == [[3, 4, 5], [6, 7, 8], [9, 10, 11]]


def test_arithmetic_look_alikes_keep_their_own_reading(kernel: KernelSession) -> None:
    # Neighbours summed: overlapping slices are arithmetic, not parts around a cut.
    runs_cleanly(kernel, "ramp = np.arange(6.0)\nneighbours = ramp[:-1] + ramp[1:]")
    assert value_of(kernel, "neighbours.tolist()") == [1.0, 3.0, 5.0, 7.0, 9.0]
    execution = run(kernel, "off_by_one = ramp[1:] + ramp[:-2]", ok=False)
    error = checked_report(execution)["error"]
    assert error is None or "joins two lists" not in error["explanation"]
    # Two arrays added outside a joining call: the broadcast reading, not this one.
    runs_cleanly(kernel, "queries = np.ones((3, 2))\nkeys = np.ones((5, 2))")
    error = failing(kernel, "gap = queries - keys")
    assert "joins two lists" not in error["explanation"]
    execution = run(kernel, "total = queries + keys", ok=False)
    error = checked_report(execution)["error"]
    assert error is not None and "joins two lists" not in error["explanation"]
