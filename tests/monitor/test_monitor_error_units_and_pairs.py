"""Silent mistakes where two things that belong together are treated apart: an error
converted back to the data's units with the mean added (``symptoms/inverse_scaling.py``),
a tf.data pipeline that shuffles single time steps before it cuts windows
(``symptoms/dataset_order.py``), two permutation draws indexing arrays that go together
(``symptoms/separate_shuffles.py``), and a custom ``train_step`` that applies gradients to
one sub-model's variables only (``training/fit_symptoms.py``). In a real kernel: each note
names the learner's code, the printed fix, applied as printed, gives the right result and
no note; correct look-alikes stay silent. Names, data and APIs differ from the notebooks
that inspired them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="import warnings\nwarnings.simplefilter('ignore')\nkeras.utils.set_random_seed(8)\n",
)


def notes_of(report: dict[str, Any], section: str | None = None) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if section is None or (note.get("course") or {}).get("section") == section
    ]


def notes_in(kernel: KernelSession, code: str, section: str | None = None) -> list[str]:
    return notes_of(checked_report(run(kernel, code)), section)


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


# ------------------------------------------------------------- an error given the mean
SCALE = "preprocessing-adapt"
LOAD = """hours = np.arange(900)
noise = np.random.default_rng(2).normal(0, 6, 900)
load = 300 + 40 * np.sin(hours / 9.0) + noise
mu_l, sd_l = load[:600].mean(), load[:600].std()
load_z = (load - mu_l) / sd_l
"""
# The true RMSE of the persistence forecast, measured in the raw units.
RAW_RMSE = "float(np.sqrt(np.mean((load[1:] - load[:-1]) ** 2)))"


def test_error_converted_back_with_the_mean_added(kernel: KernelSession) -> None:
    assert notes_in(kernel, LOAD, SCALE) == []
    cell = (
        "guess_z = load_z[:-1]\n"
        "rmse_z = np.sqrt(np.mean((load_z[1:] - guess_z) ** 2))\n"
        "rmse_kw = rmse_z * sd_l + mu_l\n"
    )
    [text] = notes_in(kernel, cell, SCALE)
    assert text.startswith(
        "`rmse_kw = rmse_z * sd_l + mu_l` (line 3) de-normalises `rmse_z` with the inverse "
        "of `(load - mu_l) / sd_l`, but `rmse_z` is an error "
        "(`rmse_z = np.sqrt(np.mean((load_z[1:] - guess_z) ** 2))`)"
    ), text
    raw = value_of(kernel, RAW_RMSE)
    assert abs(value_of(kernel, "float(rmse_kw)") - raw) > 100  # the symptom: ~300 too big
    fix = spans(text)[-1]
    assert fix == "rmse_kw = rmse_z * sd_l"
    assert notes_in(kernel, cell.replace("rmse_kw = rmse_z * sd_l + mu_l", fix), SCALE) == []
    assert abs(value_of(kernel, "float(rmse_kw)") - raw) < 1e-6


def test_inline_tensor_error_and_correct_look_alikes(kernel: KernelSession) -> None:
    run(kernel, LOAD)
    cell = "step_mae = tf.reduce_mean(tf.abs(load_z[1:] - load_z[:-1])) * sd_l + mu_l\n"
    [text] = notes_in(kernel, cell, SCALE)
    fix = spans(text)[-1]
    assert fix == "step_mae = tf.reduce_mean(tf.abs(load_z[1:] - load_z[:-1])) * sd_l"
    assert notes_in(kernel, fix, SCALE) == []
    raw_mae = "float(np.mean(np.abs(load[1:] - load[:-1])))"
    assert abs(value_of(kernel, "float(step_mae)") - value_of(kernel, raw_mae)) < 1e-6
    # Look-alikes: forecasts de-normalised (right: they are values, not differences); an
    # error band around a forecast, de-normalised as a value; an error kept normalised.
    quiet = (
        "guess_kw = load_z[:-1] * sd_l + mu_l\n"
        "band_z = np.mean(np.abs(load_z[1:] - load_z[:-1]))\n"
        "upper_kw = (load_z[:-1] + 2 * band_z) * sd_l + mu_l\n"
        "print(round(float(band_z), 3))\n"
    )
    assert notes_in(kernel, quiet, SCALE) == []
    assert value_of(kernel, "bool(np.allclose(guess_kw, load[:-1]))") is True


# ------------------------------------------------------------- steps shuffled, then windowed
ORDER = "tf-data-order"
PIPE = """SPAN = 16

