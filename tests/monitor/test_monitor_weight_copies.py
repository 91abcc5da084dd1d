"""Copies that go the wrong way (issue #25, silent bugs): one model under two names used
as two (``training/model_aliases.py``: ``shadow = online`` then a loop that trains
``online`` and reads ``shadow``), and a copy into the model being trained from one nothing
trains, inside its training loop (``training/weight_copies.py``:
``learner.set_weights(anchor.get_weights())``, or an assign loop). Each is told in the cell
that runs the loop, naming both models; the printed fixes (a clone with the weights, the
copy the other way) are run and the models then differ, the trained one keeps learning,
with no note. Look-alikes stay silent: a copy before training (a pretrained start), best
weights kept and restored, the copy in the right direction, two names only read."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "clone-model"

SETUP = """gen = np.random.default_rng(21)
pts = gen.normal(size=(160, 3)).astype("float32")
vals = (pts @ np.array([[0.5], [1.5], [-1.0]], "float32")).astype("float32")

def make_net():
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(8, activation="tanh"),
                             keras.layers.Dense(1)])

opt = keras.optimizers.SGD(0.05)
online = make_net()
"""

STEP = """def update(xb, yb):
    with tf.GradientTape() as tape:
        aim = yb + 0.1 * shadow(xb)
        gap = tf.reduce_mean(tf.square(online(xb) - aim))
    grads = tape.gradient(gap, online.trainable_variables)
    opt.apply_gradients(zip(grads, online.trainable_variables))
    return float(gap)
"""

LOOP = """gaps = []
for i in range(30):
    gaps.append(update(pts, vals))
    if i % 10 == 0:
        online.set_weights(shadow.get_weights())
"""


def copy_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION
        and ("copied nothing" in n["text"] or "copied the wrong way" in n["text"])
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


SAME = "all(np.array_equal(a, b) for a, b in zip(online.get_weights(), shadow.get_weights()))"


def test_one_model_under_two_names_used_as_two(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    assert copy_notes(checked_report(run(kernel, "shadow = online\n"))) == []
    assert copy_notes(checked_report(run(kernel, STEP))) == []
    notes = copy_notes(checked_report(run(kernel, LOOP)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`shadow` is `online`: `shadow = online` (cell In[")
    assert "Training `online` (through `update`) trains `shadow` too" in text
    assert "`online.set_weights(shadow.get_weights())` (line 5) copies the model onto itself" in (
        text
    )
    assert "its direction is also reversed" in text
    clone, weights, sync = codes(text)[-3:]
    assert clone == "shadow = keras.models.clone_model(online)"
    assert weights == "shadow.set_weights(online.get_weights())"
    assert sync == "shadow.set_weights(online.get_weights())"
    # The fix: a separate model with the weights, and the copy from the trained one.
    run(kernel, SETUP)
    assert copy_notes(checked_report(run(kernel, f"{clone}\n{weights}\n"))) == []
    assert copy_notes(checked_report(run(kernel, STEP))) == []
    fixed = LOOP.replace("online.set_weights(shadow.get_weights())", sync)
    assert copy_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, SAME) is False  # the copy lags the trained model
    assert value_of(kernel, "gaps[-1] < gaps[0]") is True


def test_two_names_trained_and_read_in_one_cell_without_a_copy(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = (
        "averaged = online\n"
        "online.compile(optimizer='adam', loss='mse')\n"
        "online.fit(pts, vals, epochs=2, verbose=0)\n"
        "drift = float(np.abs(averaged(pts) - online(pts)).max())\n"
    )
    notes = copy_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "`averaged = online` (line 1 of this cell)" in notes[0]
    assert "Training `online` trains `averaged` too" in notes[0]
    clone, weights = codes(notes[0])[-2:]
    assert clone == "averaged = keras.models.clone_model(online)"  # no sync: no copy here
    assert weights == "averaged.set_weights(online.get_weights())"
    run(kernel, SETUP)
    fixed = cell.replace("averaged = online\n", f"{clone}\n{weights}\n")
    assert copy_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "drift > 0") is True  # two models now: the fit moved one


WRONG_WAY = """learner = make_net()
learner.compile(optimizer="adam", loss="mse")
anchor = make_net()
anchor.set_weights(learner.get_weights())
start = [w.copy() for w in learner.get_weights()]
for rnd in range(4):
    learner.fit(pts, vals, epochs=1, verbose=0)
    learner.set_weights(anchor.get_weights())
"""
LEARNED = "not all(np.array_equal(a, b) for a, b in zip(start, learner.get_weights()))"


def test_a_copy_into_the_trained_model_inside_its_loop(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = copy_notes(checked_report(run(kernel, WRONG_WAY)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "Weights copied the wrong way: `learner.set_weights(anchor.get_weights())` (line 8) "
        "runs inside the loop that trains `learner`"
    )
    assert value_of(kernel, LEARNED) is False  # what the note says: the learning is lost
    fix = codes(text)[-1]
    assert fix == "anchor.set_weights(learner.get_weights())"
    fixed = WRONG_WAY.replace("    learner.set_weights(anchor.get_weights())", f"    {fix}")
    assert copy_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, LEARNED) is True


def test_a_soft_update_loop_into_the_trained_model(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = """polyak = make_net()
polyak.set_weights(online.get_weights())
for k in range(5):
    with tf.GradientTape() as tape:
        mse = tf.reduce_mean(tf.square(online(pts) - vals))
    grads = tape.gradient(mse, online.trainable_variables)
    opt.apply_gradients(zip(grads, online.trainable_variables))
    for w_on, w_av in zip(online.weights, polyak.weights):
        w_on.assign(0.9 * w_av + 0.1 * w_on)
"""
    notes = copy_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = codes(notes[0])[-1]
    assert fix == "for w_on, w_av in zip(polyak.weights, online.weights):"
    fixed = cell.replace("for w_on, w_av in zip(online.weights, polyak.weights):", fix)
    assert copy_notes(checked_report(run(kernel, fixed))) == []
    moved = (
        "not all(np.array_equal(a, b) for a, b in zip(online.get_weights(), polyak.get_weights()))"
    )
    assert value_of(kernel, moved) is True


LOOK_ALIKES = [
    # A pretrained start, then training.
    """base = make_net()
tuned = make_net()
tuned.set_weights(base.get_weights())
tuned.compile(optimizer="adam", loss="mse")
for e in range(2):
    tuned.fit(pts, vals, epochs=1, verbose=0)
""",
    # The best weights kept in a second model and put back.
    """runner = make_net()
runner.compile(optimizer="adam", loss="mse")
best_net = make_net()
best = np.inf
for e in range(3):
    seen = runner.fit(pts, vals, epochs=1, verbose=0).history["loss"][-1]
    if seen < best:
        best = seen
        best_net.set_weights(runner.get_weights())
    elif seen > 2 * best:
        runner.set_weights(best_net.get_weights())
""",
    # The sync in the right direction.
    """trainee = make_net()
trainee.compile(optimizer="adam", loss="mse")
mirror = make_net()
for e in range(3):
    trainee.fit(pts, vals, epochs=1, verbose=0)
    mirror.set_weights(trainee.get_weights())
""",
    # Two names of one model, only read.
    """same = online
print(float(tf.reduce_max(tf.abs(same(pts) - online(pts)))))
""",
]


@pytest.mark.parametrize("cell", LOOK_ALIKES, ids=["pretrained", "best", "right-way", "read"])
def test_look_alikes_stay_silent(kernel: KernelSession, cell: str) -> None:
    run(kernel, SETUP)
    assert copy_notes(checked_report(run(kernel, cell))) == []
