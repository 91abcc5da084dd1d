"""Silent loss, model and training bugs (issue #25), each told in the cell where it shows,
naming the learner's identifiers, with a fix run here that makes the result right, and a
correct look-alike that stays silent:

- a ``@tf.custom_gradient`` whose gradient function ignores its upstream gradient
  (``training/custom_gradients.py``): the gradient of a scaled mean comes out 10 * 2 = 20
  times too small; the fix multiplies by ``dy``;
- a sampling temperature dividing probabilities (``symptoms/temperature_sampling.py``):
  every temperature draws alike; the fix divides the scores;
- a ``LearningRateScheduler`` schedule written ``(rate, epoch)``
  (``training/schedule_arguments.py``): fit's rates are 0, 0.5, 1.0; the fix decays;
- a ``ModelCheckpoint`` without ``save_best_only`` loaded as the best model
  (``training/checkpoint_selection.py``): the file holds the last, worse epoch;
- a checkpoint made on the spot and restored under another name
  (``training/checkpoint_restores.py``): nothing restored, the name it was saved under;
- probabilities given where raw scores are expected (``symptoms/squashed_logits.py``):
  ``tf.nn.sigmoid_cross_entropy_with_logits`` on a sigmoid model's output, a
  ``from_logits=True`` loss on its squeezed output, ``BinaryAccuracy(threshold=0.0)`` on
  it; the fixes make the loss the one of the same model without the sigmoid;
- a metric updated and read for each candidate of a loop, never reset
  (``training/shared_metrics.py``): the second figure averages both;
- a cut at 0.5 of a model's distances, never below 0, stays silent
  (``symptoms/threshold_scores.py``: distances are not raw scores of a sigmoid).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def notes_in(report: dict[str, Any], section: str) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == section
    ]


GRADIENT_CELL = """@tf.custom_gradient
def clipped_sqrt(v):
    root = tf.sqrt(tf.maximum(v, 1e-4))
    def backward(dy):
        return 0.5 / root
    return root, backward

pts = tf.constant([4.0, 16.0])
with tf.GradientTape() as g:
    g.watch(pts)
    total = tf.reduce_mean(10.0 * clipped_sqrt(pts))
slope = [round(s, 4) for s in g.gradient(total, pts).numpy().tolist()]
"""


def test_custom_gradient_ignoring_upstream(kernel: KernelSession) -> None:
    notes = notes_in(checked_report(run(kernel, GRADIENT_CELL)), "gradient-tape")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`backward`, the gradient function `clipped_sqrt` returns under "
        "`@tf.custom_gradient` (line 4 of this cell), never uses `dy`."
    ), text
    fix = "return dy * (0.5 / root)"
    assert f"Multiply by it: `{fix}` in place of `return 0.5 / root`." in text
    assert value_of(kernel, "slope") == [0.25, 0.125]  # the local derivative alone
    fixed = GRADIENT_CELL.replace("return 0.5 / root", fix)
    assert notes_in(checked_report(run(kernel, fixed)), "gradient-tape") == []
    # d/dv mean(10 * sqrt(v)) = 10 * 0.5 / sqrt(v) / 2
    assert value_of(kernel, "slope") == [1.25, 0.625]


TEMPERATURE_SETUP = """scores = tf.constant([[2.0, 1.0, 0.5, -1.0, 0.0]])
picker = np.random.default_rng(7)
"""

TEMPERATURE_CELL = """def pick(scores, temp, n=4000):
    p = tf.nn.softmax(scores).numpy()[0]
    p = p / temp
    p = p / p.sum()
    return picker.choice(len(p), size=n, p=p)