def sliding_pairs(readings, mix=False):
    pipe = tf.data.Dataset.from_tensor_slices(readings)
    if mix:
        pipe = pipe.shuffle(256)
    pipe = pipe.window(SPAN, shift=2, drop_remainder=True)
    pipe = pipe.flat_map(lambda chunk: chunk.batch(SPAN))
    pipe = pipe.map(lambda s: (s[:-4], s[-4:]))
    return pipe.batch(8)

ramp = np.arange(400, dtype="float32")
fit_pipe = sliding_pairs(ramp, mix=True)
"""
# Every window of a ramp is a run of consecutive values when it is cut from the series.
CONSECUTIVE = (
    "all(bool(np.all(np.diff(np.concatenate([a.numpy(), b.numpy()], axis=1)) == 1)) "
    "for a, b in fit_pipe)"
)


def moved(cell: str, text: str) -> str:
    """The cell with the lines the note says to move put below the line it names."""
    found = re.search(r"move lines? (\d+)(?:-(\d+))? of this cell.* below line (\d+) ", text)
    assert found, text
    first, last = int(found[1]), int(found[2] or found[1])
    below = int(found[3])
    lines = cell.splitlines()
    block = lines[first - 1 : last]
    rest = lines[: first - 1] + lines[last:]
    at = below - len(block)  # the target line moved up by the lines taken out above it
    return "\n".join(rest[:at] + block + rest[at:]) + "\n"


def test_steps_shuffled_before_windows_in_a_helper(kernel: KernelSession) -> None:
    [text] = notes_in(kernel, PIPE, ORDER)
    assert text.startswith(
        "`fit_pipe` shuffles single time steps with a buffer of 256 before `window` cuts "
        "them into windows of 16 steps (shift 2)"
    ), text
    assert (
        "Fix: move lines 5-6 of this cell (in `sliding_pairs`: `if mix:` / "
        "`pipe = pipe.shuffle(256)`) to " in text
    )
    assert "below line 8 (`pipe = pipe.flat_map(lambda chunk: chunk.batch(SPAN))`)" in text
    assert value_of(kernel, CONSECUTIVE) is False  # the symptom: windows of scattered steps
    # Used later (fit, a loop): told once, where the pipeline was written.
    assert notes_in(kernel, "for _ in fit_pipe.take(1):\n    pass\n", ORDER) == []
    fixed = moved(PIPE, text)
    assert "    pipe = pipe.flat_map(lambda chunk: chunk.batch(SPAN))\n    if mix:\n" in fixed
    assert notes_in(kernel, fixed, ORDER) == []
    assert value_of(kernel, CONSECUTIVE) is True
    # Still shuffled: the windows no longer come in the series' order.
    first_starts = "[float(a[0, 0]) for a, _ in fit_pipe.take(3)]"
    assert value_of(kernel, first_starts) != [0.0, 16.0, 32.0]


def test_steps_shuffled_before_windows_in_one_chain(kernel: KernelSession) -> None:
    cell = (
        "ticks = tf.data.Dataset.range(300).shuffle(64).window(6, shift=6)"
        ".flat_map(lambda w: w.batch(6)).batch(5)\n"
    )
    [text] = notes_in(kernel, cell, ORDER)
    fix = spans(text)[-1]
    assert fix == (
        "ticks = tf.data.Dataset.range(300).window(6, shift=6)"
        ".flat_map(lambda w: w.batch(6)).shuffle(64).batch(5)"
    )
    assert notes_in(kernel, fix, ORDER) == []
    runs = "all(bool(np.all(np.diff(b.numpy(), axis=1) == 1)) for b in ticks)"
    assert value_of(kernel, runs) is True
    # Look-alikes: windows shuffled after they are cut; Keras's own windowing with
    # shuffle=True (it shuffles the windows' starts); a shuffle of whole windows between
    # two windowings' batches.
    quiet = """series = np.sin(np.arange(500) / 7.0).astype("float32")
cut = (tf.data.Dataset.from_tensor_slices(series).window(12, shift=1, drop_remainder=True)
       .flat_map(lambda w: w.batch(12)).shuffle(200).batch(16))
