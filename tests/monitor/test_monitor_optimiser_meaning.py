"""Silent optimiser and schedule mistakes (issue #25), each told in the cell where it shows,
naming the learner's identifiers, with the printed fix run here and shown to work, and a
correct look-alike that stays silent:

- a ``LearningRateScheduler`` schedule written in optimizer steps
  (``training/schedule_units.py``): called with epoch indices 0..4, its ramp of 30
  iterations never ends; the printed wrapper gives it the step each epoch starts at and the
  rates reach the peak, then fall;
- a gradient accumulator created with ``trainable=False`` on purpose stays silent
  (``variables/namespace_diff.py`` tells of an untrainable variable only when the cell gives
  it to a tape as a source).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, note_texts, run, run_quiet, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def notes_in(report: dict[str, Any], section: str) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == section
    ]


UNITS_SETUP = """import numpy as np
gen = np.random.default_rng(11)
feats = gen.normal(size=(96, 3)).astype("float32")
target = (feats @ np.array([[2.0], [-1.0], [0.5]], "float32")).astype("float32")
RAMP_ITERS, PEAK_RATE = 30, 0.08

def ramp_then_hold(iteration, lr=None):
    if iteration < RAMP_ITERS:
        return PEAK_RATE * (iteration + 1) / RAMP_ITERS
    return PEAK_RATE * 0.5

keras.utils.set_random_seed(4)
lin = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
lin.compile(optimizer=keras.optimizers.SGD(), loss="mae")
"""

UNITS_CELL = """sched_cb = keras.callbacks.LearningRateScheduler(ramp_then_hold)
out = lin.fit(feats, target, batch_size=12, epochs=5, verbose=0, callbacks=[sched_cb])
used = [round(float(r), 4) for r in out.history["learning_rate"]]
"""


def test_schedule_written_in_steps(kernel: KernelSession) -> None:
    run(kernel, UNITS_SETUP)
    notes = notes_in(checked_report(run(kernel, UNITS_CELL)), "callback-mode")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`ramp_then_hold`, given to `LearningRateScheduler` (line 1 of this cell), is written "
        "in optimizer steps: it compares `iteration` with `RAMP_ITERS` (30)."
    ), text
    assert "here 0 to 4 (fit ran 5 epochs of 8 steps)" in text
    assert "`iteration < RAMP_ITERS` is True at every call" in text
    # Only the ramp's first five values: the hold never ran.
    assert value_of(kernel, "used") == [0.0027, 0.0053, 0.008, 0.0107, 0.0133]
    wrapped = re.search(r"`(LearningRateScheduler\(lambda[^`]+)`", text)
    assert wrapped is not None, text
    assert wrapped.group(1) == (
        "LearningRateScheduler(lambda epoch, lr: ramp_then_hold(epoch * 8, lr))"
    )
    run(kernel, UNITS_SETUP)
    fixed = UNITS_CELL.replace(
        "keras.callbacks.LearningRateScheduler(ramp_then_hold)",
        "keras.callbacks." + wrapped.group(1),
    )
    assert notes_in(checked_report(run(kernel, fixed)), "callback-mode") == []
    # The ramp runs over its 30 steps, then the rate holds at half the peak.
    assert value_of(kernel, "used") == [0.0027, 0.024, 0.0453, 0.0667, 0.04]


def test_schedules_in_epochs_stay_silent(kernel: KernelSession) -> None:
    run(kernel, UNITS_SETUP)
    # Written in epochs: the threshold is an epoch count.
    cell = """def by_epoch(epoch, lr):
    return 0.05 if epoch < 2 else 0.01

lin.fit(feats, target, epochs=4, verbose=0,
        callbacks=[keras.callbacks.LearningRateScheduler(by_epoch)])
"""
    assert notes_in(checked_report(run(kernel, cell)), "callback-mode") == []
    # Named in steps, but its branch changes within the epochs fit ran.
    cell = """def stepped(step, lr):
    return 0.05 if step < 2 else 0.01

