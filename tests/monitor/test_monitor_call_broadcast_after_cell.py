"""``(N, 1)`` against ``(N,)`` inside the learner's own loss, called from a custom training
loop (``symptoms/call_broadcast.py``, read after the cell): the first call of a Keras model
runs thousands of Python calls before the loss, more than the call watch follows, and a
loop before the call keeps the watch off. The loss is then read from its calls in the
cell, with the values its arguments' names hold after the cell (``y[pick]`` followed
through its integer positions). The note names the function's expression, both shapes
and the call rewritten as its fix; applied, the cell trains on the right loss with no
note. A call given matching shapes, and one whose argument name is rebound after the
call, stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(3)
temps = gen.uniform(0, 30, size=(300, 1)).astype("float32")
sales = (2.0 * temps[:, 0] + 5.0).astype("float32")        # (300,)
"""

LOSS = """def gap_cost(actual, guess):
    diff = actual - guess
    return tf.reduce_mean(tf.abs(diff))
"""

LOOP = """net = keras.Sequential([keras.Input(shape=(1,)), keras.layers.Dense(8, activation="relu"),
                         keras.layers.Dense(1)])
sgd = keras.optimizers.Adam(0.05)
for epoch in range(15):
    pick = gen.integers(0, len(temps), size=48)
    with tf.GradientTape() as tape:
        out = net(temps[pick])
        cost = gap_cost(sales[pick], out)
    grads = tape.gradient(cost, net.trainable_variables)
    sgd.apply_gradients(zip(grads, net.trainable_variables))
"""

CALL = "cost = gap_cost(sales[pick], out)"
FIXED_CALL = "cost = gap_cost(sales[pick][:, None], out)"


def broadcast_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "broadcasting"
    ]


