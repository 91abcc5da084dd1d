"""NumPy's broadcast error raised in the learner's own line, on arrays a model returned or
the learner made (``errors/families_numpy_broadcast.py``): the traceback never enters
TensorFlow, so the entry reads which value holds which shape and prints the line with the
axes that combine every row with every row; the fix runs in the kernel and gives the
pairwise result."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]


def test_rows_of_a_prediction_against_prototype_rows(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "embedder = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])\n"
        "feats = embedder.predict(np.random.rand(30, 5).astype('float32'), verbose=0)\n"
        "prototypes = np.random.rand(4, 3).astype('float32')",
    )
    error = failing(
        kernel, "gaps = np.abs(feats - prototypes).sum(axis=-1)\nlabel = gaps.argmin(1)"
    )
    text = error["explanation"]
    assert "`feats` is a (30, 3) float32 NumPy array" in text
    assert "`prototypes` is a (4, 3) float32 NumPy array" in text
    assert "differ at axis -2 (30 vs 4)" in text
    assert "(a (30, 4, 3) result)" in text
    fix = fix_of(text)
    assert fix == "gaps = np.abs(feats[:, None, :] - prototypes[None, :, :]).sum(axis=-1)"
    runs_cleanly(kernel, fix + "\nlabel = gaps.argmin(1)")
    assert value_of(kernel, "list(label.shape)") == [30]
    # The correct look-alike stays quiet.
    runs_cleanly(kernel, "ok = np.square(feats[:, None, :] - prototypes[None]).sum(-1)")


def test_two_vectors_of_scores_and_thresholds(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "probs = tf.nn.sigmoid(tf.random.normal((12,))).numpy()\n"
        "cutoffs = np.linspace(0.1, 0.9, 5)",
    )
    error = failing(kernel, "rates = np.mean(probs - cutoffs > 0, axis=0)")
    text = error["explanation"]
    assert "`cutoffs` is a (5,) float64 NumPy array" in text
    assert "(a (12, 5) result)" in text
    fix = fix_of(text)
    assert fix == "rates = np.mean(probs[:, None] - cutoffs[None, :] > 0, axis=0)"
    runs_cleanly(kernel, fix)
    # One rate per cutoff, falling as the cutoff rises.
    assert value_of(kernel, "list(rates.shape)") == [5]
    assert value_of(kernel, "bool(np.all(np.diff(rates) <= 0))") is True


def test_a_transposed_and_a_missing_axis(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "grid = np.ones((6, 2))\nflip = np.ones((2, 6))\n"
        "col = np.arange(6.0)\ntable = np.ones((6, 3))",
    )
    error = failing(kernel, "both = grid + flip")
    fix = fix_of(error["explanation"])
    assert fix == "both = grid + flip.T"
    runs_cleanly(kernel, fix)
    error = failing(kernel, "scaled = table / col")
    # `table` (6, 3) and `col` (6,) clash at the last axis: col lacks table's last axis.
    assert "`col` lacks `table`'s last axis" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "scaled = table / col[..., None]"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(scaled.shape)") == [6, 3]


RANKED = """bank_labels = np.arange(30) % 4
probe_labels = np.arange(8) % 4
sims = np.random.rand(8, 30)
top3 = np.argsort(-sims, axis=1)[:, :3]
grid = np.random.rand(5, 2)
picks = np.array([4, 0, 2, 1, 3])
ref = np.random.rand(2, 5)
"""


def test_a_comparison_with_a_fancy_indexed_operand(kernel: KernelSession) -> None:
    """``bank_labels[top3] == probe_labels``: the gathered side cannot be read without
    running code, so it takes the message's shape; the comparison is read like ``-``."""
    runs_cleanly(kernel, RANKED)
    error = failing(kernel, "found = np.any(bank_labels[top3] == probe_labels, axis=1)")
    text = error["explanation"]
    assert "`bank_labels[top3]` is a (8, 3) array" in text
    fix = fix_of(text)
    assert fix == "found = np.any(bank_labels[top3] == probe_labels[..., None], axis=1)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "found.shape") == [8]
    runs_cleanly(kernel, "also = bank_labels[top3] == probe_labels[:, None]")
    # Arithmetic with a gathered operand, laid out the other way round: transposed.
    error = failing(kernel, "gap = grid[picks] - ref")
    fix = fix_of(error["explanation"])
    assert fix == "gap = grid[picks] - ref.T"
    runs_cleanly(kernel, fix)


def test_an_operation_beside_the_missing_axis_keeps_its_parentheses(kernel: KernelSession) -> None:
    """``(table - offset) / col``: the fix adds the axis to ``col`` and keeps ``(table -
    offset)`` whole, or it would divide ``offset`` alone."""
    runs_cleanly(
        kernel,
        "table = np.arange(18.0).reshape(6, 3) + 1\noffset = np.ones(3)\ncol = np.arange(1.0, 7.0)",
    )
    error = failing(kernel, "ratios = (table - offset) / col")
    fix = fix_of(error["explanation"])
    assert fix == "ratios = (table - offset) / col[..., None]"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "bool(np.allclose(ratios, (table - 1) / col[:, None]))") is True


SENSORS = "readings = np.random.default_rng(3).normal(size=(500, 4)) * np.array([1, 10, 1e2, 1e3])"
STATS = "centre = np.mean(readings, axis=0)\nspread = np.std(readings, axis=1)\n"