lin.fit(feats, target, epochs=4, verbose=0,
        callbacks=[keras.callbacks.LearningRateScheduler(stepped)])
"""
    assert notes_in(checked_report(run(kernel, cell)), "callback-mode") == []


def test_accumulator_slots_made_untrainable_stay_silent(kernel: KernelSession) -> None:
    cell = """weights = [tf.Variable(tf.ones((3, 1))), tf.Variable(tf.zeros((1,)))]
batches = np.split(np.arange(24, dtype="float32").reshape(8, 3), 2)
slots = [tf.Variable(tf.zeros_like(w), trainable=False) for w in weights]
for xb in batches:
    with tf.GradientTape() as tape:
        cost = tf.reduce_mean(tf.square(xb @ weights[0] + weights[1]))
    for slot, g in zip(slots, tape.gradient(cost, weights)):
        slot.assign_add(g / len(batches))
"""
    report = run_quiet(kernel, cell)
    assert not [n for n in note_texts(report) if "trainable=False" in n], note_texts(report)


PENALTY_SETUP = """import numpy as np
gen2 = np.random.default_rng(5)
inputs = gen2.normal(size=(64, 4)).astype("float32")
outputs = inputs @ np.array([[1.0], [0.0], [-2.0], [0.0]], "float32")
coef, shift = tf.Variable(tf.ones((4, 1))), tf.Variable(0.0)
free_coef, free_shift = tf.Variable(tf.ones((4, 1))), tf.Variable(0.0)
free_opt = keras.optimizers.SGD(0.05)
free_vars = [free_coef, free_shift]
for it in range(60):
    with tf.GradientTape() as gt:
        free_err = tf.reduce_mean(tf.square(inputs @ free_coef + free_shift - outputs))
    free_opt.apply_gradients(zip(gt.gradient(free_err, free_vars), free_vars))
free_size = round(float(tf.reduce_sum(tf.abs(free_coef))), 4)
"""

PENALTY_CELL = """alpha = 0.3
step_opt = keras.optimizers.SGD(0.05)
for it in range(60):
    l1_term = alpha * tf.reduce_sum(tf.abs(coef))
    with tf.GradientTape() as gt:
        fit_err = tf.reduce_mean(tf.square(inputs @ coef + shift - outputs))
        objective = fit_err + l1_term
    step_opt.apply_gradients(zip(gt.gradient(objective, [coef, shift]), [coef, shift]))
size = round(float(tf.reduce_sum(tf.abs(coef))), 4)
"""


def test_penalty_computed_before_the_tape(kernel: KernelSession) -> None:
    run(kernel, PENALTY_SETUP)
    notes = notes_in(checked_report(run(kernel, PENALTY_CELL)), "gradient-tape")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`l1_term = alpha * tf.reduce_sum(tf.abs(coef))` (line 4 of this cell) computes "
        "`l1_term` from `coef` before `with tf.GradientTape() as gt:` (line 5) opens"
    ), text
    assert "in `objective` the term `l1_term` is a constant" in text
    assert "`gt.gradient(objective, [coef, shift])` gets nothing from it" in text
    # The penalty did nothing: the weights are those of the run without it.
    assert value_of(kernel, "size") == value_of(kernel, "free_size")
    run(kernel, "coef.assign(tf.ones((4, 1))); shift.assign(0.0)")
    line = "    l1_term = alpha * tf.reduce_sum(tf.abs(coef))\n"
    fixed = PENALTY_CELL.replace(line, "").replace(
        "    with tf.GradientTape() as gt:\n", "    with tf.GradientTape() as gt:\n    " + line
    )
    assert notes_in(checked_report(run(kernel, fixed)), "gradient-tape") == []
    assert value_of(kernel, "size") < value_of(kernel, "free_size") - 0.2


def test_penalty_before_the_tape_in_a_step_function(kernel: KernelSession) -> None:
    cell = """def train_round(net, xb, yb, opt, strength):
    decay = strength * tf.add_n([tf.nn.l2_loss(w) for w in net.trainable_weights])
    with tf.GradientTape() as rec:
        data_loss = tf.reduce_mean(keras.losses.mean_squared_error(yb, net(xb)))
        total = data_loss + decay
    grads = rec.gradient(total, net.trainable_weights)
    opt.apply_gradients(zip(grads, net.trainable_weights))
    return total
