"""An operand against what the called parameter means (issue #25, the coach explains code
it has never seen): probabilities sampled by ``tf.random.categorical`` (which reads
logits), raw scores given to a KL divergence (which reads probabilities), in a function of
the learner's, at the top level, and in a ``train_step`` run by ``fit``; and reductions
whose axis contradicts the learner's own words for the result ("per image", "per
dimension", "per sample"). Each note names the learner's operand and its evidence, and its
fix runs in the kernel and makes the numbers right; correct look-alikes stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

SETUP = """keras.utils.set_random_seed(3)
chooser = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3, use_bias=False)])
chooser.layers[0].kernel.assign(np.diag([4.0, 0.0, 0.0]).astype("float32"))
start = np.array([1.0, 0.0, 0.0], dtype="float32")
"""

SAMPLER = """def act(state):
    s = chooser(state[None])
    odds = tf.nn.softmax(s)
    return tf.random.categorical(odds, 4000)

draws = act(start).numpy()[0]
share = float(np.mean(draws == 0))
"""


def notes_of(report: dict[str, Any], section: str) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == section
    ]


def test_probabilities_sampled_as_logits_in_a_function(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = notes_of(checked_report(run(kernel, SAMPLER)), "from-logits")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.random.categorical(odds, 4000)` (line 4, in `act`): `tf.random.categorical` "
        "reads its first argument as logits"
    ), text
    assert "`odds` is `tf.nn.softmax(s)` (line 3)" in text
    # The softmax gives class 0 a probability of 0.96; sampled as logits it gets ~0.56.
    assert value_of(kernel, "share") < 0.7
    fix = "tf.random.categorical(s, 4000)"
    assert f"`{fix}`" in text
    fixed = SAMPLER.replace("tf.random.categorical(odds, 4000)", fix)
    assert notes_of(checked_report(run(kernel, fixed)), "from-logits") == []
    assert value_of(kernel, "share") > 0.93


def test_probabilities_sampled_at_the_top_level(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    run(kernel, "batch = np.tile(start, (6, 1))\nchances = tf.nn.softmax(chooser(batch))\n")
    cell = "picks = keras.random.categorical(chances, 3000, seed=1)\n"
    cell += "first = float(np.mean(picks.numpy() == 0))\n"
    notes = notes_of(checked_report(run(kernel, cell)), "from-logits")
    assert len(notes) == 1, notes
    assert "`chances`: every row lies in [0, 1] and sums to 1" in notes[0]
    assert value_of(kernel, "first") < 0.7
    fix = "keras.random.categorical(tf.math.log(chances), 3000, seed=1)"
    assert f"`{fix}`" in notes[0], notes[0]
    fixed = cell.replace("keras.random.categorical(chances, 3000, seed=1)", fix)
    assert notes_of(checked_report(run(kernel, fixed)), "from-logits") == []
    assert value_of(kernel, "first") > 0.93


def test_sampling_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    for cell in (
        # Scores, log-probabilities, and a model call that ends without an activation.
        SAMPLER.replace("odds = tf.nn.softmax(s)", "odds = tf.nn.log_softmax(s)"),
        SAMPLER.replace("odds = tf.nn.softmax(s)", "odds = s"),
        "lab = tf.random.categorical(chooser(np.tile(start, (4, 1))), 5)\n",
        # A softmax over the vocabulary given to a loss that reads probabilities.
        "q = tf.nn.softmax(chooser(start[None]))\n"
        "gap = keras.losses.KLDivergence()(q, tf.nn.softmax(chooser(start[None]) / 2.0))\n",
    ):
        assert notes_of(checked_report(run(kernel, cell)), "from-logits") == [], cell


DISTILL = """class Mimic(keras.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher
        self.gap = keras.losses.KLDivergence()

    def train_step(self, data):
        x, _ = data
        target = tf.nn.softmax(self.teacher(x))
        with tf.GradientTape() as tape:
            guess = self.student(x, training=True)
            loss = self.gap(target, guess)
        grads = tape.gradient(loss, self.student.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.student.trainable_variables))
        return {"loss": loss}