made = keras.utils.timeseries_dataset_from_array(series, None, sequence_length=12, shuffle=True,
                                                 batch_size=16)
for _ in cut.take(1):
    pass
for _ in made.take(1):
    pass
"""
    assert notes_in(kernel, quiet, ORDER) == []


# ------------------------------------------------------------- two permutation draws
PIXELS = """gen = np.random.default_rng(6)
pixels = gen.normal(size=(300, 4)).astype("float32")
tags = (pixels[:, 0] > 0).astype("int32")
"""
# Whether each row still carries its own tag (the tag is read off the row's first value).
KEPT = "bool(((mixed_px[:, 0] > 0).astype('int32') == mixed_tags).all())"


def test_two_permutation_draws_index_features_and_labels(kernel: KernelSession) -> None:
    run(kernel, PIXELS)
    cell = (
        "mixed_px = pixels[gen.permutation(len(pixels))]\n"
        "mixed_tags = tags[gen.permutation(len(pixels))]\n"
        "train_px, train_tags = mixed_px[:200], mixed_tags[:200]\n"
    )
    [text] = notes_in(kernel, cell, ORDER)
    assert text.startswith(
        "`pixels[gen.permutation(len(pixels))]` (line 1) and "
        "`tags[gen.permutation(len(pixels))]` (line 2) index `pixels` and `tags` with two "
        "different permutations"
    ), text
    assert "(both 300 rows long)" in text
    assert value_of(kernel, KEPT) is False  # the symptom: rows carry other rows' tags
    draw, first, second = spans(text)[-3:]
    assert draw == "perm = gen.permutation(len(pixels))"
    assert (first, second) == ("mixed_px = pixels[perm]", "mixed_tags = tags[perm]")
    lines = cell.splitlines()
    fixed = "\n".join([draw, first, second, *lines[2:]]) + "\n"
    assert notes_in(kernel, fixed, ORDER) == []
    assert value_of(kernel, KEPT) is True
    assert value_of(kernel, "bool((mixed_px != pixels).any())") is True  # still shuffled


def test_named_permutation_draws_and_look_alikes(kernel: KernelSession) -> None:
    run(kernel, PIXELS)
    cell = (
        "order_a, order_b = gen.permutation(300), gen.permutation(300)\n"
        "mixed_px = pixels[order_a]\n"
        "mixed_tags = tags[order_b]\n"
    )
    [text] = notes_in(kernel, cell, ORDER)
    fix = spans(text)[-1]
    assert fix == "mixed_tags = tags[order_a]"
    assert notes_in(kernel, cell.replace("mixed_tags = tags[order_b]", fix), ORDER) == []
    assert value_of(kernel, KEPT) is True
    # Look-alikes: a chance baseline that scrambles the pairing on purpose and says so;
    # one draw for both; the global seed set again before each draw (the same order);
    # two random views of one array.
    on_purpose = (
        "# chance baseline: scramble the pairing on purpose\n"
        "base_px = pixels[gen.permutation(300)]\n"
        "base_tags = tags[gen.permutation(300)]\n"
    )
    assert notes_in(kernel, on_purpose, ORDER) == []
    one_draw = "idx = gen.permutation(300)\nmixed_px, mixed_tags = pixels[idx], tags[idx]\n"
    assert notes_in(kernel, one_draw, ORDER) == []
    reseeded = (
        "np.random.seed(1)\nmixed_px = pixels[np.random.permutation(300)]\n"
        "np.random.seed(1)\nmixed_tags = tags[np.random.permutation(300)]\n"
    )
    assert notes_in(kernel, reseeded, ORDER) == []
    assert value_of(kernel, KEPT) is True
    views = "view_a = pixels[gen.permutation(300)]\nview_b = pixels[gen.permutation(300)]\n"
    assert notes_in(kernel, views, ORDER) == []


# ------------------------------------------------------------- one sub-model trained
STEP = "custom-train-step"
MATCHER = """rng_q = np.random.default_rng(9)
queries = rng_q.normal(size=(512, 6)).astype("float32")
docs = (queries @ rng_q.normal(size=(6, 6))).astype("float32")

