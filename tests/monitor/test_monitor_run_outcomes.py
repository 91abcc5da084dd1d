"""A training run whose outcome shows it failed (issue #25: silent bugs of kinds no single
check knows): accuracy at chance, a loss that diverged or never moved, predictions that
ignore the input. Told from what fit's History, a custom loop's sampled loss or predict's
result show, with the cause read from values (the learning rate, the inputs' range, a
Dropout rate, the labels); with no cause, the symptom and what was checked. Each printed
fix is run in the kernel and the run then learns, with no note. Correct runs that learn,
even slowly, on noisy labels, from a bad start or on imbalanced labels, stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SECTIONS = ("stopped-learning", "nan-inf")
SYMPTOMS = ("learned nothing", "diverged", "barely moved", "does not carry over", "collapsed")


def outcome_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") in SECTIONS
        and any(symptom in note["text"] for symptom in SYMPTOMS)
    ]


def told(kernel: KernelSession, code: str) -> list[str]:
    return outcome_notes(checked_report(run(kernel, code)))


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def code_in(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


GRID = """keras.utils.set_random_seed(3)
grid = np.random.default_rng(3).integers(0, 256, size=(800, 10)).astype("float32")
bright = (grid[:, 2] > 127).astype("int64")
"""
CLASSIFIER = """keras.utils.set_random_seed(4)
judge = keras.Sequential([
    keras.Input((10,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(2, activation="softmax"),
])
judge.compile(optimizer=keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])
"""


def test_unscaled_inputs_named_and_scaling_fixes_it(kernel: KernelSession) -> None:
    run(kernel, GRID)
    run(kernel, CLASSIFIER)
    notes = told(kernel, "trace = judge.fit(grid, bright, epochs=5, verbose=0)\n")
    assert len(notes) == 1, notes
    assert notes[0].startswith("`judge.fit`: the model learned nothing: accuracy "), notes[0]
    assert "always predicting the most common label scores 0.5" in notes[0], notes[0]
    assert "The inputs trained on run from 0 to 255 (float32)" in notes[0], notes[0]
    assert "grid / 255" in code_in(notes[0]), notes[0]
    run(kernel, CLASSIFIER)
    notes = told(kernel, "trace = judge.fit(grid / 255, bright, epochs=5, verbose=0)\n")
    assert notes == []
    assert float(shown(kernel, "trace.history['accuracy'][-1]")) > 0.8


def test_constant_predictions_told_where_predict_ran(kernel: KernelSession) -> None:
    run(kernel, GRID)
    run(kernel, CLASSIFIER)
    run(kernel, "judge.fit(grid, bright, epochs=5, verbose=0)\n")
    assert shown(kernel, "len(np.unique(judge.predict(grid, verbose=0)[:, 0]))") == "1"
    notes = told(kernel, "scores = judge.predict(grid, verbose=0)\n")
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`judge.predict`: the model learned nothing: all 800 rows it returned (`scores`) are "
        "the same (the first output is "
    ), notes[0]
    assert "though the rows of `grid` differ" in notes[0], notes[0]
    assert "The inputs trained on run from 0 to 255" in notes[0], notes[0]


FEATURES = """keras.utils.set_random_seed(5)
rng = np.random.default_rng(5)
points = rng.normal(size=(900, 6)).astype("float32")
zone = np.argmax(points[:, :3] @ rng.normal(size=(3, 3)), axis=1)
"""
FUNCTIONAL = """keras.utils.set_random_seed(6)
entry = keras.Input((6,))
hidden = keras.layers.Dense(48, activation="relu")(entry)
hidden = keras.layers.Dense(48, activation="relu")(hidden)
zoner = keras.Model(entry, keras.layers.Dense(3, activation="softmax")(hidden))
zoner.compile(optimizer=OPTIMIZER, loss="sparse_categorical_crossentropy", metrics=["acc"])
"""


def test_learning_rate_far_too_high_named_with_the_optimizer_as_written(
    kernel: KernelSession,
) -> None:
    run(kernel, FEATURES)
    run(kernel, FUNCTIONAL.replace("OPTIMIZER", "keras.optimizers.Adam(learning_rate=4.0)"))
    notes = told(kernel, "seen = zoner.fit(points, zone, epochs=4, verbose=0)\n")
    assert len(notes) == 1, notes
    assert notes[0].startswith("`zoner.fit`: the model learned nothing: acc "), notes[0]
    assert "The learning rate is 4 for Adam, far above the usual 0.001" in notes[0], notes[0]
    fix = [c for c in code_in(notes[0]) if c.startswith("optimizer=")]
    assert fix == ["optimizer=keras.optimizers.Adam(learning_rate=0.001)"], notes[0]
    run(kernel, FUNCTIONAL.replace("OPTIMIZER", fix[0].split("=", 1)[1]))
    assert told(kernel, "seen = zoner.fit(points, zone, epochs=4, verbose=0)\n") == []
    assert float(shown(kernel, "seen.history['acc'][-1]")) > 0.7


SMALL = """keras.utils.set_random_seed(12)
small = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.Dense(3, activation="softmax")])
small.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
"""


def test_labels_apart_from_inputs_told_with_what_was_checked(kernel: KernelSession) -> None:
    run(kernel, FEATURES)
    run(kernel, SMALL)
    run(kernel, "mixed = np.random.default_rng(9).permutation(zone)\n")
    notes = told(kernel, "small.fit(points, mixed, epochs=4, verbose=0)\n")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`small.fit`: the model learned nothing: accuracy 0.33 after 4 ")
    assert "Cause:" not in text, text
    assert "Checked: `mixed` hold 3 classes for 3 output units (softmax)" in text, text
    assert "the learning rate (0.001 for Adam) is in the usual range" in text, text
    assert "Left to check: that each label still belongs to its input" in text, text
    # The printed way to shuffle keeps each label with its input: the run then learns.
    order = next(c for c in code_in(text) if c.startswith("order ="))
    run(kernel, f"x, y = points, zone\n{order}\n")
    run(kernel, SMALL)
    assert told(kernel, "paired = small.fit(x, y, epochs=4, verbose=0)\n") == []
    assert float(shown(kernel, "paired.history['accuracy'][-1]")) > 0.5


def test_dropout_that_drops_nearly_everything(kernel: KernelSession) -> None:
    run(kernel, FEATURES)
    model = """keras.utils.set_random_seed(7)