top_share = {t: round(float(np.mean(pick(scores, t) == 0)), 1) for t in (0.25, 4.0)}
"""


def test_temperature_dividing_probabilities(kernel: KernelSession) -> None:
    run(kernel, TEMPERATURE_SETUP)
    notes = notes_in(checked_report(run(kernel, TEMPERATURE_CELL)), "from-logits")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`p / temp` (line 3 of this cell) divides probabilities, the output of "
        "`tf.nn.softmax(scores)`, by `temp`."
    ), text
    line = "p = tf.nn.softmax(scores / temp).numpy()[0]"
    assert f"(the line `{line}`), without the division `p / temp`." in text
    share = value_of(kernel, "top_share")
    assert share["0.25"] == share["4.0"], share  # the same distribution at every temperature
    fixed = TEMPERATURE_CELL.replace("    p = p / temp\n", "").replace(
        "p = tf.nn.softmax(scores).numpy()[0]", line
    )
    assert notes_in(checked_report(run(kernel, fixed)), "from-logits") == []
    share = value_of(kernel, "top_share")
    assert share["0.25"] >= 0.9 and share["4.0"] <= 0.4, share


def test_temperature_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, TEMPERATURE_SETUP)
    sharpened = """def sharpen(scores, temp):
    q = tf.nn.softmax(scores).numpy()[0]
    q = q ** (1.0 / temp)
    q = q / q.sum()
    return picker.choice(len(q), size=10, p=q)

drawn = sharpen(scores, 0.5)
shares = tf.nn.softmax(scores) / 2.0
"""
    assert notes_in(checked_report(run(kernel, sharpened)), "from-logits") == []


SCHEDULE_SETUP = """xs = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
ys = xs @ np.array([1.0, -2.0, 0.5], "float32")
net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
net.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
"""

SCHEDULE_CELL = """def decay(rate, epoch):
    return rate * 0.5

net.fit(xs, ys, epochs=3, verbose=0,
        callbacks=[keras.callbacks.LearningRateScheduler(decay)])
used = [round(r, 6) for r in net.history.history["learning_rate"]]
"""


def test_schedule_parameters_swapped(kernel: KernelSession) -> None:
    run(kernel, SCHEDULE_SETUP)
    notes = notes_in(checked_report(run(kernel, SCHEDULE_CELL)), "callback-mode")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`decay`, given to `LearningRateScheduler` (line 5 of this cell), takes "
        "`(rate, epoch)`, but Keras calls a schedule as `schedule(epoch, lr)`"
    ), text
    assert "The rates fit used were 0, 0.5, 1 (`history.history['learning_rate']`)" in text
    assert "Put the epoch first: `def decay(epoch, rate):`." in text
    assert value_of(kernel, "used") == [0.0, 0.5, 1.0]
    run(kernel, SCHEDULE_SETUP)
    fixed = SCHEDULE_CELL.replace("def decay(rate, epoch):", "def decay(epoch, rate):")
    assert notes_in(checked_report(run(kernel, fixed)), "callback-mode") == []
    assert value_of(kernel, "used") == [0.005, 0.0025, 0.00125]


def test_schedule_in_keras_order_stays_silent(kernel: KernelSession) -> None:
    run(kernel, SCHEDULE_SETUP)
    cell = """halve = keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
net.fit(xs, ys, epochs=3, verbose=0, callbacks=[halve])
"""
    assert notes_in(checked_report(run(kernel, cell)), "callback-mode") == []


SELECTION_SETUP = """import os, tempfile
os.chdir(tempfile.mkdtemp())
rng = np.random.default_rng(1)
feats = rng.normal(size=(256, 4)).astype("float32")
target = feats @ np.array([1.0, -1.0, 0.5, 2.0], "float32")
keras.utils.set_random_seed(3)
reg = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
reg.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
# the last epoch's step is far too large: its validation loss is the worst
jump = keras.callbacks.LearningRateScheduler(lambda epoch, lr: 0.05 if epoch < 5 else 3.0)
"""

SELECTION_MADE = """keeper = keras.callbacks.ModelCheckpoint("pick.keras", monitor="val_loss")
stopper = keras.callbacks.EarlyStopping(monitor="val_loss", patience=3)
"""

SELECTION_FIT = """reg.fit(feats, target, epochs=6, validation_split=0.25, verbose=0,
        callbacks=[jump, keeper])
