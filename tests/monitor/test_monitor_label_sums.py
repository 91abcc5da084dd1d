"""Soft label rows that do not sum to 1 given to a categorical cross-entropy by ``fit``
(issue #25, silent bugs; ``training/label_sums.py``): hand smoothing that adds the whole
``e`` to every class, blends whose weights do not add up to 1. In a real kernel: the note
names the model, the data and the row sums; where the smoothing ``a * (1 - e) + e`` is
written (a function mapped over the dataset, or a cell) the printed fix, applied to the
cell, gives rows summing to 1, the loss Keras's own ``label_smoothing`` computes, and no
note. Look-alikes stay silent: blends of one-hot rows, smoothing spread over the classes,
a loss's own ``label_smoothing``, multi-label targets under a binary cross-entropy."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SECTION = "labels-and-loss"

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "import warnings\n"
    "warnings.simplefilter('ignore')\n"
    "rng = np.random.default_rng(1)\n"
    "levels = 4\n"
    "feats = rng.normal(size=(480, 5)).astype('float32')\n"
    "level = (feats[:, 0] > 0).astype(int) + 2 * (feats[:, 1] > 0).astype(int)\n"
    "onehot = keras.utils.to_categorical(level, levels).astype('float32')\n"
    "pairs = tf.data.Dataset.from_tensor_slices((feats, onehot)).shuffle(480, seed=2)"
    ".batch(40)\n"
    "def scorer():\n"
    "    keras.utils.set_random_seed(4)\n"
    "    return keras.Sequential([keras.Input((5,)), keras.layers.Dense(16, "
    "activation='relu'), keras.layers.Dense(levels)])\n"
)


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [
        n["text"]
        for n in report["notes"]
        if (n["course"] or {}).get("section") == SECTION and "not 1" in n["text"]
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


SOFTEN = """blur = 0.15

def soften(x, t):
    return x, t * (1.0 - blur) + blur

ranker = scorer()
ranker.compile(optimizer="adam", loss=keras.losses.CategoricalCrossentropy(from_logits=True))
ranker.fit(pairs.map(soften), epochs=2, verbose=0)
"""


def test_hand_smoothing_mapped_over_a_dataset(kernel: KernelSession) -> None:
    [text] = notes_of(kernel, SOFTEN)
    assert text.startswith(
        "`ranker.fit` trained a categorical cross-entropy on the labels of "
        "`pairs.map(soften)` (its first batch), whose rows sum to 1.45 (40 of the batch's "
        "40 rows, 4 classes), not 1."
    )
    assert "`t * (1.0 - blur) + blur` (in `soften`, line 4)" in text
    fix = last_code(text)
    assert fix == "t * (1.0 - blur) + blur / levels"
    assert notes_of(kernel, SOFTEN.replace("t * (1.0 - blur) + blur", fix)) == []
    # The fixed rows sum to 1, and the loss on them is the one Keras's own smoothing gives.
    sums = value_of(
        kernel, "[float(s) for s in tf.reduce_sum(next(iter(pairs.map(soften)))[1], axis=1)]"
    )
    assert all(abs(s - 1.0) < 1e-5 for s in sums)
    same = value_of(
        kernel,
        "float(abs(keras.losses.CategoricalCrossentropy(from_logits=True)"
        "(soften(feats, onehot)[1], ranker(feats)) - keras.losses.CategoricalCrossentropy("
        "from_logits=True, label_smoothing=blur)(onehot, ranker(feats))))",
    )
    assert same < 1e-5


def test_smoothed_arrays_from_an_earlier_cell(kernel: KernelSession) -> None:
    run(kernel, "soft_y = onehot * (1 - 0.3) + 0.3\n")
    fit = (
        "keras.utils.set_random_seed(4)\n"
        "grader = keras.Sequential([keras.Input((5,)), keras.layers.Dense(levels, "
        'activation="softmax")])\n'
        'grader.compile(optimizer="adam", loss="categorical_crossentropy")\n'
        "grader.fit(feats, soft_y, epochs=1, verbose=0)\n"
    )
    [text] = notes_of(kernel, fit)
    assert text.startswith(
        "`grader.fit` trained a categorical cross-entropy on the labels `soft_y`, whose rows "
        "sum to 1.9 (480 of its first 480 rows, 4 classes), not 1."
    )
    assert "`onehot * (1 - 0.3) + 0.3` (cell In[" in text
    fix = last_code(text)
    assert fix == "onehot * (1 - 0.3) + 0.3 / levels"
    run(kernel, f"soft_y = {fix}\n")
    assert value_of(kernel, "float(abs(soft_y.sum(axis=1) - 1).max())") < 1e-5
    assert notes_of(kernel, fit) == []


def test_blend_weights_that_do_not_add_up_get_the_rule(kernel: KernelSession) -> None:
    cell = (
        "order = rng.permutation(480)\n"
        "blended = 0.6 * onehot + 0.6 * onehot[order]\n"
        "mixer = scorer()\n"
        "mixer.compile(optimizer='adam', "
        "loss=keras.losses.CategoricalCrossentropy(from_logits=True))\n"
        "mixer.fit(feats, blended, epochs=1, verbose=0)\n"
    )
    [text] = notes_of(kernel, cell)
    assert "on the labels `blended`, whose rows sum to 1.2 (" in text
    assert text.endswith(
        "Build soft labels so that each row sums to 1 (a smoothing `e` spread as "
        "`y * (1 - e) + e / K` over the K classes, blends whose weights add up to 1), or "
        "give one-hot rows and let the loss smooth them "
        "(`CategoricalCrossentropy(label_smoothing=...)`)."
    )


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    # Blends of one-hot rows (mixup): each row still sums to 1.
    mixup = (
        "def blend(x, t):\n"
        "    lam = tf.random.uniform([])\n"
        "    idx = tf.random.shuffle(tf.range(tf.shape(x)[0]))\n"
        "    return lam * x + (1 - lam) * tf.gather(x, idx), "
        "lam * t + (1 - lam) * tf.gather(t, idx)\n"
        "blender = scorer()\n"
        "blender.compile(optimizer='adam', "
        "loss=keras.losses.CategoricalCrossentropy(from_logits=True))\n"
        "blender.fit(pairs.map(blend), epochs=1, verbose=0)\n"
    )
    assert notes_of(kernel, mixup) == []
    # Smoothing spread over the classes, and the loss's own label_smoothing.
    spread = "spread_y = onehot * (1 - 0.2) + 0.2 / levels\n"
    own = (
        "smoother = scorer()\n"
        "smoother.compile(optimizer='adam', loss=keras.losses.CategoricalCrossentropy("
        "from_logits=True, label_smoothing=0.2))\n"
        "smoother.fit(feats, onehot, epochs=1, verbose=0)\n"
        "smoother.fit(feats, spread_y, epochs=1, verbose=0)\n"
    )
    assert notes_of(kernel, spread + own) == []
    # Multi-label soft targets under a binary cross-entropy: rows may sum to anything.
    tags = (
        "tag_y = np.clip(onehot + onehot[::-1] * 0.5 + 0.1, 0, 1).astype('float32')\n"
        "tagger = keras.Sequential([keras.Input((5,)), keras.layers.Dense(levels, "
        "activation='sigmoid')])\n"
        "tagger.compile(optimizer='adam', loss='binary_crossentropy')\n"
        "tagger.fit(feats, tag_y, epochs=1, verbose=0)\n"
    )
    assert notes_of(kernel, tags) == []
