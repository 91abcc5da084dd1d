"""Repeated passes of a model with random layers that came out identical, a
between-bounds test joined with the wrong logical operator, and a variance used as a
standard deviation or the reverse (issue #25, ``symptoms/repeated_draws.py``,
``symptoms/range_operators.py`` and ``symptoms/spread_statistics.py``).

A classifier with GaussianNoise sampled with ``predict`` in a comprehension, and a
Dropout network sampled by a loop that appends plain calls, are told with the fix that
calls the model with ``training=True``; each fix, applied, gives passes that differ and
no note. A model without random layers, passes over different inputs and passes already
in training mode stay silent. ``(x >= low) | (x <= high)`` (names and reversed operands),
``np.logical_and(t < low, t > high)`` are told with the other operator; each fix gives
the count computed by hand. Correct inside/outside tests and joins of two different
values stay silent. A standard deviation's name given ``exp(log-variance)`` or ``var``
(at the top level or in a loss), a variance's name given ``std``, and a normal interval of
``z`` variances (the log-variance read from the learner's own ``sqrt(exp(...))`` of it
earlier) are told with the converted value; each fix gives the right spread. Correct
conversions and values nothing says are log-variances stay silent."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

MODELS = """keras.utils.set_random_seed(21)
gen = np.random.default_rng(21)
feats = gen.normal(size=(64, 6)).astype("float32")
clf = keras.Sequential([
    keras.Input((6,)),
    keras.layers.Dense(16, activation="relu"),
    keras.layers.GaussianNoise(0.3),
    keras.layers.Dense(3, activation="softmax"),
])
net = keras.Sequential([
    keras.Input((6,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dropout(0.25),
    keras.layers.Dense(1),
])
plain = keras.Sequential([keras.Input((6,)), keras.layers.Dense(2)])
batch_x = feats[:16]
"""


def notes_about(code: str, kernel: KernelSession, word: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if word in n["text"]]


def test_predict_in_a_sampling_comprehension(kernel: KernelSession) -> None:
    run(kernel, MODELS)
    cell = "draws = np.array([clf.predict(feats, verbose=0) for _ in range(20)])"
    [text] = notes_about(cell, kernel, "identical")
    assert text.startswith(
        "`draws` holds 20 passes of `clf` over the same inputs (range(20), line 1 of this "
        "cell), and all 20 are identical"
    )
    assert "GaussianNoise" in text and "`clf.predict` runs the model in inference mode" in text
    fix = fix_in(text)
    assert fix == "draws = np.array([clf(feats, training=True).numpy() for _ in range(20)])"
    assert notes_about(fix, kernel, "identical") == []
    assert value_of(kernel, "bool(draws.std(axis=0).mean() > 1e-4)") is True
    assert value_of(kernel, "list(draws.shape)") == [20, 64, 3]


def test_plain_calls_appended_in_a_loop(kernel: KernelSession) -> None:
    run(kernel, MODELS)
    cell = (
        "samples = []\n"
        "for k in range(8):\n"
        "    samples.append(net(batch_x))\n"
        "stacked = tf.stack(samples)\n"
        "spread = tf.math.reduce_std(stacked, axis=0)"
    )
    [text] = notes_about(cell, kernel, "identical")
    assert "`net(batch_x)` without `training=True`" in text and "Dropout" in text
    fix = fix_in(text)
    assert fix == "samples.append(net(batch_x, training=True))"
    fixed = cell.replace("samples.append(net(batch_x))", fix)
    assert notes_about(fixed, kernel, "identical") == []
    assert value_of(kernel, "float(tf.reduce_max(spread)) > 0") is True


def test_identical_passes_stay_silent_when_they_should_be(kernel: KernelSession) -> None:
    run(kernel, MODELS)
    # No random layer: identical passes are what the model gives.
    assert notes_about("reps = np.stack([plain(feats) for _ in range(5)])", kernel, "passes") == []
    # Each pass reads other rows.
    cell = "rows = np.stack([net(feats[i : i + 4]) for i in range(5)])"
    assert notes_about(cell, kernel, "passes") == []
    # Already sampling in training mode.
    cell = "mc = tf.stack([net(batch_x, training=True) for _ in range(6)])"
    assert notes_about(cell, kernel, "passes") == []


BOUNDS = """span_rng = np.random.default_rng(3)
img = span_rng.random((32, 32)).astype("float32")
lo_cut, hi_cut = 0.1, 0.9
temps = span_rng.normal(20.0, 5.0, 400)
t_min, t_max = 10.0, 30.0
ys = tf.constant(span_rng.normal(size=300), tf.float32)
centre = span_rng.normal(size=300).astype("float32") * 0.1
lo_band, hi_band = centre - 1.0, centre + 1.0
"""


def test_inside_test_written_with_or(kernel: KernelSession) -> None:
    run(kernel, BOUNDS)
    cell = "valid = (img >= lo_cut) | (img <= hi_cut)\nshare = valid.mean()"
    [text] = notes_about(cell, kernel, "True everywhere")
    assert text.startswith(
        "`(img >= lo_cut) | (img <= hi_cut)` (line 1 of this cell) asks whether `img` is "
        "above `lo_cut` OR below `hi_cut`"
    )
    assert "(`valid` is True for all 1024 values)" in text
    fix = fix_in(text)
    assert fix == "valid = (img >= lo_cut) & (img <= hi_cut)"
    assert notes_about(f"{fix}\nshare = valid.mean()", kernel, "everywhere") == []
    hand = "float(np.mean([lo_cut <= v <= hi_cut for v in img.ravel()]))"
    assert value_of(kernel, f"abs(float(share) - {hand}) < 1e-6") is True


def test_reversed_operands_and_tensors(kernel: KernelSession) -> None:
    run(kernel, BOUNDS)
    cell = "cover = tf.reduce_mean(tf.cast((lo_band <= ys) | (ys <= hi_band), tf.float32))"
    [text] = notes_about(cell, kernel, "True everywhere")
    fix = fix_in(text)
    assert fix == ("cover = tf.reduce_mean(tf.cast((lo_band <= ys) & (ys <= hi_band), tf.float32))")
    run(kernel, fix)
    hand = "float(np.mean((ys.numpy() >= lo_band) & (ys.numpy() <= hi_band)))"
    assert value_of(kernel, f"abs(float(cover) - {hand}) < 1e-6") is True
    assert value_of(kernel, "float(cover) < 0.9") is True


def test_outside_test_written_with_and(kernel: KernelSession) -> None:
    run(kernel, BOUNDS)
    cell = "odd = np.logical_and(temps < t_min, temps > t_max)\nn_odd = int(odd.sum())"
    [text] = notes_about(cell, kernel, "False everywhere")
    assert "`odd` is False for all 400 values" in text
    fix = fix_in(text)
    assert fix == "odd = np.logical_or(temps < t_min, temps > t_max)"
    run(kernel, f"{fix}\nn_odd = int(odd.sum())")
    hand = "int(sum(1 for t in temps if t < t_min or t > t_max))"
    assert value_of(kernel, f"n_odd == {hand} and n_odd > 0") is True


def test_correct_bound_tests_stay_silent(kernel: KernelSession) -> None:
    run(kernel, BOUNDS)
    for cell in (
        "inside = (img >= lo_cut) & (img <= hi_cut)",
        "out = (temps < t_min) | (temps > t_max)",
        "either = (img > lo_cut) | (temps[:1] > t_min)",
        "both = (img > lo_cut) | (img > hi_cut)",
        "hot = np.logical_or(temps > t_max, temps < t_min)",
    ):
        assert notes_about(cell, kernel, "everywhere") == [], cell


SPREADS = """spread_rng = np.random.default_rng(8)
log_variance_head = tf.constant(spread_rng.normal(-1.0, 0.5, size=(50, 1)), tf.float32)
returns = spread_rng.normal(0.0, 0.3, size=(120, 4))
resid = spread_rng.normal(0.0, 0.5, size=200)
head_out = spread_rng.normal(-1.0, 0.4, size=(80, 2))
forecast = head_out[:, 0]
other_out = spread_rng.normal(-1.0, 0.4, size=(80, 2))
"""


def test_standard_deviation_named_values_holding_variances(kernel: KernelSession) -> None:
    run(kernel, SPREADS)
    [text] = notes_about("noise_sd = tf.exp(log_variance_head)", kernel, "named as a")
    assert text.startswith(
        "`noise_sd` is named as a standard deviation, but `tf.exp(log_variance_head)` "
        "(line 1 of this cell) is a variance"
    )
    fix = fix_in(text)
    assert fix == "noise_sd = tf.sqrt(tf.exp(log_variance_head))"
    assert notes_about(fix, kernel, "named as a") == []
    expected = "tf.exp(0.5 * log_variance_head)"
    assert value_of(kernel, f"float(tf.reduce_max(tf.abs(noise_sd - {expected}))) < 1e-5")

    [text] = notes_about("band_std = np.var(returns, axis=0)", kernel, "named as a")
    fix = fix_in(text)
    assert fix == "band_std = np.std(returns, axis=0)"
    run(kernel, fix)
    assert value_of(kernel, "bool(np.allclose(band_std ** 2, returns.var(axis=0)))") is True


def test_variance_named_value_holding_a_std_and_one_inside_a_loss(kernel: KernelSession) -> None:
    run(kernel, SPREADS)
    [text] = notes_about("resid_var = resid.std()", kernel, "named as a")
    assert "is named as a variance, but `resid.std()`" in text
    fix = fix_in(text)
    assert fix == "resid_var = resid.var()"
    run(kernel, fix)
    assert value_of(kernel, "abs(resid_var - float(np.mean((resid - resid.mean()) ** 2)))") < 1e-9
    cell = (
        "def heteroscedastic_nll(y, mu, logvar):\n"
        "    sigma = tf.exp(logvar)\n"
        "    return tf.reduce_mean(tf.math.log(sigma) + 0.5 * tf.square((y - mu) / sigma))\n"
    )
    [text] = notes_about(cell, kernel, "named as a")
    fix = fix_in(text)
    assert fix == "sigma = tf.sqrt(tf.exp(logvar))"
    run(kernel, cell.replace("sigma = tf.exp(logvar)", fix))
    check = (
        "float(heteroscedastic_nll(tf.constant([1.0]), tf.constant([0.0]), "
        "tf.constant([np.log(4.0)], tf.float32)))"
    )
    # sigma = 2: log 2 + 0.5 * (1 / 2) ** 2
    assert abs(value_of(kernel, check) - (np.log(2.0) + 0.125)) < 1e-5


def test_interval_of_variances_read_as_the_learner_wrote_the_sigma(kernel: KernelSession) -> None:
    run(kernel, SPREADS)
    run(kernel, "head_sigma = np.sqrt(np.exp(head_out[:, 1]))")
    cell = "upper_ci = forecast + 2.576 * np.exp(head_out[:, 1])"
    [text] = notes_about(cell, kernel, "half-width")
    assert text.startswith(
        "`2.576 * np.exp(head_out[:, 1])` (line 1 of this cell) is the half-width of a "
        "normal interval"
    )
    fix = fix_in(text)
    assert fix == "upper_ci = forecast + 2.576 * np.sqrt(np.exp(head_out[:, 1]))"
    assert notes_about(fix, kernel, "half-width") == []
    assert value_of(kernel, "bool(np.allclose(upper_ci, forecast + 2.576 * head_sigma))") is True
    [text] = notes_about("lo_band = forecast - 1.96 * returns.var()", kernel, "half-width")
    assert fix_in(text) == "lo_band = forecast - 1.96 * returns.std()"


def test_spread_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SPREADS)
    for cell in (
        "sigma_a = np.exp(0.5 * other_out[:, 1])",
        "sigma_b = tf.sqrt(tf.exp(log_variance_head))",
        "var_c = np.exp(other_out[:, 1])",
        "log_var_d = np.log(returns.var(axis=0))",
        "lo_e = forecast - 1.96 * sigma_a",
        # Nothing says what exp(other_out[:, 1]) holds: no reading, no note.
        "hi_f = other_out[:, 0] + 1.96 * np.exp(other_out[:, 1])",
        "hi_g = forecast + 1.96 * resid.std()",
        "resid_std = np.sqrt(resid.var())",
    ):
        assert notes_about(cell, kernel, "named as a") == [], cell
        assert notes_about(cell, kernel, "half-width") == [], cell