"""

SELECTION_LOAD = """chosen = keras.models.load_model("pick.keras")
chosen_val = chosen.evaluate(feats[192:], target[192:], verbose=0)
best_val = min(reg.history.history["val_loss"])
"""


def test_checkpoint_of_every_epoch_beside_early_stopping(kernel: KernelSession) -> None:
    run(kernel, SELECTION_SETUP)
    notes = notes_in(checked_report(run(kernel, SELECTION_MADE)), "callback-mode")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        '`keras.callbacks.ModelCheckpoint("pick.keras", monitor="val_loss")` (line 1 of this '
        "cell) has no `save_best_only=True`"
    ), text
    assert "a fit that stops early ends 3 epochs after its best epoch" in text
    fix = 'keras.callbacks.ModelCheckpoint("pick.keras", monitor="val_loss", save_best_only=True)'
    assert f"Keep the best epoch: `{fix}`." in text
    # a checkpoint of every epoch made without an EarlyStopping is not told where it is made
    alone = SELECTION_MADE.split("\n", 1)[0] + "\n"
    assert notes_in(checked_report(run(kernel, alone)), "callback-mode") == []
    run(kernel, SELECTION_MADE)
    assert notes_in(checked_report(run(kernel, SELECTION_FIT)), "callback-mode") == []
    # told where it was made, not again where it is loaded
    assert notes_in(checked_report(run(kernel, SELECTION_LOAD)), "callback-mode") == []
    assert value_of(kernel, "chosen_val > 10 * best_val") is True  # the last, worst epoch
    run(kernel, SELECTION_SETUP)
    fixed = SELECTION_MADE.replace(
        'keras.callbacks.ModelCheckpoint("pick.keras", monitor="val_loss")', fix
    )
    assert notes_in(checked_report(run(kernel, fixed)), "callback-mode") == []
    run(kernel, SELECTION_FIT)
    assert notes_in(checked_report(run(kernel, SELECTION_LOAD)), "callback-mode") == []
    assert value_of(kernel, "abs(chosen_val - best_val) < 1e-4 * max(1.0, best_val)") is True


def test_checkpoint_of_every_epoch_loaded_as_best(kernel: KernelSession) -> None:
    run(kernel, SELECTION_SETUP)
    made = 'keeper = keras.callbacks.ModelCheckpoint("pick.keras")\n'
    assert notes_in(checked_report(run(kernel, made)), "callback-mode") == []
    assert notes_in(checked_report(run(kernel, SELECTION_FIT)), "callback-mode") == []
    notes = notes_in(checked_report(run(kernel, SELECTION_LOAD)), "callback-mode")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`keras.models.load_model(\"pick.keras\")` (line 1 of this cell) loads 'pick.keras', "
        "written by `keeper`, a `ModelCheckpoint` without `save_best_only=True`"
    ), text
    assert "the file holds the last epoch (epoch 6, val_loss" in text
    fix = 'keras.callbacks.ModelCheckpoint("pick.keras", save_best_only=True)'
    assert f"Make it `{fix}` and fit again before loading." in text
    assert value_of(kernel, "chosen_val > 10 * best_val") is True
    run(kernel, SELECTION_SETUP)
    run(kernel, f"keeper = {fix}\n")
    run(kernel, SELECTION_FIT)
    assert notes_in(checked_report(run(kernel, SELECTION_LOAD)), "callback-mode") == []
    assert value_of(kernel, "abs(chosen_val - best_val) < 1e-4 * max(1.0, best_val)") is True


RESTORE_SETUP = """import tempfile
class Scale(tf.Module):
    def __init__(self, start):
        super().__init__()
        self.k = tf.Variable([start])

    def __call__(self, x):
        return x * self.k