feats = np.random.default_rng(0).normal(size=(256, 6)).astype("float32")
teacher = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4)])
learner = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4)])
mimic = Mimic(learner, teacher)
mimic.compile(optimizer=keras.optimizers.Adam(0.05))
mimic.fit(feats, np.zeros(256), epochs=15, batch_size=64, verbose=0)
agree = float(np.mean(np.argmax(learner(feats), -1) == np.argmax(teacher(feats), -1)))
"""


def test_scores_given_to_a_divergence_in_a_train_step(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = notes_of(checked_report(run(kernel, DISTILL)), "from-logits")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`self.gap(target, guess)` (line 13, in `train_step`): `self.gap` (a KL divergence) "
        "reads its second argument as probabilities"
    ), text
    assert "`guess` is `self.student(x, training=True)`" in text
    assert "no activation" in text
    before = value_of(kernel, "agree")
    fix = "self.gap(target, tf.nn.softmax(guess, axis=-1))"
    assert f"`{fix}`" in text
    fixed = DISTILL.replace("self.gap(target, guess)", fix)
    assert notes_of(checked_report(run(kernel, fixed)), "from-logits") == []
    assert value_of(kernel, "agree") > max(before, 0.85)


def test_scores_given_to_a_divergence_in_a_loss_function(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = """kl = keras.losses.KLDivergence()
def soft_gap(ref_logits, out_logits, temp):
    return kl(tf.nn.softmax(ref_logits / temp), out_logits / temp)

a = chooser(np.eye(3, dtype="float32"))
value = float(soft_gap(a, a, 2.0))
"""
    notes = notes_of(checked_report(run(kernel, cell)), "from-logits")
    assert len(notes) == 1, notes
    assert "`out_logits`, a parameter named for raw scores" in notes[0]
    # The same scores on both sides: the divergence is 0 only once both are probabilities.
    assert value_of(kernel, "value") > 0.01
    fix = "kl(tf.nn.softmax(ref_logits / temp), tf.nn.softmax(out_logits / temp, axis=-1))"
    assert f"`{fix}`" in notes[0], notes[0]
    fixed = cell.replace("kl(tf.nn.softmax(ref_logits / temp), out_logits / temp)", fix)
    assert notes_of(checked_report(run(kernel, fixed)), "from-logits") == []
    assert abs(value_of(kernel, "value")) < 1e-5


RECON_SETUP = """keras.utils.set_random_seed(5)
tiles = np.random.default_rng(2).random((30, 5, 5, 1)).astype("float32")
squash = keras.Sequential(
    [keras.Input((5, 5, 1)), keras.layers.Conv2D(1, 3, padding="same")]
)
embed = keras.Sequential([keras.Input((5, 5, 1)), keras.layers.Flatten(), keras.layers.Dense(4)])
"""


def test_a_per_example_value_reduced_over_the_examples(kernel: KernelSession) -> None:
    run(kernel, RECON_SETUP)
    cell = """back = squash.predict(tiles, verbose=0)
gap_per_tile = ((tiles - back) ** 2).mean(axis=0)
print("five worst tiles:", np.argsort(gap_per_tile.ravel())[-5:])
"""
    notes = notes_of(checked_report(run(kernel, cell)), "reducing-tensors")
    assert len(notes) == 1, notes
    text = notes[0]
    assert "`gap_per_tile` gets shape (5, 5, 1)" in text, text
    fix = "gap_per_tile = ((tiles - back) ** 2).mean(axis=(1, 2, 3))"
    assert f"`{fix}`" in text, text
    fixed = cell.replace(cell.splitlines()[1], fix)
    assert notes_of(checked_report(run(kernel, fixed)), "reducing-tensors") == []
    assert value_of(kernel, "gap_per_tile.shape") == [30]


def test_a_per_dimension_value_reduced_within_each_example(kernel: KernelSession) -> None:
    run(kernel, RECON_SETUP)
    cell = """codes = embed(tiles).numpy()
