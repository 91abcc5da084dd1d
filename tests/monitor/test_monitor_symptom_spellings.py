"""Silent-bug checks that read their kind in more than one spelling (issue #25: mistakes of
a studied set stayed silent although a check of their kind existed, because its trigger read
one API or one place). Cells written here, with other names, APIs and data than the studied
ones: each check is shown on two variants, each printed fix is run in the kernel and makes
the result right, and a correct look-alike stays silent.

- ``keras.metrics.Accuracy`` fed ``tf.sigmoid(...)`` or a selection of probabilities
  (``np.take(p.numpy(), idx)``) (``symptoms/exact_accuracy.py``);
- ``np.argsort(err)[:k]`` / ``tf.argsort(dist)[:k]`` printed as the most anomalous or the
  outliers (``symptoms/ranking_direction.py``);
- a temperature that multiplies the scores, in a function and in a method
  (``symptoms/temperature_sampling.py``);
- ``model(x, training=True)`` at evaluation with random augmentation layers, nested in a
  Sequential or in a functional model (``symptoms/training_mode.py``);
- a held-out split scaled by its own statistics, written inline (NumPy) or computed in an
  earlier cell (TensorFlow) (``symptoms/whole_data_statistics.py``);
- a sum reset inside the loop it should span: gradient accumulation, a running total
  (``symptoms/epoch_accumulators.py``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """import numpy as np
