"""A hand-written step that adds the gradient of a loss (issue #25, silent bugs,
``training/ascent_updates.py``): ``w.assign_add(rate * d)`` with ``d`` from
``tape.gradient(cost, ...)`` is gradient ascent, and the cost rises. Told in the cell that
runs the step (defined there, or in an earlier cell and called), naming the statement, the
step size, the gradient and the list that rose; the printed fix (``assign_sub``) is run
and the cost falls with no note. Look-alikes stay silent: a negated step, ``assign_sub``,
an adversarial step on an input, an ascent on a log-likelihood."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "training-loop"

DATA = """gen = np.random.default_rng(3)
feats = gen.normal(size=(128, 4)).astype("float32")
labels = (feats @ np.array([[1.0], [-2.0], [0.5], [3.0]], "float32")).astype("float32")
regressor = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
step_size = 0.05
"""

# A compiled step over a Keras model's variables, in a loop over zip.
COMPILED = """@tf.function
def descend():
    with tf.GradientTape() as tape:
        cost = tf.reduce_mean(tf.square(regressor(feats) - labels))
    deltas = tape.gradient(cost, regressor.trainable_variables)
    for w, d in zip(regressor.trainable_variables, deltas):
        w.assign_add(step_size * d)
    return cost

history_cost = []
for _ in range(12):
    history_cost.append(float(descend()))
"""

# Eager, two named gradients, ``assign(x + c * g)``.
SLOPE = """slope = tf.Variable(0.0)
offset = tf.Variable(0.0)
xs = np.linspace(-1, 1, 50).astype("float32")
ys = 2.0 * xs + 0.3
curve = []
for i in range(6):
    with tf.GradientTape() as tape:
        err = tf.reduce_mean((slope * xs + offset - ys) ** 2)
    g_slope, g_offset = tape.gradient(err, [slope, offset])
    slope.assign(slope + 0.1 * g_slope)
    offset.assign(offset + 0.1 * g_offset)
    curve.append(float(err))
"""


def ascent_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "Gradient ascent" in n["text"]
    ]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("against the gradient:", 1)[1])[0]


def test_a_compiled_step_adding_the_gradient(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = ascent_notes(checked_report(run(kernel, COMPILED)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("Gradient ascent: `w.assign_add(step_size * d)` in `descend` adds")
    assert "`deltas` from `tape.gradient(cost, regressor.trainable_variables)`" in text
    assert "`history_cost` rose from" in text
    rose = value_of(kernel, "history_cost")
    assert rose[-1] > rose[0]
    fix = fix_of(text)
    assert fix == "w.assign_sub(step_size * d)"
    fixed = COMPILED.replace("w.assign_add(step_size * d)", fix)
    run(kernel, DATA)
    assert ascent_notes(checked_report(run(kernel, fixed))) == []
    fell = value_of(kernel, "history_cost")
    assert fell[-1] < fell[0]


def test_a_step_defined_earlier_and_called(kernel: KernelSession) -> None:
    run(kernel, DATA)
    definition, _ = COMPILED.split("\nhistory_cost = []\n")
    assert ascent_notes(checked_report(run(kernel, definition.replace("descend", "up")))) == []
    calls = "for _ in range(8):\n    up()\n"
    notes = ascent_notes(checked_report(run(kernel, calls)))
    assert len(notes) == 1, notes
    assert "in `up`" in notes[0] and "the loss grows at every step" in notes[0]


def test_an_eager_step_written_as_assign(kernel: KernelSession) -> None:
    notes = ascent_notes(checked_report(run(kernel, SLOPE)))
    assert len(notes) == 1, notes
    assert "`slope.assign(slope + 0.1 * g_slope)`" in notes[0]
    assert "`curve` rose from" in notes[0]
    fixes = re.findall(r"`([^`]+)`", notes[0].split("against the gradient:", 1)[1])[:2]
    assert fixes == [
        "slope.assign(slope - 0.1 * g_slope)",
        "offset.assign(offset - 0.1 * g_offset)",
    ]
    fixed = SLOPE.replace("slope.assign(slope + 0.1 * g_slope)", fixes[0]).replace(
        "offset.assign(offset + 0.1 * g_offset)", fixes[1]
    )
    assert ascent_notes(checked_report(run(kernel, fixed))) == []
    curve = value_of(kernel, "curve")
    assert curve[-1] < curve[0]


LOOK_ALIKES = [
    # A negated step, and assign_sub.
    COMPILED.replace("step_size * d", "-step_size * d").replace("descend", "neg_step"),
    COMPILED.replace("assign_add", "assign_sub").replace("descend", "sub_step"),
    # An adversarial step on an input: its loss rises on purpose.
    """pixels = tf.Variable(feats[:8])
for _ in range(4):
    with tf.GradientTape() as tape:
        miss = tf.reduce_mean(tf.square(regressor(pixels) - labels[:8]))
    grad_px = tape.gradient(miss, pixels)
    pixels.assign_add(0.01 * tf.sign(grad_px))
    pixels.assign_add(0.01 * grad_px)
""",
    # Ascent on a log-likelihood, meant.
    """mu = tf.Variable(0.0)
draws = gen.normal(1.5, 1.0, size=200).astype("float32")
trail = []
for _ in range(5):
    with tf.GradientTape() as tape:
        log_lik = -tf.reduce_mean((draws - mu) ** 2)
    dmu = tape.gradient(log_lik, mu)
    mu.assign_add(0.2 * dmu)
    trail.append(float(log_lik))
""",
]


@pytest.mark.parametrize("cell", LOOK_ALIKES, ids=["negated", "sub", "input", "likelihood"])
def test_look_alikes_stay_silent(kernel: KernelSession, cell: str) -> None:
    run(kernel, DATA)
    assert ascent_notes(checked_report(run(kernel, cell))) == []
