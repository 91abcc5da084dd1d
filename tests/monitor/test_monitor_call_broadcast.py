"""``(N, 1)`` against ``(N,)`` inside the learner's own loss function or metric method, told
in the cell that calls it eagerly (issue #25: "detect it where it happens"): the entry names
the expression and both operands in the function's names, the call's arguments in the
cell's names, and fixes that run; each fix applied in the kernel gives the right number and
no entry. Correct look-alikes (equal shapes, a reshape inside the method) stay silent, and a
later trace or call of the same function does not tell the same line again."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load=(
        "import numpy as np\nimport tensorflow as tf\nimport keras\nfrom keras import ops\n"
    ),
    after_load="",
)

DATA = """heights = np.linspace(0.0, 1.0, 24).astype("float32")          # (24,)
guesses = tf.constant(heights[:, None] + 0.5)                     # (24, 1)
"""

LOSS_CELL = """def gap_loss(target, guess):
    return tf.reduce_mean(tf.square(target - guess))

cost = float(gap_loss(heights, guesses))
"""

METRIC_CLASS = """class HitCount(keras.metrics.Metric):
    def __init__(self, name="hit_count", **kwargs):
        super().__init__(name=name, **kwargs)
        self.hits = self.add_weight(name="hits", shape=(), initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = ops.cast(y_pred > 0.5, "float32")
        y_true = ops.cast(y_true, "float32")
        self.hits.assign_add(ops.sum(y_true * y_pred))

    def result(self):
        return self.hits
"""

METRIC_CELL = """flags = (np.arange(40) % 2).astype("float32")        # (40,)
scores = tf.constant(flags[:, None] * 0.9)               # (40, 1)
counter = HitCount()
counter.update_state(flags, scores)
hits = float(counter.result())
"""


def broadcast_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "broadcasting"
    ]


def fixes_of(text: str) -> tuple[str, str]:
    spans = re.findall(r"`([^`]+)`", text.split("Make the shapes agree: ", 1)[1].split(". ")[0])
    assert len(spans) == 2, text
    return spans[0], spans[1]


def test_loss_function_called_in_its_cell(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = broadcast_notes(checked_report(run(kernel, LOSS_CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`target - guess` (line 2 of this cell, in `gap_loss`) broadcasts `guess`, "
        "a (24, 1) float32 tensor, against `target`, a (24,) float32 NumPy array"
    ), text
    assert "the result is (24, 24)" in text
    assert (
        "The call `cost = float(gap_loss(heights, guesses))` (line 4 of this cell) gave "
        "`heights`, (24,), as `target` and `guesses`, (24, 1), as `guess`; giving "
        "`heights[:, None]` there" in text
    ), text
    squeezed, widened = fixes_of(text)
    assert squeezed == "target - tf.squeeze(guess, axis=-1)"
    assert widened == "target[:, None] - guess"
    for fixed in (
        LOSS_CELL.replace("target - guess", squeezed),
        LOSS_CELL.replace("target - guess", widened),
        LOSS_CELL.replace("gap_loss(heights, guesses)", "gap_loss(heights[:, None], guesses)"),
    ):
        assert broadcast_notes(checked_report(run(kernel, fixed))) == [], fixed
        # Every guess is 0.5 above its target: the mean squared gap is 0.25.
        assert abs(value_of(kernel, "cost") - 0.25) < 1e-6, fixed


def test_metric_method_from_an_earlier_cell(kernel: KernelSession) -> None:
    run(kernel, METRIC_CLASS)
    notes = broadcast_notes(checked_report(run(kernel, METRIC_CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert re.match(
        r"`y_true \* y_pred` \(Cell In\[\d+\], line 9, in `HitCount.update_state`\) "
        r"broadcasts `y_pred`, a \(40, 1\) float32 tensor, against `y_true`, a \(40,\) "
        r"float32 tensor",
        text,
    ), text
    assert "`counter.update_state(flags, scores)`" in text
    assert "`flags`, (40,), as `y_true`" in text and "`flags[:, None]`" in text
    assert value_of(kernel, "hits") == 400.0  # 20 positives counted against 20 hits
    squeezed, _ = fixes_of(text)
    run(kernel, METRIC_CLASS.replace("y_true * y_pred", squeezed))
    assert broadcast_notes(checked_report(run(kernel, METRIC_CELL))) == []
    assert value_of(kernel, "hits") == 20.0


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # Equal shapes.
    silent = LOSS_CELL.replace("gap_loss(heights, guesses)", "gap_loss(heights, guesses[:, 0])")
    assert broadcast_notes(checked_report(run(kernel, silent))) == []
    # The method makes the shapes agree itself.
    reshaped = METRIC_CLASS.replace(
        'y_true = ops.cast(y_true, "float32")',
        'y_true = ops.reshape(ops.cast(y_true, "float32"), ops.shape(y_pred))',
    )
    run(kernel, reshaped)
    assert broadcast_notes(checked_report(run(kernel, METRIC_CELL))) == []
    assert value_of(kernel, "hits") == 20.0


def test_each_cause_told_once(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # Its own cell: a cell run again unchanged is the same cause (the same file and line).
    own = LOSS_CELL.replace("gap_loss", "gap_cost")
    assert len(broadcast_notes(checked_report(run(kernel, own)))) == 1
    traced = """@tf.function
def step(t, g):
    return gap_cost(t, g)

step(heights, guesses)
"""
    assert broadcast_notes(checked_report(run(kernel, traced))) == []
    # Called again eagerly from another cell: the same cause, not told again.
    assert broadcast_notes(checked_report(run(kernel, "gap_cost(heights, guesses)\n"))) == []


LOOP_THEN_CALL = """import sys
steps = 0
untraced_in_loop = None
for step in range(200_000):
    steps += 1
    if step == 0:
        untraced_in_loop = sys.gettrace() is None
cost = float(gap_loss(heights, guesses[:, 0]))
"""


def test_loop_before_the_watched_call_runs_untraced(kernel: KernelSession) -> None:
    """A cell that loops before calling a watched function is not traced (CPython's
    tracing path slows every line of the loop): the loop runs without a trace function,
    the cell's values are right, and no trace function is left after the cell."""
    run(kernel, DATA)
    run(kernel, LOSS_CELL)  # gap_loss is now a watched function of an earlier cell
    checked_report(run(kernel, LOOP_THEN_CALL))
    assert value_of(kernel, "untraced_in_loop") is True
    assert value_of(kernel, "steps") == 200_000
    assert abs(value_of(kernel, "cost") - 0.25) < 1e-6  # every guess is 0.5 too high
    assert value_of(kernel, "sys.gettrace() is None") is True
