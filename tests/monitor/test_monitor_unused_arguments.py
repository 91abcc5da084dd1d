"""An argument passed to the learner's own function or layer that its body never reads
(issue #25, ``symptoms/unused_arguments.py``).

A plain function given an ``axis`` it drops and one given ``training`` it never hands to
the Dropout model it calls are told with the body's line forwarding the keyword; each
fix, applied, gives the intended result and no note. A mask passed by position to a
``tf.function`` and a mask passed to a custom layer's ``call`` are told without code (no
call in the body takes it). Look-alikes stay silent: a body that reads its mask, a mask of
``None``, a Keras layer's ``call`` that leaves ``training`` to Keras, an unused argument
whose name means nothing for the result. Results of `evaluate` (loss, metric) averaged
without an axis are told with the column the target names (`symptoms/evaluation_columns.py`);
the fix gives the mean of that column. An axis, scalar results and tables not filled by
`evaluate` stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """keras.utils.set_random_seed(5)
arg_rng = np.random.default_rng(5)
grid = arg_rng.normal(size=(6, 4))
vals = tf.constant(arg_rng.normal(size=(8, 10)), tf.float32)
keep = tf.constant(arg_rng.random((8, 10)) > 0.3)
seqs = tf.constant(arg_rng.normal(size=(4, 7, 3)), tf.float32)
seq_mask = tf.constant(np.arange(7)[None, :] < np.array([[3], [7], [5], [2]]))
net = keras.Sequential([
    keras.Input((5,)), keras.layers.Dense(8), keras.layers.Dropout(0.5), keras.layers.Dense(1)
])
batch = arg_rng.normal(size=(16, 5)).astype("float32")
"""


def notes_about(code: str, kernel: KernelSession, word: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if word in n["text"]]


def test_axis_dropped_by_the_body_is_forwarded(kernel: KernelSession) -> None:
    run(kernel, DATA)
    definition = "def column_peak(table, axis):\n    return np.max(table)\n"
    run(kernel, definition)
    [text] = notes_about("peaks = column_peak(grid, axis=0)", kernel, "never reads")
    assert text.startswith(
        "`column_peak(grid, axis=0)` (line 1 of this cell) passes `0` as `axis`, but "
        "`column_peak` never reads `axis`"
    )
    fix = fix_in(text)
    assert fix == "return np.max(table, axis=axis)"
    assert "Line 2 of the cell that defines `column_peak`" in text
    run(kernel, definition.replace("return np.max(table)", fix))
    assert notes_about("peaks = column_peak(grid, axis=0)", kernel, "never reads") == []
    assert value_of(kernel, "bool(np.allclose(peaks, grid.max(axis=0)))") is True


def test_training_flag_not_handed_to_a_dropout_model(kernel: KernelSession) -> None:
    run(kernel, DATA)
    definition = "def noisy_score(inputs, training):\n    out = net(inputs)\n    return out\n"
    run(kernel, definition)
    [text] = notes_about("s1 = noisy_score(batch, True)", kernel, "never reads")
    assert "passes `True` as `training`" in text
    fix = fix_in(text)
    assert fix == "out = net(inputs, training=training)"
    run(kernel, definition.replace("out = net(inputs)", fix))
    cell = "s1 = noisy_score(batch, True)\ns2 = noisy_score(batch, True)"
    assert notes_about(cell, kernel, "never reads") == []
    assert value_of(kernel, "bool(np.abs(s1 - s2).max() > 0)") is True


def test_masks_dropped_are_told_without_code(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(
        kernel,
        "@tf.function\n"
        "def masked_average(values, valid):\n"
        "    return tf.reduce_sum(values, axis=1) / tf.cast(tf.shape(values)[1], tf.float32)\n",
    )
    # `valid` is no word of a modifier: no note.
    assert notes_about("avg = masked_average(vals, keep)", kernel, "never reads") == []
    run(
        kernel,
        "@tf.function\n"
        "def masked_average(values, keep_mask):\n"
        "    return tf.reduce_sum(values, axis=1) / tf.cast(tf.shape(values)[1], tf.float32)\n",
    )
    [text] = notes_about("avg = masked_average(vals, keep)", kernel, "never reads")
    assert "passes `keep` as `keep_mask`, but `masked_average` never reads `keep_mask`" in text
    assert "which positions are real" in text and "Fix" not in text
    run(
        kernel,
        "class MeanOverTime(keras.layers.Layer):\n"
        "    def call(self, seq, mask=None):\n"
        "        return tf.reduce_mean(seq, axis=1)\n"
        "pool = MeanOverTime()\n",
    )
    [text] = notes_about("pooled = pool(seqs, mask=seq_mask)", kernel, "never reads")
    assert "`MeanOverTime.call` never reads `mask`" in text


def test_arguments_read_or_meaningless_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(
        kernel,
        "def masked_mean(values, mask):\n"
        "    m = tf.cast(mask, values.dtype)\n"
        "    return tf.reduce_sum(values * m) / tf.reduce_sum(m)\n"
        "def log_step(x, epoch):\n"
        "    return x * 2\n"
        "class Block(keras.layers.Layer):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.drop = keras.layers.Dropout(0.2)\n"
        "    def call(self, x, training=None):\n"
        "        return self.drop(x)\n"
        "def lazy_pool(x, mask=None):\n"
        "    return tf.reduce_mean(x, axis=1)\n"
        "block = Block()\n",
    )
    for cell in (
        "mm = masked_mean(vals, keep)",
        "doubled = log_step(grid, 3)",
        "blocked = block(batch, training=True)",
        "lp = lazy_pool(seqs, mask=None)",
        "lp = lazy_pool(seqs)",
    ):
        assert notes_about(cell, kernel, "never reads") == [], cell


RUNS = """keras.utils.set_random_seed(9)
run_rng = np.random.default_rng(9)
xs = run_rng.normal(size=(120, 4)).astype("float32")
ys = (xs[:, 0] + xs[:, 2] > 0).astype("float32")
yr = (xs @ np.array([1.0, -2.0, 0.5, 0.0], "float32")).astype("float32")
def small(kind):
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation=kind)])
    return m