sieve = keras.Sequential([keras.Input((6,)), keras.layers.Dense(24, activation="tanh"),
                          keras.layers.Dropout(RATE), keras.layers.Dense(3)])
sieve.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
"""
    run(kernel, model.replace("RATE", "0.99"))
    notes = told(kernel, "sieve.fit(points, zone, epochs=3, batch_size=16, verbose=0)\n")
    assert len(notes) == 1, notes
    assert "A `Dropout` layer drops 99% of its inputs at every step" in notes[0], notes[0]
    assert "`rate=0.2`" in notes[0], notes[0]
    run(kernel, model.replace("RATE", "0.2"))
    assert told(kernel, "sieve.fit(points, zone, epochs=3, batch_size=16, verbose=0)\n") == []


LOOP_DATA = """rng = np.random.default_rng(8)
inputs = tf.constant(rng.normal(size=(256, 5)).astype("float32"))
wanted = tf.constant(rng.normal(size=(256, 1)).astype("float32")) + inputs[:, :1] * 3.0
"""
OPTIMIZER_LOOP = """coef = tf.Variable(tf.random.normal((5, 1), seed=1))
shift = tf.Variable(0.0)
for epoch in range(48):
    with tf.GradientTape() as tape:
        gap = tf.reduce_mean(tf.abs(inputs @ coef + shift - wanted) ** 2)
    grads = tape.gradient(gap, [coef, shift])
    stepper.apply_gradients(zip(grads, [coef, shift]))
"""


def test_custom_loop_that_diverges_names_the_optimizer_rate(kernel: KernelSession) -> None:
    run(kernel, LOOP_DATA)
    run(kernel, "stepper = keras.optimizers.SGD(learning_rate=25.0)\n")
    notes = told(kernel, OPTIMIZER_LOOP)
    assert len(notes) == 1, notes
    assert notes[0].startswith("The training loop at line 6: the run diverged: the loss "), notes
    assert "The learning rate is 25 for SGD" in notes[0], notes[0]
    fix = [c for c in code_in(notes[0]) if c.startswith("stepper =")]
    assert fix == ["stepper = keras.optimizers.SGD(learning_rate=0.01)"], notes[0]
    run(kernel, fix[0])
    assert told(kernel, OPTIMIZER_LOOP) == []
    assert float(shown(kernel, "gap.numpy()")) < 5.0


HAND_LOOP = """slope = tf.Variable(tf.zeros((5, 1)))
for turn in range(64):
    with tf.GradientTape() as t:
        miss = tf.reduce_mean(tf.square(tf.matmul(inputs, slope) - wanted))
    d_slope = t.gradient(miss, slope)
    slope.assign_sub(step_size * d_slope)