encoder_a, head_a = Scale(5.0), Scale(2.0)
writer = tf.train.Checkpoint(encoder=encoder_a, head=head_a)
written_at = writer.save(tempfile.mkdtemp() + "/pair")
"""

RESTORE_CELL = """encoder_b = Scale(0.0)
tf.train.Checkpoint(enc=encoder_b).restore(written_at)
got = float(encoder_b.k[0])
"""


def test_restore_of_a_checkpoint_made_on_the_spot(kernel: KernelSession) -> None:
    run(kernel, RESTORE_SETUP)
    notes = notes_in(checked_report(run(kernel, RESTORE_CELL)), "keras-saving")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "the checkpoint restored here tracks `encoder_b` as `enc`, but the checkpoint file "
        "holds only `encoder`, `head`"
    ), text
    fix = "tf.train.Checkpoint(encoder=encoder_b)"
    assert f"Track it under the name it was saved under: `{fix}`" in text
    assert value_of(kernel, "got") == 0.0
    fixed = RESTORE_CELL.replace("tf.train.Checkpoint(enc=encoder_b)", fix)
    assert notes_in(checked_report(run(kernel, fixed)), "keras-saving") == []
    assert value_of(kernel, "got") == 5.0


def test_distances_cut_at_one_half_stay_silent(kernel: KernelSession) -> None:
    cell = """relu_out = keras.layers.Dense(1, activation="relu")
gauge = keras.Sequential([keras.Input((2,)), relu_out])
gauge.layers[0].set_weights([np.array([[3.0], [3.0]], "float32"), np.zeros(1, "float32")])
spots = np.abs(np.random.default_rng(2).normal(size=(50, 2))).astype("float32")
gaps = gauge.predict(spots, verbose=0)
close = gaps < 0.5
"""
    assert notes_in(checked_report(run(kernel, cell)), "from-logits") == []


CRITIC_SETUP = """rng = np.random.default_rng(4)
rows = rng.normal(size=(32, 3)).astype("float32")
marks = (rows[:, :1] > 0).astype("float32")
keras.utils.set_random_seed(5)
critic = keras.Sequential([
    keras.Input((3,)),
    keras.layers.Dense(4, activation="tanh"),
    keras.layers.Dense(1, activation="sigmoid"),
])
plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                          keras.layers.Dense(1)])
plain.set_weights([w * 4.0 if i == 2 else w for i, w in enumerate(critic.get_weights())])
critic.set_weights(plain.get_weights())
reference = float(keras.losses.BinaryCrossentropy(from_logits=True)(marks, plain(rows)))
"""

TF_LOSS_CELL = """def critic_loss(xb, yb):
    out = critic(xb, training=True)
    return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=yb, logits=out))

with tf.GradientTape() as tape:
    loss_value = critic_loss(rows, marks)
grads = tape.gradient(loss_value, critic.trainable_variables)
gap = abs(float(loss_value) - reference)
"""


def test_tf_logits_loss_on_a_sigmoid_model(kernel: KernelSession) -> None:
    run(kernel, CRITIC_SETUP)
    notes = notes_in(checked_report(run(kernel, TF_LOSS_CELL)), "from-logits")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.nn.sigmoid_cross_entropy_with_logits(...)` (line 3 of this cell) takes raw "
        "scores (logits) and applies its own sigmoid, but `out` is the output of `critic`, "
        "whose last layer already applies a sigmoid"
    ), text
    fix = "keras.ops.binary_crossentropy(yb, out)"
    assert f"Give the loss probabilities: `{fix}`" in text
    assert value_of(kernel, "gap > 0.05") is True
    fixed = TF_LOSS_CELL.replace(
        "tf.nn.sigmoid_cross_entropy_with_logits(labels=yb, logits=out)", fix
    )
    assert notes_in(checked_report(run(kernel, fixed)), "from-logits") == []
    assert value_of(kernel, "gap < 1e-4") is True


def test_tf_logits_loss_on_predictions_asked_of_a_sigmoid_model(kernel: KernelSession) -> None:
    """``model.predict`` and ``model.predict_on_batch`` give the last layer's output as a
    call of the model does: probabilities for a sigmoid model."""
    run(kernel, CRITIC_SETUP)
    cell = (
        "probs_np = critic.predict(rows, verbose=0)\n"
        "held_bce = float(tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(\n"
        "    labels=marks, logits=probs_np)))\n"
        "gap = abs(held_bce - reference)\n"
    )
    [text] = notes_in(checked_report(run(kernel, cell)), "from-logits")
    assert text.startswith(
        "`tf.nn.sigmoid_cross_entropy_with_logits(...)` (line 2 of this cell) takes raw "
        "scores (logits) and applies its own sigmoid, but `probs_np` is the output of "
        "`critic`, whose last layer already applies a sigmoid"
    ), text
    assert value_of(kernel, "gap > 0.05") is True
    fix = "keras.ops.binary_crossentropy(marks, probs_np)"
    assert f"Give the loss probabilities: `{fix}`" in text
    fixed = cell.replace(
        "tf.nn.sigmoid_cross_entropy_with_logits(\n    labels=marks, logits=probs_np)", fix
    )
    assert notes_in(checked_report(run(kernel, fixed)), "from-logits") == []
    assert value_of(kernel, "gap < 1e-4") is True
    batch = (
        "first = critic.predict_on_batch(rows)[:, 0]\n"
        "per_row = tf.nn.sigmoid_cross_entropy_with_logits(labels=marks[:, 0], logits=first)\n"
    )
    [text] = notes_in(checked_report(run(kernel, batch)), "from-logits")
    assert "`first` is the output of `critic`" in text, text
    # Look-alike: the scores of the model without an activation.
    raw = (
        "scores_np = plain.predict(rows, verbose=0)\n"
        "raw_bce = float(tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(\n"
        "    labels=marks, logits=scores_np)))\n"
    )
    assert notes_in(checked_report(run(kernel, raw)), "from-logits") == []
    assert abs(value_of(kernel, "raw_bce - reference")) < 1e-4


KERAS_LOSS_CELL = """bce_raw = keras.losses.BinaryCrossentropy(from_logits=True)
with tf.GradientTape() as tape:
    scores = tf.squeeze(critic(rows), axis=-1)
    step_loss = bce_raw(marks[:, 0], scores)