seed_runs = []
reg_runs = []
bare_runs = []
for seed in range(3):
    c = small("sigmoid")
    c.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    c.fit(xs, ys, epochs=2, verbose=0)
    seed_runs.append(c.evaluate(xs, ys, verbose=0))
    r = small(None)
    r.compile(optimizer="adam", loss="mse", metrics=["mae"])
    r.fit(xs, yr, epochs=2, verbose=0)
    reg_runs.append(r.evaluate(xs, yr, verbose=0))
    b = small(None)
    b.compile(optimizer="adam", loss="mse")
    bare_runs.append(b.evaluate(xs, yr, verbose=0))
pair_grid = [[0.5, 0.7], [0.6, 0.8]]
"""


def test_evaluate_results_averaged_together(kernel: KernelSession) -> None:
    run(kernel, RUNS)
    [text] = notes_about("mean_acc = np.mean(seed_runs)", kernel, "averages every number")
    assert text.startswith(
        "`np.mean(seed_runs)` (line 1 of this cell) averages every number of `seed_runs` "
        "together: it holds 3 results of `evaluate`, each 2 numbers"
    )
    fix = fix_in(text)
    assert fix == "mean_acc = np.mean(np.asarray(seed_runs)[:, 1])"
    assert notes_about(fix, kernel, "averages every number") == []
    hand = "sum(r[1] for r in seed_runs) / 3"
    assert value_of(kernel, f"abs(float(mean_acc) - {hand}) < 1e-9") is True
    assert value_of(kernel, "0.0 <= float(mean_acc) <= 1.0") is True

    [text] = notes_about("avg_loss = tf.reduce_mean(reg_runs)", kernel, "averages every")
    fix = fix_in(text)
    assert fix == "avg_loss = np.mean(np.asarray(reg_runs)[:, 0])"
    run(kernel, fix)
    assert value_of(kernel, "abs(float(avg_loss) - sum(r[0] for r in reg_runs) / 3) < 1e-9")

    [text] = notes_about("print(np.mean(reg_runs))", kernel, "averages every")
    assert "Fix" not in text and "`np.mean(reg_runs, axis=0)` gives one mean" in text


def test_evaluate_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, RUNS)
    for cell in (
        "per_column = np.mean(seed_runs, axis=0)",
        "plain_loss = np.mean(bare_runs)",
        "grid_mean = np.mean(pair_grid)",
    ):
        assert notes_about(cell, kernel, "averages every") == [], cell