class Matcher(keras.Model):
    def __init__(self):
        super().__init__()
        self.query_net = keras.Sequential([keras.layers.Dense(8)], name="query_net")
        self.doc_net = keras.Sequential([keras.layers.Dense(8)], name="doc_net")
        self.tracker = keras.metrics.Mean(name="loss")

    def call(self, inputs):
        q, d = inputs
        return self.query_net(q), self.doc_net(d)

    def train_step(self, data):
        q, d = data
        with tf.GradientTape() as tape:
            a = self.query_net(q, training=True)
            b = self.doc_net(d, training=True)
            logits = tf.matmul(a, b, transpose_b=True)
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
                tf.range(tf.shape(logits)[0]), logits, from_logits=True))
        grads = tape.gradient(loss, self.query_net.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.query_net.trainable_variables))
        self.tracker.update_state(loss)
        return {"loss": self.tracker.result()}

    @property
    def metrics(self):
        return [self.tracker]
"""
FIT = """matcher = Matcher()
matcher((queries[:2], docs[:2]))
matcher.compile(optimizer=keras.optimizers.Adam(0.01))
doc_kernel = matcher.doc_net.layers[0].kernel.numpy().copy()
pairs_ds = tf.data.Dataset.from_tensor_slices((queries, docs)).batch(64)
log = matcher.fit(pairs_ds, epochs=3, verbose=0)
"""
DOC_MOVED = "bool((matcher.doc_net.layers[0].kernel.numpy() != doc_kernel).any())"


def test_train_step_that_updates_one_sub_model(kernel: KernelSession) -> None:
    run(kernel, MATCHER)
    [text] = notes_in(kernel, FIT, STEP)
    assert value_of(kernel, DOC_MOVED) is False  # the symptom: one tower never trained
    assert (
        text.startswith(
            "`matcher.fit` changed 2 of the model's 4 trainable weights and left 2 weights "
            "exactly as they were: `doc_net/dense_1/kernel`, `doc_net/dense_1/bias`, of "
            "`self.doc_net`. `Matcher.train_step` takes the gradients for "
            "`self.query_net.trainable_variables` only"
        )
        or "of `self.doc_net`. `Matcher.train_step` takes the gradients for" in text
    ), text
    fixes = spans(text)[-2:]
    assert fixes == [
        "grads = tape.gradient(loss, self.trainable_variables)",
        "self.optimizer.apply_gradients(zip(grads, self.trainable_variables))",
    ]
    fixed = MATCHER.replace(
        "grads = tape.gradient(loss, self.query_net.trainable_variables)", fixes[0]
    ).replace(
        "self.optimizer.apply_gradients(zip(grads, self.query_net.trainable_variables))",
        fixes[1],
    )
    run(kernel, fixed)
    assert notes_in(kernel, FIT, STEP) == []
    assert value_of(kernel, DOC_MOVED) is True


def test_sub_models_trained_apart_or_kept_fixed_stay_silent(kernel: KernelSession) -> None:
    # Two tapes, one per sub-model (as a GAN's step): every weight moves.
    two_tapes = MATCHER.replace(
        """        grads = tape.gradient(loss, self.query_net.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.query_net.trainable_variables))
""",
        """        grads = tape.gradient(loss, self.query_net.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.query_net.trainable_variables))
        with tf.GradientTape() as tape2:
            a = self.query_net(q)
            b = self.doc_net(d, training=True)
            logits = tf.matmul(a, b, transpose_b=True)
            loss2 = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
                tf.range(tf.shape(logits)[0]), logits, from_logits=True))
        grads2 = tape2.gradient(loss2, self.doc_net.trainable_variables)
        self.doc_optimizer.apply_gradients(zip(grads2, self.doc_net.trainable_variables))
""",
    ).replace(
        '        self.tracker = keras.metrics.Mean(name="loss")\n',
        '        self.tracker = keras.metrics.Mean(name="loss")\n'
        "        self.doc_optimizer = keras.optimizers.Adam(0.01)\n",
    )
    run(kernel, two_tapes)
    assert notes_in(kernel, FIT, STEP) == []
    assert value_of(kernel, DOC_MOVED) is True
    # The document tower kept fixed on purpose: called with training=False.
    fixed_tower = MATCHER.replace(
        "b = self.doc_net(d, training=True)", "b = self.doc_net(d, training=False)"
    )
    run(kernel, fixed_tower)
    assert notes_in(kernel, FIT, STEP) == []