"""


def test_hand_written_update_with_a_tiny_rate(kernel: KernelSession) -> None:
    run(kernel, LOOP_DATA)
    run(kernel, "step_size = 3e-7\n")
    notes = told(kernel, HAND_LOOP)
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "The training loop at line 5: training barely moved the loss: the loss went from "
    ), notes[0]
    assert "`step_size = 3e-07` times the gradient" in notes[0], notes[0]
    fix = [c for c in code_in(notes[0]) if c.startswith("step_size =")][-1]
    run(kernel, fix)
    assert told(kernel, HAND_LOOP) == []
    assert float(shown(kernel, "miss.numpy()")) < 2.0


def test_runs_that_learn_stay_silent(kernel: KernelSession) -> None:
    run(kernel, FEATURES)
    # Slow learning on noisy labels, a few epochs of plain SGD.
    noisy = """keras.utils.set_random_seed(10)
blurred = np.where(rng.random(900) < 0.45, rng.integers(0, 3, 900), zone)
lazy = keras.Sequential([keras.Input((6,)), keras.layers.Dense(6, activation="tanh"),
                         keras.layers.Dense(3, activation="softmax")])
lazy.compile(optimizer=keras.optimizers.SGD(0.01), loss="sparse_categorical_crossentropy",
             metrics=["accuracy"])
"""
    run(kernel, noisy)
    assert told(kernel, "lazy.fit(points, blurred, epochs=3, verbose=0)\n") == []
    # Imbalanced labels, the model starting below the majority rate and climbing.
    rare = """keras.utils.set_random_seed(11)
flag = (points[:, 0] > 1.4).astype("float32")
spotter = keras.Sequential([keras.Input((6,)), keras.layers.Dense(12, activation="relu"),
                            keras.layers.Dense(1, activation="sigmoid")])
spotter.compile(optimizer="adam", loss="binary_crossentropy", metrics=["binary_accuracy"])
"""
    run(kernel, rare)
    assert told(kernel, "spotter.fit(points, flag, epochs=3, verbose=0)\n") == []
    # Training further a model that has already learned: its loss may stay level.
    run(kernel, FUNCTIONAL.replace("OPTIMIZER", '"adam"'))
    assert told(kernel, "zoner.fit(points, zone, epochs=15, verbose=0)\n") == []
    assert told(kernel, "zoner.fit(points, zone, epochs=3, verbose=0)\n") == []
    # Fine-tuning: compiled again (a new optimizer, its steps back at 0) with a small rate.
    tune = (
        "zoner.compile(optimizer=keras.optimizers.Adam(1e-5),"
        ' loss="sparse_categorical_crossentropy")\n'
    )
    assert told(kernel, tune + "zoner.fit(points, zone, epochs=3, verbose=0)\n") == []
    # Predictions: every row the same because every input row is the same.
    assert told(kernel, "flat_rows = zoner.predict(np.ones((50, 6), 'float32'), verbose=0)\n") == []
    assert told(kernel, "zones = zoner.predict(points, verbose=0)\n") == []
    # A custom loop that learns.
    run(kernel, LOOP_DATA)
    run(kernel, "stepper = keras.optimizers.Adam(learning_rate=0.05)\n")
    assert told(kernel, OPTIMIZER_LOOP) == []
    run(kernel, "step_size = 0.05\n")
    assert told(kernel, HAND_LOOP) == []


SUBCLASSED = """keras.utils.set_random_seed(13)
class Ranker(keras.Model):
    def __init__(self):
        super().__init__()
        self.inner = keras.layers.Dense(40, activation="relu")
        self.head = keras.layers.Dense(3)

    def call(self, batch):
        return self.head(self.inner(batch))

ranker = Ranker()
ranker.compile(optimizer=keras.optimizers.RMSprop(RATE),
               loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
               metrics=["accuracy"])