spread = np.std(codes, 1)
print("spread per code dimension:", np.round(spread, 2))
"""
    notes = notes_of(checked_report(run(kernel, cell)), "reducing-tensors")
    assert len(notes) == 1, notes
    assert "`spread` gets shape (30,)" in notes[0]
    fix = "spread = np.std(codes, axis=0)"
    assert f"`{fix}`" in notes[0], notes[0]
    fixed = cell.replace("spread = np.std(codes, 1)", fix)
    assert notes_of(checked_report(run(kernel, fixed)), "reducing-tensors") == []
    assert value_of(kernel, "spread.shape") == [4]


def test_a_mean_per_example_summed_over_everything(kernel: KernelSession) -> None:
    run(kernel, RECON_SETUP)
    cell = """share = tf.nn.softmax(embed(tiles))
ent = -tf.reduce_sum(share * tf.math.log(share))
print(f"average entropy per sample: {float(ent):.3f}")
"""
    notes = notes_of(checked_report(run(kernel, cell)), "reducing-tensors")
    assert len(notes) == 1, notes
    assert "30 times the mean per example" in notes[0]
    assert value_of(kernel, "float(ent)") > 5.0  # log(4) is at most 1.39 per example
    fix = "ent = -tf.reduce_sum(share * tf.math.log(share), axis=-1)"
    assert f"`{fix}`" in notes[0], notes[0]
    assert "`tf.reduce_mean(ent)`" in notes[0]
    fixed = cell.replace(cell.splitlines()[1], fix + "\nent = tf.reduce_mean(ent)")
    assert notes_of(checked_report(run(kernel, fixed)), "reducing-tensors") == []
    assert value_of(kernel, "float(ent)") < 1.39


def test_reduction_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, RECON_SETUP)
    for cell in (
        # A statistic of each pixel over the images, said so.
        "back = squash.predict(tiles, verbose=0)\n"
        "err_per_pixel = np.mean((tiles - back) ** 2, axis=0)\n",
        # A dataset statistic, named as one (a per-image name over axis 0 is told by
        # per_item_reductions, from the name alone).
        "mean_image = tiles.mean(axis=0)\nprint('mean over the images', mean_image.shape)\n",
        # The mean error per example, as one number.
        "back = squash.predict(tiles, verbose=0)\n"
        "mse = np.mean((tiles - back) ** 2)\nprint('mean error per image', mse)\n",
        # A total said to be one.
        "share = tf.nn.softmax(embed(tiles))\n"
        "total = tf.reduce_sum(share)\nprint('total over each sample', float(total))\n",
    ):
        assert notes_of(checked_report(run(kernel, cell)), "reducing-tensors") == [], cell


TWICE = """def flip_loss(y, z):
    return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(y, tf.sigmoid(z)))

