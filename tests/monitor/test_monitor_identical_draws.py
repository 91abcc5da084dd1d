"""Repeated random passes that all came out the same (issue #25,
``symptoms/identical_draws.py`` through ``symptoms/repeated_draws.py``): a helper that
makes its NumPy generator from a fixed seed on every call, a loop that sets TensorFlow's
global seed in every pass, and a bootstrap drawn as a permutation under a mean. Each is
told with its cause and its fix in the learner's names; each fix, applied, gives passes
that differ and no note. Look-alikes stay silent: a reproducibility check that compares
re-seeded draws for equality, a generator made once, a bootstrap with replacement."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

HELPER = """def sample_noise(k):
    rng = np.random.default_rng(11)
    return rng.normal(size=k)


draws = np.array([sample_noise(4) for _ in range(50)])
noise_sd = float(draws.std(axis=0).mean())
"""
SEEDED_LOOP = """vals = []
for _ in range(40):
    tf.random.set_seed(3)
    vals.append(float(tf.random.normal(())))
spread = float(np.std(vals))
"""
PERMUTED = """rng_b = np.random.default_rng(0)
hits = (rng_b.uniform(size=80) > 0.3).astype("float32")
boot = []
for _ in range(100):
    pick = rng_b.permutation(80)
    boot.append(float(hits[pick].mean()))
low, high = np.percentile(boot, [5, 95])
"""


def notes_about(code: str, kernel: KernelSession, word: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if word in n["text"]]


def sections_of(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [(n.get("course") or {}).get("section") for n in report["notes"]]


def test_generator_made_from_a_seed_in_each_call(kernel: KernelSession) -> None:
    [text] = notes_about(HELPER, kernel, "identical")
    assert text.startswith(
        "`draws` holds 50 random passes (range(50), line 6 of this cell), and all 50 are identical"
    ), text
    assert (
        "`sample_noise` makes a new generator from a fixed seed on every call "
        "(`rng = np.random.default_rng(11)` in `sample_noise`)"
    ) in text
    assert value_of(kernel, "noise_sd < 1e-12") is True
    assert "Fix: move `rng = np.random.default_rng(11)` out of `sample_noise`" in text
    fixed = HELPER.replace(
        "def sample_noise(k):\n    rng = np.random.default_rng(11)\n",
        "rng = np.random.default_rng(11)\n\n\ndef sample_noise(k):\n",
    )
    assert notes_about(fixed, kernel, "identical") == []
    assert value_of(kernel, "noise_sd > 0.5") is True
    assert "reproducibility" in sections_of(HELPER, kernel)


def test_global_seed_set_in_every_pass(kernel: KernelSession) -> None:
    [text] = notes_about(SEEDED_LOOP, kernel, "identical")
    assert "`vals` holds 40 random passes (range(40), line 4 of this cell)" in text, text
    assert (
        "the loop sets the global seed again in every pass (`tf.random.set_seed(3)`, line 3 "
        "of this cell)"
    ) in text
    assert value_of(kernel, "spread") == 0.0
    assert "Fix: move `tf.random.set_seed(3)` above the loop, so it runs once." in text
    fixed = "tf.random.set_seed(3)\n" + SEEDED_LOOP.replace("    tf.random.set_seed(3)\n", "")
    assert notes_about(fixed, kernel, "identical") == []
    assert value_of(kernel, "spread > 0.5") is True


def test_bootstrap_drawn_as_a_permutation(kernel: KernelSession) -> None:
    [text] = notes_about(PERMUTED, kernel, "identical")
    assert "`boot` holds 100 random passes (range(100), line 6 of this cell)" in text, text
    assert "`pick = rng_b.permutation(80)` draws a permutation" in text
    assert value_of(kernel, "float(high - low)") == 0.0
    fix = fix_in(text)
    assert fix == "pick = rng_b.integers(0, 80, size=80)"
    fixed = PERMUTED.replace("pick = rng_b.permutation(80)", fix)
    assert notes_about(fixed, kernel, "identical") == []
    assert value_of(kernel, "float(high - low) > 0.05") is True
    # TensorFlow's spelling: a shuffled range under reduce_mean.
    tf_cell = """flags = tf.constant(hits)
tf_boot = []
for _ in range(30):
    order = tf.random.shuffle(tf.range(80))
    tf_boot.append(float(tf.reduce_mean(tf.gather(flags, order))))
tf_low, tf_high = np.percentile(tf_boot, [5, 95])
"""
    [tf_text] = notes_about(tf_cell, kernel, "identical")
    tf_fix = fix_in(tf_text)
    assert tf_fix == "order = tf.random.uniform((80,), minval=0, maxval=80, dtype=tf.int32)"
    assert (
        notes_about(
            tf_cell.replace("order = tf.random.shuffle(tf.range(80))", tf_fix), kernel, "identical"
        )
        == []
    )
    assert value_of(kernel, "float(tf_high - tf_low) > 0.05") is True


def test_reproducibility_checks_stay_silent(kernel: KernelSession) -> None:
    # Re-seeded draws compared for equality: identical on purpose.
    check = """def seeded_draw():
    keras.utils.set_random_seed(5)
    return np.asarray(tf.random.uniform((3,)))


