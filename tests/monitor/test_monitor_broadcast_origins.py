"""A silent ``(N, 1)``-against-``(N,)`` broadcast told with the statement that made the vector
(issue #25: a teacher names where ``y`` lost its axis, not only the loss it reached).

The ``(N,)`` operand is followed out of the loss through the learner's frames (a traced
``tf.function`` calling a helper, an eager call of a loss function) or read at a cell's
top level, to its name's newest assignment before the line, in this cell or an earlier
one: an integer column index, a reduction over the last axis without ``keepdims``, a
range or a draw given one length. The entry names that statement and the part that
dropped the axis, and gives the statement rewritten to keep it; the fix is applied in
the kernel: the cell runs, gets no entry, and computes the matched-pair value. A vector
the reading cannot trace to such a part (a sum of two vectors, a name rebound since) gets
the broadcast entry without a made-at sentence, and the correct cells stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(11)
coef = tf.Variable([[0.4], [-0.2]])

def predict(w, inp):
    return tf.matmul(inp, w)
"""

TRAINING = """def gap(w, inp, goal):
    return tf.reduce_mean(tf.abs(predict(w, inp) - goal))

opt = keras.optimizers.SGD(0.05)

@tf.function
def fit_once(inp, goal):
    with tf.GradientTape() as tape:
        cost = gap(coef, inp, goal)
    opt.apply_gradients(zip(tape.gradient(cost, [coef]), [coef]))
    return cost

for round_ in range(20):
    table = gen.normal(size=(32, 3)).astype("float32")
    inp = table[:, :2]
    goal = table[:, 2] * 0.5
    cost = fit_once(inp, goal)
"""


def broadcast_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "broadcasting"
    ]


def test_traced_loss_names_where_the_target_lost_its_axis(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = broadcast_notes(checked_report(run(kernel, TRAINING)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`predict(w, inp) - goal` (line 2 of this cell, in `gap`)"), text
    # The call-site fix is kept, then the statement that made the vector.
    assert "`cost = gap(coef, inp, goal[:, None])`" in text, text
    made = "goal = table[:, 2] * 0.5"
    fixed = "goal = table[:, 2:3] * 0.5"
    assert (
        f"`goal` got its (32,) shape at line 16 of this cell, `{made}`: `table[:, 2]` takes "
        "one column of `table` by an integer index, which drops that axis. Or fix it where "
        f"it is made, `{fixed}`: `goal` is then (32, 1) for every use after it."
    ) in text, text
    # The fix at the source: the cell runs, no entry, and the loss is the matched-pair mean.
    report = checked_report(run(kernel, TRAINING.replace(made, fixed)))
    assert broadcast_notes(report) == []
    assert value_of(kernel, "list(goal.shape)") == [32, 1]
    matched = value_of(
        kernel,
        "bool(abs(float(gap(coef, inp, goal)) - float(np.mean(np.abs(inp @ coef.numpy() - goal))))"
        " < 1e-5)",
    )
    assert matched is True


def test_an_earlier_cells_reduction_without_keepdims(kernel: KernelSession) -> None:
    made_cell = """marks = gen.normal(size=(40, 4)).astype("float32")
centre = np.mean(marks, axis=1)
"""
    run(kernel, DATA)
    run(kernel, made_cell)
    cell = """first = marks[:, :1]
spread = float(np.mean((first - centre) ** 2))
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert "`first - centre` (line 2 of this cell) broadcasts `first`" in text, text
    assert (
        ", line 2, `centre = np.mean(marks, axis=1)`: `np.mean(marks, axis=1)` reduces axis 1"
        in (text)
    ), text
    fixed = "centre = np.mean(marks, axis=1, keepdims=True)"
    assert f"Or fix it where it is made, `{fixed}`: `centre` is then (40, 1)" in text, text
    run(kernel, made_cell.replace("centre = np.mean(marks, axis=1)", fixed))
    assert broadcast_notes(checked_report(run(kernel, cell))) == []
    expected = "float(np.mean((marks[:, 0] - marks.mean(axis=1)) ** 2))"
    assert value_of(kernel, f"abs(spread - {expected}) < 1e-6") is True


def test_an_eager_loss_call_and_a_range_made_without_a_second_axis(
    kernel: KernelSession,
) -> None:
    run(kernel, DATA)
    cell = """def hinge_gap(truth, guess):
    return tf.reduce_mean(tf.maximum(0.0, 1.0 - truth * guess))

signs = np.sign(np.linspace(-1.0, 1.0, 16)).astype("float32")
guess = tf.constant(np.linspace(-0.5, 0.5, 16, dtype="float32")[:, None])
value = float(hinge_gap(signs, guess))
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    made = 'signs = np.sign(np.linspace(-1.0, 1.0, 16)).astype("float32")'
    fixed = 'signs = np.sign(np.linspace(-1.0, 1.0, 16)[:, None]).astype("float32")'
    assert f"`signs` got its (16,) shape at line 4 of this cell, `{made}`" in text, text
    assert "`np.linspace(-1.0, 1.0, 16)` makes a vector, with no second axis" in text, text
    assert f"Or fix it where it is made, `{fixed}`" in text, text
    assert broadcast_notes(checked_report(run(kernel, cell.replace(made, fixed)))) == []
    expected = "float(np.mean(np.maximum(0.0, 1.0 - signs[:, 0] * guess.numpy()[:, 0])))"
    assert value_of(kernel, f"abs(value - {expected}) < 1e-6") is True


def test_a_vector_from_elsewhere_gets_no_made_at_sentence(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # Two vectors summed: the axis is not lost at one place the reading can name.
    cell = """rows = gen.normal(size=(24, 2)).astype("float32")
noise = gen.normal(size=24).astype("float32")
target = rows[:, 0] + noise
pred = rows[:, 1:]
err = np.mean(np.abs(pred - target))
"""
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "got its" not in notes[0], notes[0]
    # The vector written on the calling line: no statement made it, the call-site fix stays.
    cell = TRAINING.replace("    goal = table[:, 2] * 0.5\n", "").replace(
        "cost = fit_once(inp, goal)", "cost = fit_once(inp, table[:, 2])"
    )
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "got its" not in notes[0] and "`cost = gap(coef, inp, goal[:, None])`" in notes[0]


def test_correct_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cells = [
        # The same training loop with the target kept a column.
        TRAINING.replace("goal = table[:, 2] * 0.5", "goal = table[:, 2:3] * 0.5"),
        # A column index used against a vector of the same shape.
        """cols = gen.normal(size=(30, 3)).astype("float32")
lhs = cols[:, 0]
rhs = tf.reduce_mean(cols, axis=1)
diff = float(tf.reduce_mean((lhs - rhs) ** 2))
""",
        # A flattened prediction against flat labels.
        """logit_col = tf.constant(gen.normal(size=(30, 1)).astype("float32"))
flat = tf.reshape(logit_col, [-1])
hits = tf.reduce_mean(tf.cast(tf.equal(flat > 0.0, np.arange(30) % 2 == 0), tf.float32))
""",
    ]
    for cell in cells:
        assert broadcast_notes(checked_report(run(kernel, cell))) == [], cell