"""
    notes = notes_in(checked_report(run(kernel, cell)), "gradient-tape")
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`decay = strength * tf.add_n([tf.nn.l2_loss(w) for w in net.trainable_weights])` "
        "(line 2 of this cell, in `train_round`) computes `decay` from `net`'s weights "
        "before `with tf.GradientTape() as rec:` (line 3) opens"
    ), notes[0]


def test_values_computed_before_the_tape_on_purpose_stay_silent(kernel: KernelSession) -> None:
    run(kernel, PENALTY_SETUP)
    # A copy of the weights kept as an anchor: a constant on purpose.
    cell = """start = tf.identity(coef)
step_opt = keras.optimizers.SGD(0.05)
for it in range(5):
    with tf.GradientTape() as gt:
        fit_err = tf.reduce_mean(tf.square(inputs @ coef + shift - outputs))
        objective = fit_err + 0.1 * tf.reduce_sum(tf.square(coef - start))
    step_opt.apply_gradients(zip(gt.gradient(objective, [coef, shift]), [coef, shift]))
"""
    assert notes_in(checked_report(run(kernel, cell)), "gradient-tape") == []
    # A target computed from the model's output before the tape: meant as a constant.
    cell = """qnet = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
goal = 1.0 + 0.9 * tf.reduce_max(qnet(inputs[1:]), axis=1)
with tf.GradientTape() as gt:
    chosen = tf.reduce_max(qnet(inputs[:-1]), axis=1)
    td_loss = tf.reduce_mean(tf.square(goal - chosen))
qgrads = gt.gradient(td_loss, qnet.trainable_variables)
"""
    assert notes_in(checked_report(run(kernel, cell)), "gradient-tape") == []


def test_loss_made_only_before_the_tape_is_left_to_the_none_gradient(
    kernel: KernelSession,
) -> None:
    # No term of the loss is recorded: tape.gradient returns None, which its own note tells.
    cell = """scale = tf.Variable(2.0)
offset = tf.Variable(1.0)
guess = scale * 3.0 + offset
with tf.GradientTape() as gt:
    miss = (guess - 1.0) ** 2
pair = gt.gradient(miss, [scale, offset])
"""
    texts = note_texts(checked_report(run(kernel, cell)))
    assert not [t for t in texts if "is a constant and" in t], texts
    assert [t for t in texts if "returned None" in t], texts


ACCUMULATION_SETUP = """gen3 = np.random.default_rng(8)
pts = gen3.normal(size=(120, 2)).astype("float32")
vals = (pts @ np.array([[3.0], [-1.0]], "float32") + 0.5).astype("float32")
keras.utils.set_random_seed(9)
tiny = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
sq = keras.losses.MeanSquaredError()
with tf.GradientTape() as whole:
    whole_loss = sq(vals, tiny(pts))
whole_grads = whole.gradient(whole_loss, tiny.trainable_variables)
stepper = keras.optimizers.SGD(0.01)
"""

ACCUMULATION_CELL = """chunks = 3
summed = [tf.zeros_like(v) for v in tiny.trainable_variables]
for c in range(chunks):
    part = slice(c * 40, (c + 1) * 40)
    with tf.GradientTape() as rec:
        part_loss = sq(vals[part], tiny(pts[part]))
    part_grads = rec.gradient(part_loss, tiny.trainable_variables)
    summed = [s + g for s, g in zip(summed, part_grads)]
