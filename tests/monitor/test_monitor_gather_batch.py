"""A per-example gather written without ``batch_dims`` (issue #25, silent bugs):
``tf.gather(scores, pick, axis=1)`` with ``scores`` ``(n, k, d)`` and one index per example
in ``pick`` ``(n,)`` gives every row all ``n`` indices, a ``(n, n, d)`` result. The note
names both operands, the result's name and shape, and the call with ``batch_dims=1``,
which the test runs: the result is then each row's own pick. Look-alikes stay silent:
``batch_dims=1`` already, a lookup along axis 0, a square matrix's columns reordered by a
permutation, and a few columns chosen by index."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

SECTION = "joining-indexing"
DATA = """scores = tf.random.stateless_normal((16, 5, 3), seed=(1, 2))
pick = tf.random.stateless_uniform((16,), seed=(3, 4), maxval=5, dtype=tf.int32)
"""


def gather_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "batch_dims" in note["text"]
    ]


def test_one_index_per_example_without_batch_dims(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "chosen = tf.gather(scores, pick, axis=1)\nspread = float(tf.math.reduce_std(chosen))\n"
    notes = gather_notes(checked_report(run(kernel, cell)))
    assert value_of(kernel, "chosen.shape.as_list()") == [16, 16, 3]  # the symptom
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.gather(scores, pick, axis=1)` (line 1 of this cell) gives every row of "
        "`scores`, a (16, 5, 3) float32 tensor, all 16 indices of `pick`, a (16,) int32 tensor"
    ), text
    assert "`chosen` is (16, 16, 3)" in text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "chosen = tf.gather(scores, pick, axis=1, batch_dims=1)"
    fixed = checked_report(run(kernel, cell.replace(cell.splitlines()[0], fix)))
    assert gather_notes(fixed) == []
    assert value_of(kernel, "chosen.shape.as_list()") == [16, 3]
    own = "bool(tf.reduce_all(chosen[7] == scores[7, int(pick[7])]))"
    assert value_of(kernel, own) is True


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "chosen = tf.gather(scores, pick, axis=1, batch_dims=1)\n"
        "table = tf.random.stateless_normal((40, 8), seed=(5, 6))\n"
        "rows = tf.gather(table, pick)\n"
        "dist = tf.random.stateless_normal((16, 16), seed=(7, 8))\n"
        "order = tf.random.shuffle(tf.range(16))\n"
        "reordered = tf.gather(tf.gather(dist, order), order, axis=1)\n"
        "cols = tf.constant([0, 2])\n"
        "some = tf.gather(scores, cols, axis=2)\n"
        "total = float(tf.reduce_sum(chosen) + tf.reduce_sum(rows) + tf.reduce_sum(some))\n"
    )
    assert gather_notes(checked_report(run(kernel, cell))) == []


FUNCTION_DATA = """picker_net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4)])
obs = np.random.rand(20, 6).astype("float32")
choice = np.random.randint(0, 4, size=20)
keep = np.array([0, 3])
"""


def test_a_function_of_the_cell_gathering_one_index_per_example(kernel: KernelSession) -> None:
    """The gather sits in a function the cell defines and calls: its operands are what the
    call passed, a model's output (rows of its input, the model's width) and one index
    per row; the note names the function, the call and the fixed line."""
    run(kernel, FUNCTION_DATA)
    cell = (
        "def chosen_scores(all_scores, which):\n"
        "    return tf.gather(all_scores, which, axis=1)\n"
        "\n"
        "picked = chosen_scores(picker_net(obs), choice)\n"
        "gap = tf.reduce_mean(tf.square(picked - tf.ones(20)))\n"
    )
    notes = gather_notes(checked_report(run(kernel, cell)))
    assert value_of(kernel, "picked.shape.as_list()") == [20, 20]  # the symptom
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.gather(all_scores, which, axis=1)` in `chosen_scores` (line 2 of this cell), "
        "called as `chosen_scores(picker_net(obs), choice)`, gives every row of "
        "`all_scores`, a (20, 4) tensor from `picker_net`, all 20 indices of `which`, a "
        "(20,) int64 NumPy array"
    ), text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "return tf.gather(all_scores, which, axis=1, batch_dims=1)"
    fixed_cell = cell.replace("return tf.gather(all_scores, which, axis=1)", fix)
    assert gather_notes(checked_report(run(kernel, fixed_cell))) == []
    assert value_of(kernel, "picked.shape.as_list()") == [20]
    own = "bool(np.isclose(float(picked[5]), float(picker_net(obs)[5, int(choice[5])])))"
    assert value_of(kernel, own) is True
    # Keywords, names held in the namespace, and the result assigned in the function.
    run(kernel, DATA)
    cell = (
        "def per_row(table, idx):\n"
        "    out = tf.gather(table, idx, 1)\n"
        "    return out\n"
        "\n"
        "spread = float(tf.math.reduce_std(per_row(idx=pick, table=scores)))\n"
    )
    notes = gather_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = re.findall(r"`([^`]+)`", notes[0])[-1]
    assert fix == "out = tf.gather(table, idx, 1, batch_dims=1)"
    fixed_cell = cell.replace("out = tf.gather(table, idx, 1)", fix)
    assert gather_notes(checked_report(run(kernel, fixed_cell))) == []
    assert value_of(kernel, "per_row(scores, pick).shape.as_list()") == [16, 3]


def test_functions_gathering_columns_on_purpose_stay_silent(kernel: KernelSession) -> None:
    run(kernel, FUNCTION_DATA)
    cell = (
        "def columns(all_scores, which):\n"
        "    return tf.gather(all_scores, which, axis=1)\n"
        "\n"
        "def own_pick(all_scores, which):\n"
        "    return tf.gather(all_scores, which, axis=1, batch_dims=1)\n"
        "\n"
        "two = columns(picker_net(obs), keep)\n"
        "mine = own_pick(picker_net(obs), choice)\n"
        "first = columns(picker_net(obs[:4]), choice)\n"
        "total = float(tf.reduce_sum(two) + tf.reduce_sum(mine) + tf.reduce_sum(first))\n"
    )
    assert gather_notes(checked_report(run(kernel, cell))) == []


def test_several_indices_per_example_without_batch_dims(kernel: KernelSession) -> None:
    # Each sentence's own chosen positions, (n, k): without batch_dims every sentence gets
    # every sentence's positions, (n, n, k).
    run(
        kernel,
        "token_ids = tf.reshape(tf.range(80), (8, 10))\n"
        "chosen_pos = tf.math.top_k(tf.random.stateless_uniform((8, 10), seed=(2, 9)), k=3)"
        ".indices\n",
    )
    cell = "kept = tf.gather(token_ids, chosen_pos, axis=1)\nn_kept = int(tf.size(kept))\n"
    notes = gather_notes(checked_report(run(kernel, cell)))
    assert value_of(kernel, "kept.shape.as_list()") == [8, 8, 3]  # the symptom
    assert len(notes) == 1, notes
    text = notes[0]
    assert (
        "gives every row of `token_ids`, a (8, 10) int32 tensor, the index rows of all 8 rows "
        "of `chosen_pos`, a (8, 3) int32 tensor, not its own row of them"
    ) in text, text
    assert "`kept` is (8, 8, 3)" in text and "(shape (8, 3))" in text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "kept = tf.gather(token_ids, chosen_pos, axis=1, batch_dims=1)"
    fixed = checked_report(run(kernel, cell.replace(cell.splitlines()[0], fix)))
    assert gather_notes(fixed) == []
    own = "bool(tf.reduce_all(kept[5] == tf.gather(token_ids[5], chosen_pos[5])))"
    assert value_of(kernel, own) is True
    # One shared table of positions for every row (not one row per example), and the
    # same positions for all rows: no note.
    quiet = (
        "table = tf.constant([[0, 1], [4, 5], [8, 9]])\n"
        "pairs = tf.gather(token_ids, table, axis=1)\n"
        "firsts = tf.gather(token_ids, [0, 2, 5], axis=1)\n"
    )
    assert gather_notes(checked_report(run(kernel, quiet))) == []