gap = abs(float(step_loss) - reference)
"""


def test_keras_from_logits_loss_on_squeezed_probabilities(kernel: KernelSession) -> None:
    run(kernel, CRITIC_SETUP)
    notes = notes_in(checked_report(run(kernel, KERAS_LOSS_CELL)), "from-logits")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`bce_raw`, made with `from_logits=True`, (line 4 of this cell) is given `scores`, "
        "the output of `critic`, whose last layer already applies a sigmoid"
    ), text
    fix = "bce_raw = keras.losses.BinaryCrossentropy()"
    assert f"Tell the loss it gets probabilities: `{fix}`." in text
    assert value_of(kernel, "gap > 0.05") is True
    fixed = KERAS_LOSS_CELL.replace(
        "bce_raw = keras.losses.BinaryCrossentropy(from_logits=True)", fix
    )
    assert notes_in(checked_report(run(kernel, fixed)), "from-logits") == []
    assert value_of(kernel, "gap < 1e-4") is True


def test_keras_loss_on_the_model_output_itself_stays_silent(kernel: KernelSession) -> None:
    # Keras 3 reads the scores kept on a sigmoid layer's output (and warns): the loss is right.
    run(kernel, CRITIC_SETUP)
    cell = """bce_raw = keras.losses.BinaryCrossentropy(from_logits=True)
with tf.GradientTape() as tape:
    whole_loss = bce_raw(marks, critic(rows))