"""


def test_subclassed_model_on_unscaled_inputs_diverges(kernel: KernelSession) -> None:
    run(kernel, FEATURES)
    run(kernel, "wide = points * 1000.0\n")
    model = SUBCLASSED.replace("keras.optimizers.RMSprop(RATE)", "keras.optimizers.SGD(0.05)")
    run(kernel, model)
    notes = told(kernel, "ranker.fit(wide, zone, epochs=4, verbose=0)\n")
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`ranker.fit`: the run diverged: the loss became nan at epoch 1. Cause: The inputs "
        "trained on run from -3.49e+03 to 3.3e+03 (float32), and no layer of the model "
        "normalises them: the first layer's sums are then in the thousands"
    ), notes[0]
    fix = next(c for c in code_in(notes[0]) if c.startswith("wide /"))
    run(kernel, model)
    assert told(kernel, f"fitted = ranker.fit({fix}, zone, epochs=4, verbose=0)\n") == []
    assert float(shown(kernel, "fitted.history['accuracy'][-1]")) > 0.7


def test_validation_at_chance_while_training_learns(kernel: KernelSession) -> None:
    run(kernel, FEATURES)
    run(kernel, SMALL.replace("Dense(8,", "Dense(32,"))
    split = "seen_x, held_x, seen_y, held_y = points[:600], points[600:], zone[:600], zone[600:]\n"
    run(kernel, split)
    # The held-out labels numbered another way (a class mapping of their own).
    run(kernel, "held_codes = (held_y + 1) % 3\n")
    fit = (
        "checked = small.fit(seen_x, seen_y, epochs=12, validation_data=(held_x, HELD),"
        " verbose=0)\n"
    )
    notes = told(kernel, fit.replace("HELD", "held_codes"))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`small.fit`: what the model learned does not carry over to the validation data: accuracy "
    ), notes[0]
    assert (
        "Left to check: the validation data must be prepared like the training data" in (notes[0])
    ), notes[0]
    run(kernel, SMALL.replace("Dense(8,", "Dense(32,"))
    assert told(kernel, fit.replace("HELD", "held_y")) == []


def test_regression_targets_in_the_hundreds_barely_move(kernel: KernelSession) -> None:
    run(kernel, FEATURES)
    run(kernel, "rent = (300 + 40 * points[:, 1] + 10 * points[:, 4]).astype('float32')\n")
    model = """keras.utils.set_random_seed(14)
pricer = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"),
                           keras.layers.Dense(1)])
pricer.compile(optimizer="adam", loss="mae")
"""
    run(kernel, model)
    notes = told(kernel, "pricer.fit(points, rent, epochs=3, verbose=0)\n")
    assert len(notes) == 1, notes
    assert notes[0].startswith("`pricer.fit`: training barely moved the loss: the loss went "), (
        notes[0]
    )
    assert "Cause: `rent` run from " in notes[0], notes[0]
    fix = next(c for c in code_in(notes[0]) if c.startswith("rent /"))
    run(kernel, model)
    assert told(kernel, f"moved = pricer.fit(points, {fix}, epochs=3, verbose=0)\n") == []
    assert shown(kernel, "moved.history['loss'][-1] < 0.9 * moved.history['loss'][0]") == "True"


GRAPH_LOOP = """keras.utils.set_random_seed(15)
fitter = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="tanh"),
                           keras.layers.Dense(1)])
mover = keras.optimizers.Adam(SCHEDULE)

@tf.function
def one_step():
    with tf.GradientTape() as tape:
        err = tf.reduce_mean(tf.square(fitter(inputs) - wanted))
    grads = tape.gradient(err, fitter.trainable_variables)
    mover.apply_gradients(zip(grads, fitter.trainable_variables))
    return err

for i in range(300):
    err = one_step()
"""


def test_schedule_that_collapses_in_a_traced_loop(kernel: KernelSession) -> None:
    run(kernel, LOOP_DATA)
    written = "keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=3, decay_rate=0.5)"
    notes = told(kernel, GRAPH_LOOP.replace("SCHEDULE", written))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "The training loop's learning rate collapsed long before the end: `mover` took 300 "
        f"steps, and its rate follows `{written}`, which counts optimizer steps: it was 0.05 "
        "at step 0, "
    ), notes[0]
    fix = code_in(notes[0])[-1]
    assert fix == written.replace("decay_steps=3", "decay_steps=300"), notes[0]
    assert told(kernel, GRAPH_LOOP.replace("SCHEDULE", fix)) == []
    assert float(shown(kernel, "err.numpy()")) < 3.0
    # A schedule that decays over the run, in an eager loop: silent.
    eager = GRAPH_LOOP.replace("@tf.function\n", "").replace("range(300)", "range(120)")
    slow = "keras.optimizers.schedules.InverseTimeDecay(0.05, decay_steps=100, decay_rate=1.0)"
    assert told(kernel, eager.replace("SCHEDULE", slow)) == []
    # The same in an eager loop, decaying at every step: told.
    fast = "keras.optimizers.schedules.InverseTimeDecay(0.05, decay_steps=1, decay_rate=50.0)"
    notes = told(kernel, eager.replace("SCHEDULE", fast))
    assert len(notes) == 1 and "`mover` took 120 steps" in notes[0], notes


RECORDED_LOOP = """keras.utils.set_random_seed(16)
curve_net = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="tanh"),
                              keras.layers.Dense(1)])