stepper.apply_gradients(zip(summed, tiny.trainable_variables))
ratio = round(float(summed[1][0] / whole_grads[1][0]), 3)
"""


def test_accumulated_gradients_of_mean_losses(kernel: KernelSession) -> None:
    run(kernel, ACCUMULATION_SETUP)
    notes = notes_in(checked_report(run(kernel, ACCUMULATION_CELL)), "training-loop")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`summed` adds up the gradients of `part_loss` over the micro-batches of the loop at "
        "line 3 (`summed = [s + g for s, g in zip(summed, part_grads)]`, line 8 of this "
        "cell), but `part_loss` is already a mean over its micro-batch (`sq` is a Keras loss "
        "that averages over its batch)"
    ), text
    assert "the sum is 3 times as large. Applied (line 9)" in text
    assert value_of(kernel, "ratio") == 3.0
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "summed = [s + g / chunks for s, g in zip(summed, part_grads)]"
    run(kernel, ACCUMULATION_SETUP)
    fixed = ACCUMULATION_CELL.replace(
        "    summed = [s + g for s, g in zip(summed, part_grads)]", "    " + fix
    )
    assert notes_in(checked_report(run(kernel, fixed)), "training-loop") == []
    # The average of the micro-batch gradients is the whole batch's gradient.
    assert value_of(kernel, "ratio") == 1.0


def test_accumulated_gradients_through_a_helper_loss(kernel: KernelSession) -> None:
    run(kernel, ACCUMULATION_SETUP)
    run(kernel, "def sq_err(m, a, b):\n    return tf.reduce_mean(tf.square(m(a) - b))\n")
    cell = """tv = tiny.trainable_variables
slots = [tf.Variable(tf.zeros_like(v), trainable=False) for v in tv]
for a_part, b_part in zip(np.array_split(pts, 4), np.array_split(vals, 4)):
    with tf.GradientTape() as rec:
        chunk_loss = sq_err(tiny, a_part, b_part)
    for slot, g in zip(slots, rec.gradient(chunk_loss, tiny.trainable_variables)):
        slot.assign_add(g)
stepper.apply_gradients(zip([s.read_value() for s in slots], tiny.trainable_variables))
"""
    notes = notes_in(checked_report(run(kernel, cell)), "training-loop")
    assert len(notes) == 1, notes
    assert (
        "`chunk_loss` is already a mean over its micro-batch (`sq_err` averages it)" in (notes[0])
    )
    assert notes[0].endswith("Average them as they are added: `slot.assign_add(g / 4)`."), notes[0]


def test_accumulations_that_average_or_sum_stay_silent(kernel: KernelSession) -> None:
    run(kernel, ACCUMULATION_SETUP)
    divided = ACCUMULATION_CELL.replace("s + g for", "s + g / chunks for")
    assert notes_in(checked_report(run(kernel, divided)), "training-loop") == []
    # Each micro-batch loss a sum over the whole batch's examples: the sum is right.
    summed_losses = ACCUMULATION_CELL.replace(
        "part_loss = sq(vals[part], tiny(pts[part]))",
        "part_loss = tf.reduce_sum(tf.square(tiny(pts[part]) - vals[part]))",
    )
    assert notes_in(checked_report(run(kernel, summed_losses)), "training-loop") == []


LOG_JACOBIAN_CELL = """class HalfScale(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[0.7]])

    def __call__(self, v):
        h = tf.tanh(v[:, :1] @ self.w)
        out = tf.concat([v[:, :1], v[:, 1:] * tf.exp(h)], axis=1)
        log_jac = tf.reduce_sum(h)
        return out, log_jac
"""

LOG_JACOBIAN_CHECK = """layer = HalfScale()
batch = tf.constant([[0.5, 1.0], [-1.0, 2.0], [2.0, 0.0]])
with tf.GradientTape() as jt:
    jt.watch(batch)
    moved, claimed = layer(batch)