gap = abs(float(whole_loss) - reference)
"""
    assert notes_in(checked_report(run(kernel, cell)), "from-logits") == []
    assert value_of(kernel, "gap < 1e-4") is True


METRIC_CELL = """hits = keras.metrics.BinaryAccuracy(threshold=0.0)
hits.update_state(marks, critic(rows))
share = float(hits.result())
truth_share = float(np.mean((plain(rows).numpy() > 0) == (marks > 0.5)))
"""


def test_logit_threshold_metric_on_probabilities(kernel: KernelSession) -> None:
    run(kernel, CRITIC_SETUP)
    notes = notes_in(checked_report(run(kernel, METRIC_CELL)), "from-logits")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`hits`, a `BinaryAccuracy(threshold=0)` (a threshold for raw scores), is updated at "
        "line 2 of this cell with `critic(rows)`, the output of `critic`, whose last layer "
        "applies a sigmoid"
    ), text
    fix = "hits = keras.metrics.BinaryAccuracy(threshold=0.5)"
    assert f"Cut probabilities at 0.5: `{fix}`" in text
    assert value_of(kernel, "share == float(np.mean(marks))") is True  # every prediction 1
    fixed = METRIC_CELL.replace("hits = keras.metrics.BinaryAccuracy(threshold=0.0)", fix)
    assert notes_in(checked_report(run(kernel, fixed)), "from-logits") == []
    assert value_of(kernel, "abs(share - truth_share) < 1e-6") is True
    silent = METRIC_CELL.replace("critic(rows)", "plain(rows)")
    assert notes_in(checked_report(run(kernel, silent)), "from-logits") == []


CANDIDATE_CELL = """truth = np.array([1.0, 2.0, 3.0, 4.0], "float32")
guesses = {"zeros": np.zeros(4, "float32"), "exact": truth.copy()}
err = keras.metrics.MeanAbsoluteError()
scored = {}
for label, guess in guesses.items():
    err.update_state(truth, guess)
    scored[label] = float(err.result())
"""


def test_one_metric_read_for_each_candidate(kernel: KernelSession) -> None:
    notes = notes_in(checked_report(run(kernel, CANDIDATE_CELL)), "epoch-figures")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`err` is updated and read at each pass of `for label, guess in guesses.items():` "
        "(line 5 of this cell), and never reset there"
    ), text
    assert "put `err.reset_state()` first in the loop's body." in text
    assert value_of(kernel, "scored") == {"zeros": 2.5, "exact": 1.25}
    fixed = CANDIDATE_CELL.replace(
        "    err.update_state", "    err.reset_state()\n    err.update_state"
    )
    assert notes_in(checked_report(run(kernel, fixed)), "epoch-figures") == []
    assert value_of(kernel, "scored") == {"zeros": 2.5, "exact": 0.0}


def test_running_metric_over_batches_stays_silent(kernel: KernelSession) -> None:
    cell = """truth = np.array([1.0, 2.0, 3.0, 4.0], "float32")
running = keras.metrics.MeanAbsoluteError()
so_far = []
for start in range(0, 4, 2):
    running.update_state(truth[start:start + 2], truth[start:start + 2] * 0.5)
    so_far.append(float(running.result()))
"""
    assert notes_in(checked_report(run(kernel, cell)), "epoch-figures") == []


KERAS_RESTORE_SETUP = """import tempfile
keras.utils.set_random_seed(11)
maker = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
maker_opt = keras.optimizers.Adam(0.01)
with tf.GradientTape() as tape:
    drift = tf.reduce_mean(maker(tf.ones((3, 4))) ** 2)
maker_opt.apply_gradients(zip(tape.gradient(drift, maker.trainable_variables),
                              maker.trainable_variables))
# the optimizer holds the model's variables too: the file keys them under its name
snap = tf.train.Checkpoint(maker=maker, maker_opt=maker_opt)
snap_path = snap.save(tempfile.mkdtemp() + "/gan")
"""

KERAS_RESTORE_CELL = """copy = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
tf.train.Checkpoint(mk=copy).restore(snap_path)
same = bool(np.allclose(copy(tf.ones((1, 4))), maker(tf.ones((1, 4)))))
"""


def test_restore_of_a_keras_model_saved_with_its_optimizer(kernel: KernelSession) -> None:
    run(kernel, KERAS_RESTORE_SETUP)
    notes = notes_in(checked_report(run(kernel, KERAS_RESTORE_CELL)), "keras-saving")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "the checkpoint restored here tracks `copy` as `mk`, but the checkpoint file holds "
        "only `maker`, `maker_opt`"
    ), text
    fix = "tf.train.Checkpoint(maker=copy)"
    assert f"Track it under the name it was saved under: `{fix}`" in text
    assert value_of(kernel, "same") is False
    fixed = KERAS_RESTORE_CELL.replace("tf.train.Checkpoint(mk=copy)", fix)
    assert notes_in(checked_report(run(kernel, fixed)), "keras-saving") == []
    assert value_of(kernel, "same") is True