pusher = keras.optimizers.SGD(learning_rate=RATE)

@tf.function
def push():
    with tf.GradientTape() as tape:
        residual = curve_net(inputs) - wanted
        objective = LOSS
    grads = tape.gradient(objective, curve_net.trainable_variables)
    pusher.apply_gradients(zip(grads, curve_net.trainable_variables))
    return objective

loss_curve = []
for k in range(80):
    loss_curve.append(float(push()))
"""


def test_losses_recorded_by_a_traced_loop(kernel: KernelSession) -> None:
    run(kernel, LOOP_DATA)
    squared = "tf.reduce_mean(tf.square(residual))"
    # A residual averaged without squaring: no lower bound, the loss runs far below zero.
    plain = RECORDED_LOOP.replace("LOSS", "tf.reduce_mean(residual)").replace("RATE", "0.05")
    notes = told(kernel, plain)
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "The losses the loop recorded in `loss_curve` (first and last tenth averaged): the "
        "run diverged: the loss went from "
    ), notes[0]
    assert "a mean of residuals not squared" in notes[0], notes[0]
    assert told(kernel, RECORDED_LOOP.replace("LOSS", squared).replace("RATE", "0.05")) == []
    # The squared loss with a rate far too high: told with the optimizer as written.
    notes = told(kernel, RECORDED_LOOP.replace("LOSS", squared).replace("RATE", "30.0"))
    assert len(notes) == 1 and "The learning rate is 30 for SGD" in notes[0], notes
    fix = next(c for c in code_in(notes[0]) if c.startswith("pusher ="))
    assert fix == "pusher = keras.optimizers.SGD(learning_rate=0.01)", notes[0]
    fixed = RECORDED_LOOP.replace("LOSS", squared).replace(
        "pusher = keras.optimizers.SGD(learning_rate=RATE)", fix
    )
    assert told(kernel, fixed) == []
    assert shown(kernel, "loss_curve[-1] < loss_curve[0]") == "True"
    # A validation loss recorded next to it may rightly grow (overfitting): silent.
    overfit = (
        fixed.replace("loss_curve = []", "loss_curve, val_loss_curve = [], []")
        + "    val_loss_curve.append(1.0 + k)\n"
    )
    assert told(kernel, overfit) == []


PER_PROBLEM = """start_coefs = [tf.Variable(tf.zeros((3, 1))), tf.Variable(tf.zeros((1,)))]

def refine(start, feats, target, rounds=1, rate=0.05):
    current = list(start)
    for _ in range(rounds):
        with tf.GradientTape() as t:
            t.watch(current)
            err = tf.reduce_mean(tf.square(feats @ current[0] + current[1] - target))
        parts = t.gradient(err, current)
        current = [c - rate * p for c, p in zip(current, parts)]
    return current

gen = np.random.default_rng(5)
scores = []
for size in np.linspace(1.0, 6.0, 40):
    feats = gen.normal(size=(30, 3)).astype("float32")
    target = (size * feats.sum(axis=1, keepdims=True)).astype("float32")
    tuned = refine(start_coefs, feats, target)
    scores.append(float(tf.reduce_mean(tf.square(feats @ tuned[0] + tuned[1] - target))))
"""


def test_one_start_refined_on_many_problems_is_not_a_diverging_run(
    kernel: KernelSession,
) -> None:
    # The gradient site runs 40 times on problems of growing scale, from weights that never
    # change: its losses grow because the problems do. No run diverged.
    assert told(kernel, PER_PROBLEM) == []
    assert shown(kernel, "scores[-1] > 3 * scores[0]") == "True"
    assert shown(kernel, "float(tf.reduce_sum(tf.abs(start_coefs[0])))") == "0.0"