rng = np.random.default_rng(4)
pts = rng.normal(size=(512, 2)).astype("float32")
side = (pts[:, :1] + pts[:, 1:] > 0).astype("float32")
keras.utils.set_random_seed(4)
edge = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
edge.compile(optimizer=keras.optimizers.Adam(0.1), loss=flip_loss)
seen = edge.fit(pts, side, epochs=30, batch_size=64, verbose=0).history["loss"][-1]
"""


def test_probabilities_given_to_a_loss_told_from_logits(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = notes_of(checked_report(run(kernel, TWICE)), "from-logits")
    assert len(notes) == 1, notes
    text = notes[0]
    assert "(line 2, in `flip_loss`)" in text
    assert "holds probabilities: the output of `tf.sigmoid`" in text
    # A sigmoid of a probability is at least 0.5: the loss it reports never goes below
    # log(1 + e^-1), about 0.31, however well the model separates the points.
    assert value_of(kernel, "seen") > 0.3
    fix = "tf.nn.sigmoid_cross_entropy_with_logits(y, z)"
    assert f"`{fix}`" in text, text
    fixed = TWICE.replace("tf.nn.sigmoid_cross_entropy_with_logits(y, tf.sigmoid(z))", fix)
    assert notes_of(checked_report(run(kernel, fixed)), "from-logits") == []
    assert value_of(kernel, "seen") < 0.15
    # Traced by fit, Keras finds the scores behind a sigmoid given to its own loss told
    # from_logits=True (and warns): nothing to tell there.
    keras_loss = "keras.losses.binary_crossentropy(y, tf.sigmoid(z), from_logits=True)"
    told = TWICE.replace(
        "tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(y, tf.sigmoid(z)))", keras_loss
    )
    assert keras_loss in told
    assert notes_of(checked_report(run(kernel, told)), "from-logits") == []
    # A loss object made earlier with from_logits=True, given a softmax in a cell's code.
    run(kernel, "pick = keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n")
    loop = "out = chooser(np.eye(3, dtype='float32'))\n"
    loop += "cost = pick(np.arange(3), tf.nn.softmax(out))\n"
    notes = notes_of(checked_report(run(kernel, loop)), "from-logits")
    assert len(notes) == 1 and "`pick(np.arange(3), out)`" in notes[0], notes
    assert (
        notes_of(
            checked_report(run(kernel, loop.replace("tf.nn.softmax(out)", "out"))), "from-logits"
        )
        == []
    )


SOFT_FIT = """rng = np.random.default_rng(7)
xs = rng.normal(size=(400, 5)).astype("float32")
keras.utils.set_random_seed(7)
guide = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3, activation="softmax")])
soft = guide.predict(xs, verbose=0)
pupil = keras.Sequential([keras.Input((5,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(3)])
pupil.compile(optimizer=keras.optimizers.Adam(0.02), loss="kl_divergence")
pupil.fit(xs, soft, epochs=40, batch_size=50, verbose=0)
match = float(np.mean(np.argmax(pupil.predict(xs, verbose=0), -1) == np.argmax(soft, -1)))
"""


def test_a_divergence_compiled_on_a_model_without_activation(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = notes_of(checked_report(run(kernel, SOFT_FIT)), "from-logits")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`pupil.compile(optimizer=keras.optimizers.Adam(0.02), loss=")
    assert "the last layer of `pupil` has no activation" in text
    fix = (
        "pupil.compile(optimizer=keras.optimizers.Adam(0.02), loss=lambda target, scores: "
        "keras.losses.kl_divergence(target, keras.ops.softmax(scores)))"
    )
    assert f"`{fix}`" in text, text
    before = value_of(kernel, "match")
    compile_line = next(line for line in SOFT_FIT.splitlines() if "pupil.compile" in line)
    fixed = SOFT_FIT.replace(compile_line, fix)
    assert notes_of(checked_report(run(kernel, fixed)), "from-logits") == []
    assert value_of(kernel, "match") > max(before + 0.1, 0.9)
    # The same divergence on a model that ends in a softmax says nothing.
    ending = SOFT_FIT.replace(
        "keras.layers.Dense(3)])", 'keras.layers.Dense(3, activation="softmax")])'
    )
    assert notes_of(checked_report(run(kernel, ending)), "from-logits") == []


def test_one_number_ranked_as_one_value_per_example(kernel: KernelSession) -> None:
    run(kernel, RECON_SETUP)
    cell = """codes = embed(tiles)
far = tf.norm(codes - tf.reduce_mean(codes, axis=0))
print("most unusual samples:", np.argsort(far.numpy().ravel())[-3:])
"""
    # Without a per-example word, nothing says what `far` should hold.
    assert notes_of(checked_report(run(kernel, cell)), "reducing-tensors") == []
    worded = cell.replace("far", "dist_each_sample")
    notes = notes_of(checked_report(run(kernel, worded)), "reducing-tensors")
    assert len(notes) == 1, notes
    assert "`dist_each_sample` is one number" in notes[0]
    fix = "dist_each_sample = tf.norm(codes - tf.reduce_mean(codes, axis=0), axis=-1)"
    assert f"`{fix}`" in notes[0], notes[0]
    fixed = worded.replace(worded.splitlines()[1], fix)
    assert notes_of(checked_report(run(kernel, fixed)), "reducing-tensors") == []
    assert value_of(kernel, "list(dist_each_sample.shape)") == [30]