def test_a_spread_taken_per_sample_beside_a_centre_taken_per_feature(
    kernel: KernelSession,
) -> None:
    """A statistic reduced over axis 1 next to one over axis 0 of the same table: the axis is
    the cause, and the fix recomputes the spread over axis 0 where the cell made it (adding
    an axis would run but scale each sample by its own spread)."""
    runs_cleanly(kernel, SENSORS)
    error = failing(kernel, STATS + "standard = (readings - centre) / spread")
    text = error["explanation"]
    assert "reduced over axis 1 of `readings` (500, 4)" in text
    assert "Reduce over axis 0 where it is computed" in text
    assert "[..., None]" not in text
    fix = fix_of(text)
    assert fix == "spread = np.std(readings, axis=0)"
    runs_cleanly(kernel, fix + "\nstandard = (readings - centre) / spread")
    assert value_of(kernel, "bool(np.allclose(standard.std(axis=0), 1.0))") is True
    # The correct look-alike stays quiet, and a statistic per row alone (no sibling over
    # another axis) is still read as a missing axis.
    runs_cleanly(kernel, "ok = (readings - readings.mean(0)) / readings.std(0)")
    error = failing(kernel, "shares = readings / np.abs(readings).sum(axis=1)")
    assert (
        fix_of(error["explanation"])
        == "shares = readings / np.abs(readings).sum(axis=1)[..., None]"
    )


def test_an_inline_minimum_over_the_odd_axis(kernel: KernelSession) -> None:
    """Three statistics of ``scores`` in one line, two over axis 0 and one over axis 1: the
    odd one out is rewritten in the line itself."""
    runs_cleanly(kernel, "scores = np.random.default_rng(5).uniform(2, 9, size=(40, 3))")
    error = failing(
        kernel,
        "unit = (scores - scores.min(axis=0)) / (scores.max(axis=0) - scores.min(axis=1))",
    )
    text = error["explanation"]
    assert "`scores.min(axis=1)` is reduced over axis 1 of `scores` (40, 3)" in text
    fix = fix_of(text)
    assert fix == (
        "unit = (scores - scores.min(axis=0)) / (scores.max(axis=0) - scores.min(axis=0))"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "[float(v) for v in unit.min(axis=0)]") == [0.0, 0.0, 0.0]
    assert value_of(kernel, "bool(np.allclose(unit.max(axis=0), 1.0))") is True
    runs_cleanly(kernel, "fine = (scores - scores.min(0)) / (scores.max(0) - scores.min(0))")


def test_an_argmin_over_the_examples_axis_compared_with_labels(kernel: KernelSession) -> None:
    """An argmin over the examples' axis meets one label per example: the axis is named and
    rewritten, and no every-pair comparison is printed."""
    runs_cleanly(
        kernel,
        "gen = np.random.default_rng(11)\n"
        "costs = gen.uniform(size=(45, 4))\n"
        "cheapest = costs.argmin(axis=1)",
    )
    error = failing(kernel, "agree = (costs.argmin(axis=0) == cheapest).mean()")
    text = error["explanation"]
    assert "`costs.argmin(axis=0)` is taken over axis 0 of `costs` (45, 4)" in text
    assert "`cheapest` (45,) is `costs`'s shape without axis 1" in text
    assert "[None, :]" not in text and "[:, None]" not in text
    fix = fix_of(text)
    assert fix == "agree = (costs.argmin(axis=1) == cheapest).mean()"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(agree)") == 1.0
    # The argmin assigned first in the cell: the fix is that assignment.
    cell = "guess = costs.argmin(axis=0)\nhits = int(np.sum(guess == cheapest))"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`guess` is `costs.argmin(axis=0)`, taken over axis 0 of `costs` (45, 4)" in text
    fix = fix_of(text)
    assert fix == "guess = costs.argmin(axis=1)"
    runs_cleanly(kernel, cell.replace("guess = costs.argmin(axis=0)", fix))
    assert value_of(kernel, "hits") == 45
    # Two label vectors of different lengths compared: no every-pair fix either.
    error = failing(kernel, "same = np.mean(cheapest == cheapest[:40][::-1][:7])")
    assert "[None, :]" not in error["explanation"], error["explanation"]
    assert "one entry per example" in error["explanation"]
    # The correct look-alike stays quiet.
    runs_cleanly(kernel, "agree = float(np.mean(np.argmin(costs, axis=-1) == cheapest))")


def test_a_sum_over_the_rows_divided_by_one_value_per_row(kernel: KernelSession) -> None:
    """A statistic (not an argmax) over the axis the other operand keeps one entry per."""
    runs_cleanly(
        kernel,
        "minutes = np.random.default_rng(2).integers(0, 60, size=(24, 5)).astype(float)\n"
        "allowance = np.full(24, 300.0)",
    )
    error = failing(kernel, "used = np.sum(minutes, axis=0) / allowance")
    text = error["explanation"]
    assert "`np.sum(minutes, axis=0)` is taken over axis 0 of `minutes` (24, 5)" in text
    fix = fix_of(text)
    assert fix == "used = np.sum(minutes, axis=1) / allowance"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(used.shape)") == [24]
    runs_cleanly(kernel, "used = minutes.sum(axis=1) / allowance")