def test_a_loss_in_a_custom_loop_is_read_from_its_call(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, LOSS)
    notes = broadcast_notes(checked_report(run(kernel, LOOP)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`actual - guess` (Cell In["), text
    assert ", line 2, in `gap_cost`) broadcasts `guess`, a (48, 1) float32 tensor, " in text
    assert "against `actual`, a (48,) float32 NumPy array: the result is (48, 48)" in text
    assert f"The call `{CALL}` (line 8 of this cell) gives `sales[pick]` as `actual`" in text
    assert f"make the shapes agree there, `{FIXED_CALL}`." in text
    fixed = LOOP.replace(CALL, FIXED_CALL)
    assert broadcast_notes(checked_report(run(kernel, fixed))) == []
    # The loss now pairs each target with its own prediction.
    right = "float(np.mean(np.abs(sales[pick][:, None] - out.numpy())))"
    assert abs(value_of(kernel, f"float(cost) - {right}")) < 1e-5


def test_the_same_loss_after_a_loop_is_read_too(kernel: KernelSession) -> None:
    """A loop before the call keeps the trace function off; the call is read after."""
    run(kernel, DATA)
    run(kernel, LOSS.replace("gap_cost", "gap_mean"))
    cell = (
        "total = 0\nfor i in range(1000):\n    total += i\n"
        "guesses = temps[:40] * 2.0 + 5.0\n"
        "recent = sales[:40]\n"
        "score = float(gap_mean(recent, guesses))\n"
    )
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "broadcasts `guess`, a (40, 1) float32 NumPy array" in notes[0]
    fixed_call = "score = float(gap_mean(recent[:, None], guesses))"
    assert f"`{fixed_call}`" in notes[0]
    assert (
        broadcast_notes(
            checked_report(
                run(kernel, cell.replace("score = float(gap_mean(recent, guesses))", fixed_call))
            )
        )
        == []
    )
    assert abs(value_of(kernel, "score")) < 1e-5  # every guess is its own sale


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, LOSS.replace("gap_cost", "gap_abs"))
    # Matching shapes at the call.
    matching = LOOP.replace(CALL, "cost = gap_abs(sales[pick], out[:, 0])")
    assert broadcast_notes(checked_report(run(kernel, matching))) == []
    # The argument's name is given another value after the call: not read.
    rebound = LOOP.replace(CALL, "cost = gap_abs(sales[pick], out)") + "out = out[:, 0]\n"
    assert broadcast_notes(checked_report(run(kernel, rebound))) == []


SURVIVAL = """gen2 = np.random.default_rng(21)
ages = gen2.normal(size=(250, 3)).astype("float32")
alive = (gen2.random(250) < 0.3).astype("float32")          # (250,)
risk_net = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1, activation="sigmoid")])
"""

SCORE = """risk = risk_net.predict(ages, verbose=0)                    # (250, 1)

def cross_entropy(chance, outcome):
    return -np.mean(outcome * np.log(chance) + (1 - outcome) * np.log1p(-chance))

score = cross_entropy(risk, alive)"""


def test_parameters_inside_element_wise_functions_are_read_from_the_call(
    kernel: KernelSession,
) -> None:
    """The function's operands are `outcome` beside `np.log(chance)` and `1 - outcome`
    beside `np.log1p(-chance)`: each the shape of its parameter, read from the call after
    the cell (predict spends the watch's call budget first)."""
    run(kernel, SURVIVAL)
    notes = broadcast_notes(checked_report(run(kernel, SCORE)))
    assert notes, "the (250, 1) risk against the (250,) outcomes is told"
    text = notes[0]
    assert text.startswith("`outcome * np.log(chance)` (line 4 of this cell, in `cross_entropy`)")
    assert "a (250, 1) float32 NumPy array, against `outcome`, a (250,) float32" in text
    assert "the result is (250, 250)" in text
    call, fixed_call = (
        "score = cross_entropy(risk, alive)",
        "score = cross_entropy(risk, alive[:, None])",
    )
    assert f"The call `{call}` (line 6 of this cell) gives `alive` as `outcome`" in text
    assert f"make the shapes agree there, `{fixed_call}`." in text
    assert broadcast_notes(checked_report(run(kernel, SCORE.replace(call, fixed_call)))) == []
    # Each example's own risk against its own outcome: the log loss computed row by row.
    right = (
        "float(-np.mean([o * np.log(r) + (1 - o) * np.log1p(-r)"
        " for r, o in zip(risk[:, 0], alive)]))"
    )
    assert abs(value_of(kernel, f"float(score) - {right}")) < 1e-5


def test_flattened_predictions_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SURVIVAL)
    flat = SCORE.replace(
        "risk = risk_net.predict(ages, verbose=0)",
        "risk = risk_net.predict(ages, verbose=0).ravel()",
    )
    assert broadcast_notes(checked_report(run(kernel, flat))) == []


def test_every_call_on_the_line_is_fixed(kernel: KernelSession) -> None:
    """Two calls on one line give the same (250,) outcomes: the fix widens both, so the
    second score is right too."""
    run(kernel, SURVIVAL)
    line = "pair = (cross_entropy(risk, alive), cross_entropy(softened, alive))"
    cell = SCORE.replace(
        "score = cross_entropy(risk, alive)", "softened = np.clip(risk, 0.1, 0.9)\n" + line
    )
    notes = broadcast_notes(checked_report(run(kernel, cell)))
    assert notes
    fixed_line = (
        "pair = (cross_entropy(risk, alive[:, None]), cross_entropy(softened, alive[:, None]))"
    )
    assert f"make the shapes agree there, `{fixed_line}`." in notes[0]
    assert broadcast_notes(checked_report(run(kernel, cell.replace(line, fixed_line)))) == []
    right = (
        "float(-np.mean([o * np.log(r) + (1 - o) * np.log1p(-r)"
        " for r, o in zip(softened[:, 0], alive)]))"
    )
    assert abs(value_of(kernel, f"float(pair[1]) - {right}")) < 1e-5