import tensorflow as tf
import keras
rng = np.random.default_rng(3)
"""
KERNEL = KernelSetup(after_load=SETUP)


def notes_of(kernel: KernelSession, cell: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, cell))
    return [note["text"] for note in report["notes"]]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def printed(kernel: KernelSession, code: str) -> str:
    return run(kernel, code).stdout.strip()


# ------------------------------------------------------------------ exact accuracy
ACCURACY_DATA = """feats = rng.normal(size=(120, 4)).astype("float32")
flags = (feats[:, 0] > 0).astype("float32")
critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
kernel_w = np.array([[3.0], [0.0], [0.0], [0.0]], "float32")
critic.layers[0].set_weights([kernel_w, np.zeros(1, "float32")])
keep = feats[:, 1] > 0
"""


def test_accuracy_fed_a_sigmoid_call(kernel: KernelSession) -> None:
    run(kernel, ACCURACY_DATA)
    cell = (
        "hit_rate = keras.metrics.Accuracy()\n"
        "hit_rate.update_state(flags[:, None], tf.sigmoid(critic(feats)))\n"
    )
    texts = [t for t in notes_of(kernel, cell) if "keras.metrics.Accuracy" in t]
    assert len(texts) == 1, texts
    assert "`tf.sigmoid` gives probabilities strictly between 0 and 1" in texts[0]
    fix = re.findall(r"`([^`]+)`", texts[0].split(" use ", 1)[1])[0]
    assert fix == "hit_rate = keras.metrics.BinaryAccuracy(threshold=0.5)"
    run(kernel, cell.replace("hit_rate = keras.metrics.Accuracy()", fix))
    assert printed(kernel, "print(float(hit_rate.result()) > 0.9)") == "True"


def test_accuracy_fed_a_selection_of_probabilities(kernel: KernelSession) -> None:
    run(kernel, ACCURACY_DATA)
    run(kernel, "p_one = tf.sigmoid(critic(feats))[:, 0]")
    cell = (
        "ok_rate = keras.metrics.Accuracy()\n"
        "ok_rate.update_state(flags[keep], np.take(p_one.numpy(), np.flatnonzero(keep)))\n"
    )
    texts = [t for t in notes_of(kernel, cell) if "keras.metrics.Accuracy" in t]
    assert len(texts) == 1, texts
    assert "`p_one` holds" in texts[0], texts[0]
    fix = re.findall(r"`([^`]+)`", texts[0].split(" use ", 1)[1])[0]
    run(kernel, cell.replace("ok_rate = keras.metrics.Accuracy()", fix))
    assert printed(kernel, "print(float(ok_rate.result()) > 0.9)") == "True"


def test_accuracy_fed_thresholded_predictions_is_silent(kernel: KernelSession) -> None:
    run(kernel, ACCURACY_DATA)
    cell = (
        "p_one = tf.sigmoid(critic(feats))[:, 0]\n"
        "ok_rate = keras.metrics.Accuracy()\n"
        "ok_rate.update_state(tf.boolean_mask(flags, keep), "
        "tf.boolean_mask(tf.cast(p_one > 0.5, tf.float32), keep))\n"
    )
    assert not [t for t in notes_of(kernel, cell) if "keras.metrics.Accuracy" in t]


# --------------------------------------------------------------------- ranking ends
RANKING_DATA = """recon_loss = rng.random(50)
recon_loss[[3, 17, 41]] += 5.0
dist_to_centroid = tf.constant(rng.random(40))
dist_to_centroid = tf.tensor_scatter_nd_update(dist_to_centroid, [[7], [21]], [9.0, 8.0])
"""


def ranking_notes(kernel: KernelSession, cell: str) -> list[str]:
    return [t for t in notes_of(kernel, cell) if "end of the ranking" in t]


def test_argsort_head_printed_as_most_anomalous(kernel: KernelSession) -> None:
    run(kernel, RANKING_DATA)
    cell = 'top5 = np.argsort(recon_loss)[:5]\nprint("five most anomalous windows:", top5)\n'
    [text] = ranking_notes(kernel, cell)
    assert 'the printed label says "anomalous", which means the largest ones' in text
    fix = last_code(text)
    assert fix == "top5 = np.argsort(-recon_loss)[:5]"
    run(kernel, fix)
    assert printed(kernel, "print(sorted(top5[:3].tolist()))") == "[3, 17, 41]"


def test_tf_argsort_head_printed_as_outliers(kernel: KernelSession) -> None:
    run(kernel, RANKING_DATA)
    cell = (
        "flagged = tf.argsort(dist_to_centroid)[:2].numpy()\n"
        'print("outliers by distance:", flagged)\n'
    )
    [text] = ranking_notes(kernel, cell)
    fix = last_code(text)
    assert fix == "flagged = tf.argsort(-dist_to_centroid)[:2].numpy()"
    run(kernel, fix)
    assert printed(kernel, "print(sorted(flagged.tolist()))") == "[7, 21]"


def test_descending_anomalies_and_best_reconstructions_are_silent(kernel: KernelSession) -> None:
    run(kernel, RANKING_DATA)
    cell = (
        "top5 = np.argsort(recon_loss)[::-1][:5]\n"
        'print("five most anomalous windows:", top5)\n'
        "picked = np.argsort(recon_loss)[:5]\n"
        'print("best reconstructed windows:", picked)\n'
        "closest = recon_loss.reshape(10, 5).argmin(axis=1)\n"
        'print("top-1 hits:", np.mean(closest == 0))\n'
    )
    assert ranking_notes(kernel, cell) == []


# --------------------------------------------------------------- temperature product
def test_temperature_multiplying_scores_in_a_function(kernel: KernelSession) -> None:
    run(kernel, "vocab_scores = tf.constant([[2.0, 1.0, 0.1, -1.0]])")
    cell = (
        "def draw(scores, temp=0.5):\n"
        "    sharpened = scores * temp\n"
        "    return tf.nn.softmax(sharpened)\n"
        "spread = draw(vocab_scores)\n"
    )
    [text] = [t for t in notes_of(kernel, cell) if "temperature" in t]
    assert text.startswith("`scores * temp` (line 2 of this cell) multiplies the scores")
    fix = last_code(text)
    assert fix == "scores / temp"
    run(kernel, cell.replace("scores * temp", fix))
    # A temperature below 1 sharpens: the top class gets more than at temperature 1.
    check = "print(float(spread[0, 0]) > float(tf.nn.softmax(vocab_scores)[0, 0]))"
    assert printed(kernel, check) == "True"


def test_temperature_multiplying_scores_in_a_method(kernel: KernelSession) -> None:
    run(kernel, "vocab_scores = tf.constant([[2.0, 1.0, 0.1, -1.0]])")
    cell = (
        "class Sampler:\n"
        "    def __init__(self, temperature):\n"
        "        self.temperature = temperature\n"
        "    def probs(self, logits):\n"
        "        return tf.nn.softmax(self.temperature * logits)\n"
        "flat = Sampler(3.0).probs(vocab_scores)\n"
    )
    [text] = [t for t in notes_of(kernel, cell) if "temperature" in t]
    fix = last_code(text)
    assert fix == "logits / self.temperature"
    run(kernel, cell.replace("self.temperature * logits", fix))
    check = "print(float(flat[0, 0]) < float(tf.nn.softmax(vocab_scores)[0, 0]))"
    assert printed(kernel, check) == "True"


def test_inverse_temperature_and_temporary_products_are_silent(kernel: KernelSession) -> None:
    cell = (
        "inv_temp = 1.5\n"
        "sharp = tf.nn.softmax(tf.constant([[1.0, 2.0]]) * inv_temp)\n"
        "temp = tf.constant([[0.5, 1.5]])\n"
        "scale = 2.0\n"
        "weights = tf.nn.softmax(temp * scale)\n"
    )
    assert not [t for t in notes_of(kernel, cell) if "temperature" in t]


# -------------------------------------------------------- augmentation at evaluation
AUGMENT_DATA = """pics = rng.random((64, 12, 12, 3)).astype("float32")
kinds = rng.integers(0, 3, size=64)
jitter = keras.Sequential(
    [keras.layers.RandomZoom(0.3), keras.layers.RandomTranslation(0.2, 0.2)]
)
head = [keras.layers.Flatten(), keras.layers.Dense(3)]
net = keras.Sequential([keras.Input((12, 12, 3)), jitter, *head])
"""


def mode_notes(kernel: KernelSession, cell: str) -> list[str]:
    return [t for t in notes_of(kernel, cell) if "evaluated in training mode" in t]


def test_nested_augmentation_called_with_training_true(kernel: KernelSession) -> None:
    run(kernel, AUGMENT_DATA)
    cell = "scores = net(pics, training=True)\n"
    [text] = mode_notes(kernel, cell)
    assert "`net` holds random augmentation layers" in text, text
    fix = last_code(text)
    assert fix == "scores = net(pics, training=False)"
    run(kernel, fix)
    check = "print(bool(np.allclose(scores, net(pics, training=False))))"
    assert printed(kernel, check) == "True"


def test_functional_model_with_augmentation_called_with_training_true(
    kernel: KernelSession,
) -> None:
    run(kernel, AUGMENT_DATA)
    run(
        kernel,
        "inp = keras.Input((12, 12, 3))\n"
        "h = keras.layers.RandomBrightness(0.5, value_range=(0, 1))(inp)\n"
        "func_net = keras.Model(inp, keras.layers.Dense(3)(keras.layers.Flatten()(h)))\n",
    )
    [text] = mode_notes(kernel, "val_logits = func_net(pics[:10], training=True)\n")
    fix = last_code(text)
    assert fix == "val_logits = func_net(pics[:10], training=False)"
    run(kernel, fix)
    check = "print(bool(np.allclose(val_logits, func_net(pics[:10], training=False))))"
    assert printed(kernel, check) == "True"


def test_augmentation_in_inference_mode_or_without_it_is_silent(kernel: KernelSession) -> None:
    run(kernel, AUGMENT_DATA)
    assert mode_notes(kernel, "scores = net(pics, training=False)\n") == []
    plain = "plain = keras.Sequential([keras.Input((12, 12, 3)), keras.layers.Flatten()])\n"
    assert mode_notes(kernel, plain + "out = plain(pics, training=True)\n") == []
    # The augmentation pipeline alone, run in training mode to look at augmented images.
    assert mode_notes(kernel, "shown = jitter(pics[:8], training=True)\n") == []


# ---------------------------------------------------- held-out split's own statistics
STATS_DATA = """feat_tr = rng.normal(2.0, 3.0, size=(300, 4))
feat_te = rng.normal(2.5, 4.0, size=(80, 4))
train_series = tf.constant(rng.normal(4, 1, size=(200, 3)), tf.float32)
val_series = tf.constant(rng.normal(5, 2, size=(60, 3)), tf.float32)
"""


def own_notes(kernel: KernelSession, cell: str) -> list[str]:
    return [t for t in notes_of(kernel, cell) if "with its own statistics" in t]


def test_test_split_standardised_inline_with_its_own_numbers(kernel: KernelSession) -> None:
    run(kernel, STATS_DATA)
    cell = (
        "mu, sd = feat_tr.mean(axis=0), feat_tr.std(axis=0)\n"
        "feat_tr_n = (feat_tr - mu) / sd\n"
        "feat_te_n = (feat_te - np.mean(feat_te, axis=0)) / np.std(feat_te, axis=0)\n"
    )
    [text] = own_notes(kernel, cell)
    assert "the training split `feat_tr`" in text
    fix = last_code(text)
    assert fix == "feat_te_n = (feat_te - mu) / sd"
    run(kernel, fix)
    check = "print(bool(np.allclose(feat_te_n, (feat_te - feat_tr.mean(0)) / feat_tr.std(0))))"
    assert printed(kernel, check) == "True"


def test_validation_split_scaled_by_statistics_of_an_earlier_cell(kernel: KernelSession) -> None:
    run(kernel, STATS_DATA)
    run(kernel, "val_lo = tf.reduce_min(val_series, axis=0)\nval_hi = tf.reduce_max(val_series, 0)")
    [text] = own_notes(kernel, "val_scaled = (val_series - val_lo) / (val_hi - val_lo)\n")
    assert "(`val_lo`, `val_hi`)" in text, text
    fix = last_code(text)
    run(kernel, fix)
    check = (
        "lo, hi = tf.reduce_min(train_series, 0), tf.reduce_max(train_series, 0)\n"
        "print(bool(np.allclose(val_scaled, (val_series - lo) / (hi - lo))))"
    )
    assert printed(kernel, check) == "True"


def test_own_statistics_fixed_with_the_names_holding_the_training_ones(
    kernel: KernelSession,
) -> None:
    # The statistics come from the learner's helper and live in names: the fix reuses the
    # names that hold the training split's, not a recomputation beside them.
    run(kernel, STATS_DATA)
    run(
        kernel,
        "def centre_and_spread(block):\n"
        "    return block.mean(axis=0), block.std(axis=0) + 1e-9\n"
        "loc_tr, spread_tr = centre_and_spread(feat_tr)\n"
        "feat_tr_n = (feat_tr - loc_tr) / spread_tr\n",
    )
    cell = (
        "loc_te, spread_te = centre_and_spread(feat_te)\n"
        "feat_te_n = (feat_te - loc_te) / spread_te\n"
    )
    [text] = own_notes(kernel, cell)
    assert "detector" not in text
    assert "a shift is scaled away" in text
    fix = last_code(text)
    assert fix == "feat_te_n = (feat_te - loc_tr) / spread_tr"
    run(kernel, fix)
    check = "print(bool(np.allclose(feat_te_n, (feat_te - feat_tr.mean(0)) / feat_tr.std(0))))"
    assert printed(kernel, check) == "True"


def test_training_statistics_row_centring_and_r2_are_silent(kernel: KernelSession) -> None:
    run(kernel, STATS_DATA)
    cell = (
        "mu, sd = feat_tr.mean(axis=0), feat_tr.std(axis=0)\n"
        "feat_te_n = (feat_te - mu) / sd\n"
        "rows_te = feat_te - feat_te.mean(axis=1, keepdims=True)\n"
        "target_te = feat_te[:, 0]\n"
        "target_tr = feat_tr[:, 0]\n"
        "ss_tot = np.sum((target_te - target_te.mean()) ** 2)\n"
    )
    assert own_notes(kernel, cell) == []


# ------------------------------------------------- a sum reset inside its own loop
ACCUMULATE_DATA = """xs = rng.normal(size=(64, 3)).astype("float32")
ys = (xs @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")
reg = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
sgd = keras.optimizers.SGD(0.05)
mse = keras.losses.MeanSquaredError()
"""


def reset_notes(kernel: KernelSession, cell: str) -> list[str]:
    return [t for t in notes_of(kernel, cell) if "A sum started again at every pass" in t]


def test_gradient_accumulator_reset_inside_the_micro_batch_loop(kernel: KernelSession) -> None:
    run(kernel, ACCUMULATE_DATA)
    start = 'summed = [np.zeros(v.shape, "float32") for v in reg.trainable_variables]'
    loop = "for chunk_x, chunk_y in zip(np.split(xs, 4), np.split(ys, 4)):"
    body = (
        "    with tf.GradientTape() as tape:\n"
        "        l = mse(chunk_y, reg(chunk_x))\n"
        "    parts = tape.gradient(l, reg.trainable_variables)\n"
        "    summed = [s + p / 4 for s, p in zip(summed, parts)]\n"
        "step_norm = float(tf.linalg.global_norm(summed))\n"
    )
    cell = f"{loop}\n    {start}\n{body}"
    [text] = reset_notes(kernel, cell)
    assert f"move `{start}` to the line before `{loop}`" in text, text
    fixed = f"{start}\n{loop}\n{body}"
    assert reset_notes(kernel, fixed) == []
    check = (
        "with tf.GradientTape() as tape:\n"
        "    whole = tape.gradient(mse(ys, reg(xs)), reg.trainable_variables)\n"
        "print(all(np.allclose(a, b, atol=1e-5) for a, b in zip(summed, whole)))"
    )
    assert printed(kernel, check) == "True"


def test_running_total_reset_at_every_row(kernel: KernelSession) -> None:
    run(kernel, ACCUMULATE_DATA)
    cell = (
        "seen = 0\n"
        "for row in xs:\n"
        "    sq_total = 0.0\n"
        "    sq_total += float(np.sum(row ** 2))\n"
        "    seen += 1\n"
        "mean_sq = sq_total / seen\n"
    )
    [text] = reset_notes(kernel, cell)
    assert "move `sq_total = 0.0` to the line before `for row in xs:`" in text
    fixed = cell.replace("    sq_total = 0.0\n", "").replace(
        "seen = 0\n", "seen = 0\nsq_total = 0.0\n"
    )
    run(kernel, fixed)
    check = "print(bool(np.isclose(mean_sq, np.mean(np.sum(xs ** 2, axis=1)), rtol=1e-4)))"
    assert printed(kernel, check) == "True"


def test_epoch_sum_reset_in_the_epoch_loop_is_silent(kernel: KernelSession) -> None:
    run(kernel, ACCUMULATE_DATA)
    cell = (
        "for epoch in range(2):\n"
        "    ep_loss = 0.0\n"
        "    for bx, by in zip(np.split(xs, 4), np.split(ys, 4)):\n"
        "        ep_loss += float(mse(by, reg(bx)))\n"
        "last_epoch = ep_loss / 4\n"
    )
    assert reset_notes(kernel, cell) == []