_, exact = tf.linalg.slogdet(jt.batch_jacobian(moved, batch))
claimed_shape = list(claimed.shape)
agrees = bool(tf.reduce_all(tf.abs(claimed - exact) < 1e-5))
"""


def test_log_determinant_summed_over_the_batch(kernel: KernelSession) -> None:
    notes = notes_in(checked_report(run(kernel, LOG_JACOBIAN_CELL)), "reducing-tensors")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`log_jac = tf.reduce_sum(h)` (line 9 of this cell, in `HalfScale.__call__`) sums "
        "`h` over every axis, the batch's included. `h` is computed from the input "
        "`v`"
    ), text
    run(kernel, LOG_JACOBIAN_CHECK)
    assert value_of(kernel, "claimed_shape") == []
    assert value_of(kernel, "agrees") is False
    fix = re.findall(r"`([^`]+)`", text.split("Sum over the features only:")[1])[0]
    assert fix == "log_jac = tf.reduce_sum(h, axis=-1)"
    fixed = LOG_JACOBIAN_CELL.replace("log_jac = tf.reduce_sum(h)", fix)
    assert notes_in(checked_report(run(kernel, fixed)), "reducing-tensors") == []
    run(kernel, LOG_JACOBIAN_CHECK)
    # One log |det| per example, each equal to the one autodiff finds.
    assert value_of(kernel, "claimed_shape") == [3]
    assert value_of(kernel, "agrees") is True


def test_log_determinants_of_the_weights_stay_silent(kernel: KernelSession) -> None:
    # An ActNorm-style scale: its log-det is the same for every example, a sum of weights.
    cell = """class PerFeatureScale(keras.layers.Layer):
    def build(self, input_shape):
        self.log_scale = self.add_weight(shape=(input_shape[-1],), initializer="zeros")

    def forward(self, x):
        log_det = tf.reduce_sum(self.log_scale)
        return x * tf.exp(self.log_scale), log_det
"""
    assert notes_in(checked_report(run(kernel, cell)), "reducing-tensors") == []


def test_unwatched_input_of_a_batch_jacobian(kernel: KernelSession) -> None:
    cell = """probe = tf.constant([[1.0, 2.0], [0.5, -1.0]])
with tf.GradientTape() as jt:
    image = tf.sin(probe) * 3.0
jac = jt.batch_jacobian(image, probe)
jac_total = float(tf.reduce_sum(tf.abs(jac)))
"""
    texts = [t for t in note_texts(checked_report(run(kernel, cell))) if "probe" in t]
    assert texts == [
        "tape.batch_jacobian at line 4 returned zeros (no gradient path) for `probe`: it is a "
        "tensor, not a variable, and a GradientTape only watches trainable variables. Call "
        "tape.watch(probe) inside the `with` block (or use a tf.Variable)."
    ], texts
    assert value_of(kernel, "jac_total") == 0.0
    fixed = cell.replace(
        "with tf.GradientTape() as jt:\n", "with tf.GradientTape() as jt:\n    jt.watch(probe)\n"
    )
    assert not [t for t in note_texts(checked_report(run(kernel, fixed))) if "probe" in t]
    assert value_of(kernel, "jac_total") > 1.0


def test_penalty_on_a_models_attribute_in_a_train_step(kernel: KernelSession) -> None:
    cell = """class Regularised(keras.Model):
    def __init__(self, body, teacher, k):
        super().__init__()
        self.body, self.teacher, self.k = body, teacher, k

    def train_step(self, data):
        x, y = data
        guide = self.teacher(x, training=False)
        shrink = self.k * tf.add_n([tf.reduce_sum(w ** 2) for w in self.body.trainable_weights])
        with tf.GradientTape() as tape:
            out = self.body(x, training=True)
            fit_term = tf.reduce_mean(tf.square(out - y))
            loss = fit_term + tf.reduce_mean(tf.square(out - guide)) + shrink
        grads = tape.gradient(loss, self.body.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.body.trainable_variables))
        return {"loss": loss}
"""
    notes = notes_in(checked_report(run(kernel, cell)), "gradient-tape")
    # The teacher's output, computed before the tape, is a constant on purpose: only the
    # penalty on the weights is told.
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`shrink = self.k * tf.add_n([tf.reduce_sum(w ** 2) for w in "
        "self.body.trainable_weights])` (line 9 of this cell, in `train_step`) computes "
        "`shrink` from `self.body`'s weights before `with tf.GradientTape() as tape:` "
        "(line 10) opens"
    ), notes[0]