repeats = np.stack([seeded_draw() for _ in range(3)])
reproducible = all(np.array_equal(r, repeats[0]) for r in repeats)
"""
    assert notes_about(check, kernel, "identical") == []
    assert value_of(kernel, "reproducible") is True
    # A generator made once outside the helper: passes differ.
    once = HELPER.replace(
        "def sample_noise(k):\n    rng = np.random.default_rng(11)\n",
        "made_once = np.random.default_rng(11)\n\n\ndef sample_noise(k):\n    rng = made_once\n",
    )
    assert notes_about(once, kernel, "identical") == []


# Two noisy copies of a batch of signals, made by the learner's NumPy helper from one draw.
JITTER = """signals = np.random.default_rng(4).normal(size=(6, 20))


def jitter_pair(batch, scale=0.1):
    eps = np.random.normal(0.0, scale, size=batch.shape)
    return batch * (1 + eps), batch * (1 + eps)


left, right = jitter_pair(signals)
gap = float(np.mean((left - right) ** 2))
"""


def test_two_views_from_one_draw_in_a_helper(kernel: KernelSession) -> None:
    [text] = notes_about(JITTER, kernel, "single random draw")
    assert text.startswith(
        "`left` and `right` hold the same values (all 120 of them equal): `jitter_pair` "
        "returns `batch * (1 + eps), batch * (1 + eps)`, and both read `eps`, a single "
        "random draw (`eps = np.random.normal(0.0, scale, size=batch.shape)`)"
    ), text
    assert value_of(kernel, "gap") == 0.0  # the symptom: a consistency loss of exactly 0
    fix = fix_in(text)
    assert fix == (
        "return batch * (1 + np.random.normal(0.0, scale, size=batch.shape)), "
        "batch * (1 + np.random.normal(0.0, scale, size=batch.shape))"
    )
    fixed = JITTER.replace("    return batch * (1 + eps), batch * (1 + eps)", "    " + fix)
    assert notes_about(fixed, kernel, "single random draw") == []
    assert value_of(kernel, "gap > 1e-4") is True
    assert "reproducibility" in sections_of(JITTER, kernel)


def test_two_views_from_one_draw_in_the_cell(kernel: KernelSession) -> None:
    # TensorFlow, the views written in the cell's own tuple.
    cell = """frames = tf.random.uniform((3, 8, 8))
shake = tf.random.normal(tf.shape(frames), stddev=0.05)
view_a, view_b = frames + shake, frames + shake
agree = float(tf.reduce_mean(tf.square(view_a - view_b)))
"""
    [text] = notes_about(cell, kernel, "single random draw")
    assert "`view_a` and `view_b` hold the same values (all 192 of them equal)" in text, text
    fix = fix_in(text)
    assert fix == (
        "view_a, view_b = frames + tf.random.normal(tf.shape(frames), stddev=0.05), "
        "frames + tf.random.normal(tf.shape(frames), stddev=0.05)"
    )
    fixed = cell.replace("view_a, view_b = frames + shake, frames + shake", fix)
    assert notes_about(fixed, kernel, "single random draw") == []
    assert value_of(kernel, "agree > 1e-5") is True


def test_views_drawn_apart_or_equal_on_purpose_stay_silent(kernel: KernelSession) -> None:
    # Two draws: the views differ.
    apart = """def noisy_views(batch):
    first = batch + tf.random.normal(tf.shape(batch), stddev=0.2)
    second = batch + tf.random.normal(tf.shape(batch), stddev=0.2)
    return first, second


p1, p2 = noisy_views(tf.ones((4, 5)))
"""
    assert notes_about(apart, kernel, "single random draw") == []
    # One draw used with opposite signs (antithetic noise): the two differ on purpose.
    mirrored = """jolt = np.random.normal(size=(4, 5))
plus, minus = 1.0 + jolt, 1.0 - jolt
"""
    assert notes_about(mirrored, kernel, "single random draw") == []
    # The same values with no draw behind them: an input and its copy.
    copies = """base = np.linspace(0.0, 1.0, 12).reshape(3, 4)
kept, spare = base, base.copy()
"""
    assert notes_about(copies, kernel, "single random draw") == []
    # Two different computations of one draw that agree: a comparison, not two views.
    compared = """import tensorflow as tf
inputs = tf.random.normal([5, 3])
weights = tf.random.normal([3, 2])
def plain(a, b):
    return tf.matmul(a, b)
staged = tf.function(plain)
eager_out, staged_out = plain(inputs, weights), staged(inputs, weights)
"""
    assert notes_about(compared, kernel, "single random draw") == []
