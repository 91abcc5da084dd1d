"""What a learner measures is not what they meant to measure: held-out rows that are
training rows (``symptoms/overlapping_splits.py``). In a real kernel: the note names the
learner's statement and arrays; the printed fix, run as printed, leaves held-out rows the
training data does not have, and the note is gone; correct look-alikes stay silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "import warnings\n"
    "warnings.simplefilter('ignore')\n"
    "def sample_points(count, seed):\n"
    "    gen = np.random.default_rng(seed)\n"
    "    pts = gen.uniform(-1, 1, size=(count, 2)).astype('float32')\n"
    "    return pts, (pts[:, 0] * pts[:, 1] > 0).astype('int32')\n"
    "def shared(a, b):\n"
    "    seen = {r.tobytes() for r in np.asarray(b)}\n"
    "    return int(sum(r.tobytes() in seen for r in np.asarray(a)))\n"
)
SECTION = "keras-validation-data"


def notes_in(kernel: KernelSession, code: str, section: str = SECTION) -> list[str]:
    report = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == section]


def fix_of(text: str) -> str:
    """The last code span of ``text`` (the fix)."""
    return re.findall(r"`([^`]+)`", text)[-1]


def test_validation_generated_with_the_training_seed(kernel: KernelSession) -> None:
    cell = (
        "pts_train, lab_train = sample_points(600, seed=11)\n"
        "pts_valid, lab_valid = sample_points(150, seed=11)\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`pts_valid, lab_valid = sample_points(150, seed=11)` (line 2) leaves `pts_valid` "
        "with all its 150 rows also in `pts_train`: that held-out data is training data."
    ), text
    assert "`sample_points` is given the same seed (11) for both" in text
    fix = fix_of(text)
    assert fix == "pts_valid, lab_valid = sample_points(150, seed=12)"
    assert notes_in(kernel, fix) == []
    assert value_of(kernel, "shared(pts_valid, pts_train)") == 0
    # Look-alikes: other seeds from the start; names of no split.
    assert notes_in(kernel, "pts_test, lab_test = sample_points(100, seed=5)") == []
    assert notes_in(kernel, "pts_a, lab_a = sample_points(100, seed=11)") == []


def test_held_out_rows_drawn_from_a_generator_seeded_alike(kernel: KernelSession) -> None:
    """The seed is the argument of a generator made in the call, not the call's own."""
    run(
        kernel,
        "def simulate_orders(n, gen):\n    return gen.gamma(3.0, size=(n, 4)).astype('float32')\n",
    )
    cell = (
        "orders_train = simulate_orders(500, np.random.RandomState(21))\n"
        "orders_test = simulate_orders(80, np.random.RandomState(21))\n"
    )
    [text] = notes_in(kernel, cell)
    assert "leaves `orders_test` with all its 80 rows also in `orders_train`" in text, text
    assert "`simulate_orders` is given a generator made from the same seed (21) for both" in text
    fix = fix_of(text)
    assert fix == "orders_test = simulate_orders(80, np.random.RandomState(22))"
    assert notes_in(kernel, fix) == []
    assert value_of(kernel, "shared(orders_test, orders_train)") == 0
    # Look-alikes: one generator drawn from twice; generators of two seeds.
    assert (
        notes_in(
            kernel,
            "gen = np.random.RandomState(21)\n"
            "orders_train = simulate_orders(500, gen)\n"
            "orders_test = simulate_orders(80, gen)\n",
        )
        == []
    )
    assert notes_in(kernel, "orders_test = simulate_orders(80, np.random.RandomState(4))") == []


def test_overlapping_slices_of_one_array(kernel: KernelSession) -> None:
    cell = (
        "table = np.random.default_rng(0).normal(size=(500, 3)).astype('float32')\n"
        "X_train = table[:400]\n"
        "X_holdout = table[350:]\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`X_holdout = table[350:]` (line 3) leaves `X_holdout` with 50 of its 150 rows also "
        "in `X_train`"
    ), text
    fix = fix_of(text)
    assert fix == "X_holdout = table[400:]"
    assert notes_in(kernel, fix) == []
    assert value_of(kernel, "shared(X_holdout, X_train)") == 0
    # Look-alike: slices that do not cross.
    assert notes_in(kernel, "X_train = table[:300]\nX_holdout = table[300:]") == []


def test_slices_that_cross_on_data_of_few_distinct_rows(kernel: KernelSession) -> None:
    """Rows of few distinct values repeat by chance, so comparing values proves nothing:
    the slices' ranges, worked out from the cell's own bounds, do."""
    run(kernel, "volumes = np.random.default_rng(5).integers(0, 2, (600, 2, 2)).astype('f4')")
    cell = "n_fit = 480\nvol_train = volumes[:n_fit]\nvol_test = volumes[-n_fit:]\n"
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`vol_test = volumes[-n_fit:]` (line 3) leaves `vol_test` with 360 of its 480 rows "
        "also in `vol_train`"
    ), text
    assert "`vol_train` takes the rows of `volumes` up to 480, and `vol_test` starts at 120" in (
        text
    )
    fix = fix_of(text)
    assert fix == "vol_test = volumes[n_fit:]"
    assert notes_in(kernel, fix) == []
    assert value_of(kernel, "len(vol_test)") == 120
    # Look-alike: the cut the fix writes, from the start.
    assert notes_in(kernel, "vol_train = volumes[:n_fit]\nvol_test = volumes[n_fit:]\n") == []


def test_a_held_out_head_that_crosses_a_training_tail(kernel: KernelSession) -> None:
    run(kernel, "frames = np.random.default_rng(6).integers(0, 3, (400, 5)).astype('int8')")
    cell = "frames_tr, frames_val = frames[len(frames) // 4:], frames[:int(0.5 * len(frames))]\n"
    [text] = notes_in(kernel, cell)
    assert "leaves `frames_val` with 100 of its 200 rows also in `frames_tr`" in text, text
    assert "`frames_tr` takes the rows of `frames` from 100, and `frames_val` ends at 200" in (text)
    fix = fix_of(text)
    assert fix == "frames_val = frames[:len(frames) // 4]"
    assert notes_in(kernel, fix) == []
    assert value_of(kernel, "len(frames_val) + len(frames_tr)") == 400
    # Look-alike: a few rows of context shared at the cut (windows over a series).
    assert notes_in(kernel, "frames_tr = frames[:300]\nframes_val = frames[290:400]\n") == []


def test_permuted_indices_that_overlap_and_training_grown_with_test_rows(
    kernel: KernelSession,
) -> None:
    cell = (
        "feats = np.random.default_rng(3).normal(size=(300, 5))\n"
        "targets = feats.sum(axis=1)\n"
        "order = np.random.default_rng(4).permutation(300)\n"
        "f_tr, t_tr = feats[order[:240]], targets[order[:240]]\n"
        "f_te, t_te = feats[order[200:]], targets[order[200:]]\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`f_te, t_te = feats[order[200:]], targets[order[200:]]` (line 5) leaves `f_te` "
        "with 40 of its 100 rows also in `f_tr`"
    ), text
    fix = fix_of(text)
    assert fix == (
        "seen = {r.tobytes() for r in np.asarray(f_tr)}; keep = np.array([r.tobytes() "
        "not in seen for r in np.asarray(f_te)]); f_te, t_te = f_te[keep], t_te[keep]"
    )
    assert notes_in(kernel, fix) == []
    assert value_of(kernel, "[shared(f_te, f_tr), len(f_te), len(t_te)]") == [0, 60, 60]
    assert value_of(kernel, "bool(np.allclose(f_te.sum(axis=1), t_te))") is True
    # Training rows grown with the test rows: told from the training side.
    [grown] = notes_in(kernel, "f_tr = np.concatenate([f_tr, f_te])")
    assert "leaves `f_te` with all its 60 rows also in `f_tr`" in grown
    # Look-alike: a split made properly.
    proper = cell.replace("order[200:]", "order[240:]")
    assert notes_in(kernel, proper) == []


def test_held_out_positions_from_a_second_permutation(kernel: KernelSession) -> None:
    """The held-out positions come from a second, independent shuffle of the same rows:
    named as the cause, fixed by taking them from the training permutation (not by
    dropping the shared rows, which would leave few held-out rows)."""
    cell = (
        "gen = np.random.default_rng(8)\n"
        "grid = gen.normal(size=(200, 4)).astype('float32')\n"
        "score = grid @ np.arange(4.0, dtype='float32')\n"
        "shuffled = gen.permutation(len(grid))\n"
        "grid_train, score_train = grid[shuffled[:150]], score[shuffled[:150]]\n"
        "picks = gen.permutation(len(grid))[:40]\n"
        "grid_val, score_val = grid[picks], score[picks]\n"
    )
    [text] = notes_in(kernel, cell)
    assert "`picks` comes from a second, independent draw (`gen.permutation(len(grid))`)" in (
        text
    ), text
    assert "first 150 positions of `shuffled`" in text
    fix = fix_of(text)
    assert fix == ("picks = shuffled[150:190]; grid_val, score_val = grid[picks], score[picks]"), (
        fix
    )
    assert notes_in(kernel, fix) == []
    assert value_of(kernel, "[shared(grid_val, grid_train), len(grid_val)]") == [0, 40]
    assert value_of(kernel, "bool(np.allclose(grid_val @ np.arange(4.0), score_val))") is True
    # Another draw: choice without replacement, a single held-out array.
    other = (
        "mix = np.random.default_rng(2).permutation(200)\n"
        "rows_tr = grid[mix[:120]]\n"
        "ids = np.random.default_rng(3).choice(200, size=70, replace=False)\n"
        "rows_te = grid[ids]\n"
    )
    [text] = notes_in(kernel, other)
    assert "`ids` comes from a second, independent draw" in text, text
    fix = fix_of(text)
    assert fix == "ids = mix[120:190]; rows_te = grid[ids]", fix
    assert notes_in(kernel, fix) == []
    assert value_of(kernel, "[shared(rows_te, rows_tr), len(rows_te)]") == [0, 70]
    # Look-alike: the held-out positions taken after the training ones: silent.
    proper = "ids = mix[120:]\nrows_te = grid[ids]\n"
    assert notes_in(kernel, proper) == []


def test_few_distinct_rows_and_chance_repeats_stay_silent(kernel: KernelSession) -> None:
    # Short digit strings recur by chance in two separate draws.
    cell = (
        "gen = np.random.default_rng(8)\n"
        "codes_train = gen.integers(0, 4, size=(3000, 3))\n"
        "codes_val = gen.integers(0, 4, size=(300, 3))\n"
        "labels_train = gen.integers(0, 2, size=3000)\n"
        "labels_val = gen.integers(0, 2, size=300)\n"
    )
    assert notes_in(kernel, cell) == []


# --------------------------------------------- statistics of every row, through a transform
COLUMNS = (
    "gen = np.random.default_rng(21)\n"
    "rows = {'price': gen.lognormal(4.0, 1.0, 900).astype('float32'),\n"
    "        'rooms': gen.integers(1, 9, 900).astype('float32')}\n"
    "perm = gen.permutation(900)\n"
    "rows_train = {k: v[perm[:600]] for k, v in rows.items()}\n"
    "rows_test = {k: v[perm[600:]] for k, v in rows.items()}\n"
)


def test_normalization_adapted_on_a_transform_of_every_row(kernel: KernelSession) -> None:
    cell = COLUMNS + (
        "price_scale = keras.layers.Normalization()\n"
        "price_scale.adapt(np.log1p(rows['price']).reshape(-1, 1))\n"
    )
    [text] = notes_in(kernel, cell, "preprocessing-adapt")
    assert text.startswith(
        "`price_scale.adapt(np.log1p(rows['price']).reshape(-1, 1))` (line 8) learns the "
        "statistics of `price_scale` from all 900 rows of `rows['price']`, but the training "
        "split `rows_train['price']` holds only 600 of them"
    ), text
    fix = fix_of(text)
    assert fix == "price_scale.adapt(np.log1p(rows_train['price']).reshape(-1, 1))"
    assert notes_in(kernel, fix, "preprocessing-adapt") == []
    mean = "float(price_scale(np.log1p(rows_train['price']).reshape(-1, 1)).numpy().mean())"
    assert abs(value_of(kernel, mean)) < 1e-3
    # A tensor made from a whole table, another layer kind: told the same way.
    table = (
        "grid = gen.normal(size=(400, 3)).astype('float32')\n"
        "grid_train = grid[:300]\n"
        "bins = keras.layers.Discretization(num_bins=4)\n"
        "bins.adapt(tf.constant(grid * 2.0))\n"
    )
    [binned] = notes_in(kernel, table, "preprocessing-adapt")
    assert fix_of(binned) == "bins.adapt(tf.constant(grid_train * 2.0))"
    assert notes_in(kernel, fix_of(binned), "preprocessing-adapt") == []
    # Look-alikes: the training rows selected inside the call; the training split's column.
    assert (
        notes_in(kernel, "bins.adapt(tf.constant(grid[:300] * 2.0))", "preprocessing-adapt") == []
    )
    assert (
        notes_in(
            kernel,
            "price_scale.adapt(np.log(rows_train['price']).reshape(-1, 1))",
            "preprocessing-adapt",
        )
        == []
    )


# ------------------------------------------------------------ the test set used for choosing
SCORES = (
    "def hit_rate(truth, prob, cut):\n"
    "    return float(((prob >= cut) == (truth == 1)).mean())\n"
    "gen = np.random.default_rng(5)\n"
    "truth_val, truth_test = gen.integers(0, 2, 400), gen.integers(0, 2, 400)\n"
    "prob_val = np.clip(truth_val * 0.3 + gen.random(400) * 0.7, 0, 1)\n"
    "prob_test = np.clip(truth_test * 0.3 + gen.random(400) * 0.7, 0, 1)\n"
    "cuts = np.linspace(0.2, 0.8, 13)\n"
)


def test_threshold_swept_on_the_test_scores(kernel: KernelSession) -> None:
    run(kernel, SCORES)
    cell = (
        "rates = [hit_rate(truth_test, prob_test, c) for c in cuts]\n"
        "best_cut = cuts[int(np.argmax(rates))]\n"
        "print(best_cut, max(rates))\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`[hit_rate(truth_test, prob_test, c) for c in cuts]` (line 1) scores each candidate "
        "on `truth_test`, `prob_test`, and `np.argmax(rates)` (line 2) keeps the best of those "
        "test scores"
    ), text
    fix = fix_of(text)
    assert fix == (
        "val_scores = [hit_rate(truth_val, prob_val, c) for c in cuts]; "
        "chosen = cuts[int(np.argmax(val_scores))]; "
        "print(chosen, hit_rate(truth_test, prob_test, chosen))"
    )
    assert notes_in(kernel, fix) == []
    on_val = "float(cuts[int(np.argmax([hit_rate(truth_val, prob_val, c) for c in cuts]))])"
    assert value_of(kernel, "float(chosen)") == value_of(kernel, on_val)
    # Look-alikes: chosen on validation and reported on test once; a curve only printed;
    # the worst score of a per-group loop.
    proper = (
        "rates = [hit_rate(truth_val, prob_val, c) for c in cuts]\n"
        "best_cut = cuts[int(np.argmax(rates))]\n"
        "print(hit_rate(truth_test, prob_test, best_cut))\n"
    )
    assert notes_in(kernel, proper) == []
    assert notes_in(kernel, "print([hit_rate(truth_test, prob_test, c) for c in cuts])") == []
    worst = (
        "per_group = []\n"
        "for g in range(2):\n"
        "    mine = truth_test == g\n"
        "    per_group.append(hit_rate(truth_test[mine], prob_test[mine], 0.5))\n"
        "print(min(per_group))\n"
    )
    assert notes_in(kernel, worst) == []


def test_epochs_chosen_by_evaluating_on_the_test_arrays(kernel: KernelSession) -> None:
    data = (
        "gen = np.random.default_rng(9)\n"
        "inputs_tr = gen.normal(size=(200, 4)).astype('float32')\n"
        "outputs_tr = inputs_tr @ np.ones((4, 1), 'float32')\n"
        "inputs_va = gen.normal(size=(60, 4)).astype('float32')\n"
        "outputs_va = inputs_va @ np.ones((4, 1), 'float32')\n"
        "inputs_te = gen.normal(size=(60, 4)).astype('float32')\n"
        "outputs_te = inputs_te @ np.ones((4, 1), 'float32')\n"
    )
    run(kernel, data)
    loop = (
        "lowest, chosen_epochs = np.inf, None\n"
        "for n_epochs in (1, 3):\n"
        "    reg = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
        "    reg.compile(optimizer='sgd', loss='mse')\n"
        "    reg.fit(inputs_tr, outputs_tr, epochs=n_epochs, verbose=0)\n"
        "    err = reg.evaluate(inputs_te, outputs_te, verbose=0)\n"
        "    if err < lowest:\n"
        "        lowest, chosen_epochs = err, n_epochs\n"
        "print(chosen_epochs, lowest)\n"
    )
    [text] = notes_in(kernel, loop)
    assert text.startswith(
        "The loop `for n_epochs in (1, 3):` (line 2) scores each candidate on `inputs_te`, "
        "`outputs_te`, and `err < lowest` (line 7) keeps the best of those test scores"
    ), text
    assert text.endswith(
        "in the loop, line 6: `err = reg.evaluate(inputs_va, outputs_va, verbose=0)`."
    )
    fixed = loop.replace(
        "err = reg.evaluate(inputs_te, outputs_te, verbose=0)", fix_of(text).strip()
    )
    assert notes_in(kernel, fixed) == []
    assert value_of(kernel, "chosen_epochs") in (1, 3)
    # Look-alike: the same loop scoring on validation rows.
    assert notes_in(kernel, fixed + "print(reg.evaluate(inputs_te, outputs_te, verbose=0))") == []


# ------------------------------------------------------------- the answer among the inputs
def test_label_column_kept_among_the_features(kernel: KernelSession) -> None:
    data = (
        "gen = np.random.default_rng(12)\n"
        "feats = gen.normal(size=(320, 3)).astype('float32')\n"
        "labels = (feats[:, 0] + feats[:, 1] > 0).astype('int32')\n"
        "records = np.column_stack([feats, labels]).astype('float32')\n"
        "rec_train, lab_train = records[:240], labels[:240]\n"
        "rec_test, lab_test = records[240:], labels[240:]\n"
    )
    run(kernel, data)
    model = (
        "clf = keras.Sequential([keras.Input((rec_train.shape[1],)),"
        " keras.layers.Dense(1, activation='sigmoid')])\n"
        "clf.compile(optimizer='adam', loss='binary_crossentropy')\n"
    )
    cell = model + "clf.fit(rec_train, lab_train, epochs=1, verbose=0)\n"
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`clf.fit(rec_train, lab_train, epochs=1, verbose=0)` (line 3) trains on `rec_train`, "
        "whose column 3 holds the target `lab_train`:"
    ), text
    fix = fix_of(text)
    assert fix == (
        "rec_train, rec_test = np.delete(rec_train, 3, axis=1), np.delete(rec_test, 3, axis=1)"
    )
    assert notes_in(kernel, fix) == []
    assert value_of(kernel, "[rec_train.shape[1], rec_test.shape[1]]") == [3, 3]
    assert notes_in(kernel, cell) == []
    # Look-alikes: a feature that only predicts the label; evaluate on the fixed arrays.
    assert notes_in(kernel, "clf.evaluate(rec_test, lab_test, verbose=0)") == []
    near = (
        "hint = np.column_stack([feats, labels + gen.normal(0, 0.3, 320)]).astype('float32')\n"
        "reg = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])\n"
        "reg.compile(optimizer='sgd', loss='mse')\n"
        "reg.fit(hint, feats[:, 0], epochs=1, verbose=0)\n"
    )
    assert notes_in(kernel, near) == []


def test_targets_given_as_a_second_input(kernel: KernelSession) -> None:
    cell = (
        "gen = np.random.default_rng(13)\n"
        "signal = gen.normal(size=(200, 6)).astype('float32')\n"
        "level = (signal @ np.arange(6, dtype='float32')).reshape(-1, 1)\n"
        "a_in, b_in = keras.Input((6,)), keras.Input((1,))\n"
        "joined = keras.layers.Concatenate()([a_in, b_in])\n"
        "net = keras.Model([a_in, b_in], keras.layers.Dense(1)(joined))\n"
        "net.compile(optimizer='adam', loss='mse')\n"
        "net.fit([signal, level], level, epochs=1, verbose=0)\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`net.fit([signal, level], level, epochs=1, verbose=0)` (line 8) trains with `level` "
        "among the model's inputs, and `level` holds the targets `level` themselves"
    ), text
    assert text.endswith("`signal` in place of `[signal, level]`.")
    rebuilt = (
        "a_in = keras.Input((6,))\n"
        "net = keras.Model(a_in, keras.layers.Dense(1)(a_in))\n"
        "net.compile(optimizer='adam', loss='mse')\n"
        "net.fit(signal, level, epochs=1, verbose=0)\n"
    )
    assert notes_in(kernel, rebuilt) == []


# ------------------------------------------------------ teacher forcing when predicting
SEQUENCES = (
    "gen = np.random.default_rng(17)\n"
    "def reversal_rows(count):\n"
    "    src = np.zeros((count, 6), 'int32'); dec_in = np.zeros((count, 7), 'int32')\n"
    "    dec_out = np.zeros((count, 7), 'int32')\n"
    "    for r in range(count):\n"
    "        n = gen.integers(3, 7); toks = gen.integers(3, 13, n)\n"
    "        src[r, :n] = toks; dec_in[r, 0] = 1; dec_in[r, 1:n + 1] = toks[::-1]\n"
    "        dec_out[r, :n] = toks[::-1]; dec_out[r, n] = 2\n"
    "    return src, dec_in, dec_out\n"
    "s_in, t_in = keras.Input((None,), dtype='int32'), keras.Input((None,), dtype='int32')\n"
    "_, state = keras.layers.GRU(16, return_state=True)(keras.layers.Embedding(13, 8)(s_in))\n"
    "seq = keras.layers.GRU(16, return_sequences=True)(\n"
    "    keras.layers.Embedding(13, 8)(t_in), initial_state=state)\n"
    "translator = keras.Model([s_in, t_in], keras.layers.Dense(13)(seq))\n"
)


def test_decoder_given_the_true_targets_at_prediction(kernel: KernelSession) -> None:
    run(kernel, SEQUENCES)
    cell = (
        "src_eval, shifted_eval, wanted_eval = reversal_rows(40)\n"
        "guess = translator.predict([src_eval, shifted_eval], verbose=0).argmax(-1)\n"
        "print(float((guess == wanted_eval).mean()))\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`translator.predict([src_eval, shifted_eval], verbose=0)` (line 2) gives the decoder "
        "`shifted_eval`, which is the target sequence `wanted_eval` moved one step right"
    ), text
    spans = re.findall(r"`([^`]+)`", text)[-3:]
    assert spans == [
        "dec = np.zeros_like(shifted_eval); dec[:, 0] = shifted_eval[:, 0]",
        "for i in range(1, dec.shape[1]): dec[:, i] = "
        "np.asarray(translator.predict([src_eval, dec], verbose=0)).argmax(-1)[:, i - 1]",
        "guess = translator.predict([src_eval, dec], verbose=0).argmax(-1)",
    ]
    assert notes_in(kernel, "\n".join(spans)) == []
    # The decoder now reads its own tokens: each next one is what it predicted.
    fed_back = "bool((dec[:, 1:] == guess[:, :-1]).all())"
    assert value_of(kernel, fed_back) is True
    # Look-alikes: training with teacher forcing; a one-input next-token model.
    fit = (
        "translator.compile(optimizer='adam', "
        "loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))\n"
        "translator.fit([src_eval, shifted_eval], wanted_eval, epochs=1, verbose=0)\n"
    )
    assert notes_in(kernel, fit) == []


def test_model_called_on_the_shifted_targets(kernel: KernelSession) -> None:
    run(kernel, SEQUENCES)
    cell = (
        "a_src, a_prev, a_next = reversal_rows(30)\n"
        "scores = translator([a_src, a_prev], training=False)\n"
        "hits = tf.reduce_mean(tf.cast(tf.argmax(scores, -1, output_type=tf.int32) == a_next,"
        " tf.float32))\n"
    )
    [text] = notes_in(kernel, cell)
    assert "gives the decoder `a_prev`, which is the target sequence `a_next`" in text
    spans = re.findall(r"`([^`]+)`", text)[-3:]
    assert spans[-1] == "scores = translator([a_src, dec], training=False)"
    assert notes_in(kernel, "\n".join(spans)) == []
    # Look-alike: the source and a decoder input made of other tokens.
    other = "b_src, b_prev, b_next = reversal_rows(30)\nscores = translator([b_src, a_prev])\n"
    assert notes_in(kernel, other) == []


# ------------------------------------------- validation rows, predictions on trained rows
def test_validation_data_sharing_rows_with_the_training_input(kernel: KernelSession) -> None:
    data = (
        "gen = np.random.default_rng(23)\n"
        "obs_all = gen.normal(size=(400, 3)).astype('float32')\n"
        "goal_all = obs_all.sum(axis=1, keepdims=True)\n"
        "obs_check, goal_check = obs_all[300:], goal_all[300:]\n"
        "fitter = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        "fitter.compile(optimizer='sgd', loss='mse')\n"
    )
    run(kernel, data)
    cell = (
        "fitter.fit(obs_all, goal_all, epochs=1, verbose=0, "
        "validation_data=(obs_check, goal_check))\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`fitter.fit(obs_all, goal_all, epochs=1, verbose=0, validation_data=(obs_check, "
        "goal_check))` (line 1) validates on `obs_check`: all 100 of its rows are rows of "
        "the training input `obs_all`"
    ), text
    fix = re.findall(r"`([^`]+)`", text)[-2]
    assert fix == "fitter.fit(obs_all, goal_all, epochs=1, verbose=0, validation_split=0.2)"
    assert notes_in(kernel, fix) == []
    # Keras validated on the last 80 rows and trained on the 320 before them.
    assert value_of(kernel, "sorted(fitter.history.history)") == ["loss", "val_loss"]
    # Look-alike: validation rows the training input does not hold.
    proper = (
        "fitter.fit(obs_all[:300], goal_all[:300], epochs=1, verbose=0, "
        "validation_data=(obs_check, goal_check))\n"
    )
    assert notes_in(kernel, proper) == []


def test_predictions_on_rows_the_model_was_fit_on(kernel: KernelSession) -> None:
    cell = (
        "gen = np.random.default_rng(29)\n"
        "pool = gen.normal(size=(200, 2)).astype('float32')\n"
        "pool_label = (pool[:, 0] > 0).astype('float32')\n"
        "pool_test = pool[-40:]\n"
        "picker = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, 'sigmoid')])\n"
        "picker.compile(optimizer='adam', loss='binary_crossentropy')\n"
        "picker.fit(pool, pool_label, epochs=1, verbose=0)\n"
        "guesses = picker.predict(pool_test, verbose=0)\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`picker.predict(pool_test, verbose=0)` (line 8) predicts with `picker` on 40 rows it "
        "was trained on: `picker.fit(pool, pool_label, epochs=1, verbose=0)` (line 7 of this "
        "cell)"
    ), text
    # Look-alike: predictions on rows kept out of the fit.
    kept_out = cell.replace("picker.fit(pool,", "picker.fit(pool[:-40],").replace(
        "pool_label, epochs", "pool_label[:-40], epochs"
    )
    assert notes_in(kernel, kept_out) == []


def test_lookup_adapted_on_every_row_learns_held_out_values(kernel: KernelSession) -> None:
    cell = (
        "gen = np.random.default_rng(31)\n"
        "shops = gen.choice(['bakery', 'garage', 'kiosk', 'market'], 600).astype('<U10')\n"
        "mix = gen.permutation(600)\n"
        "shops[mix[500]], shops[mix[550]] = 'harbour', 'airport'\n"
        "ledger = {'shop': shops, 'spend': gen.random(600)}\n"
        "ledger_train = {k: v[mix[:450]] for k, v in ledger.items()}\n"
        "shop_ids = keras.layers.StringLookup()\n"
        "shop_ids.adapt(ledger['shop'])\n"
    )
    [text] = notes_in(kernel, cell, "preprocessing-adapt")
    assert text.startswith(
        "`shop_ids.adapt(ledger['shop'])` (line 8) builds the vocabulary of `shop_ids` from "
        "all 600 rows of `ledger['shop']`, but the training split `ledger_train['shop']` "
        "holds only 450 of them: the other rows (validation or test data) add 2 values the "
        "training data never has ('airport', 'harbour')."
    ), text
    fix = fix_of(text)
    assert fix == "shop_ids.adapt(ledger_train['shop'])"
    assert notes_in(kernel, "shop_ids = keras.layers.StringLookup()\n" + fix) == []
    assert value_of(kernel, "sorted(shop_ids.get_vocabulary()[1:])") == [
        "bakery",
        "garage",
        "kiosk",
        "market",
    ]
    # Integer codes the same way; codes whose every value is in the split stay silent.
    codes = (
        "codes = gen.integers(0, 5, 300)\n"
        "codes[-1] = 77\n"
        "codes_train = codes[:240]\n"
        "code_ids = keras.layers.IntegerLookup()\n"
        "code_ids.adapt(codes)\n"
    )
    [coded] = notes_in(kernel, codes, "preprocessing-adapt")
    assert "add 1 value the training data never has (77)" in coded
    assert fix_of(coded) == "code_ids.adapt(codes_train)"
    assert notes_in(kernel, codes.replace("codes[-1] = 77\n", ""), "preprocessing-adapt") == []


def test_early_stopping_watching_the_test_arrays(kernel: KernelSession) -> None:
    data = (
        "gen = np.random.default_rng(37)\n"
        "def lin(n):\n"
        "    a = gen.normal(size=(n, 3)).astype('float32')\n"
        "    return a, a @ np.array([[1.0], [2.0], [-1.0]], 'float32')\n"
        "feat_train, out_train = lin(200)\n"
        "feat_valid, out_valid = lin(50)\n"
        "feat_test, out_test = lin(50)\n"
        "def fresh():\n"
        "    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        "    m.compile(optimizer='sgd', loss='mse')\n"
        "    return m\n"
    )
    run(kernel, data)
    cell = (
        "lin_model = fresh()\n"
        "lin_model.fit(feat_train, out_train, epochs=3, verbose=0, "
        "validation_data=(feat_test, out_test), "
        "callbacks=[keras.callbacks.EarlyStopping(patience=1)])\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`lin_model.fit(feat_train, out_train, epochs=3, verbose=0, validation_data=(feat_test,"
        " out_test), callbacks=[keras.callbacks.EarlyStopping(patience=1)])` (line 2) "
        "validates on `feat_test`, `out_test`, and its `EarlyStopping` watches those `val_` "
        "figures: the test data chooses when training stops"
    ), text
    fix = fix_of(text)
    assert fix == (
        "lin_model.fit(feat_train, out_train, epochs=3, verbose=0, validation_data=(feat_valid,"
        " out_valid), callbacks=[keras.callbacks.EarlyStopping(patience=1)])"
    )
    assert notes_in(kernel, "lin_model = fresh()\n" + fix) == []
    # A checkpoint keeping the best epoch, held by a name; no validation twins: a split.
    held = (
        "keeper = keras.callbacks.ModelCheckpoint('lin_best.keras', save_best_only=True)\n"
        "xs_test, ys_test = feat_test, out_test\n"
        "lin_model = fresh()\n"
        "lin_model.fit(feat_train, out_train, epochs=2, verbose=0, "
        "validation_data=(xs_test, ys_test), callbacks=[keeper])\n"
    )
    [kept] = notes_in(kernel, held)
    assert "its `ModelCheckpoint` watches those `val_` figures: the test data chooses which" in kept
    assert fix_of(kept) == (
        "lin_model.fit(feat_train, out_train, epochs=2, verbose=0, validation_split=0.2, "
        "callbacks=[keeper])"
    )
    assert notes_in(kernel, "lin_model = fresh()\n" + fix_of(kept)) == []
    assert value_of(kernel, "sorted(lin_model.history.history)") == ["loss", "val_loss"]
    run(kernel, "import os\nos.remove('lin_best.keras')")
    # Look-alikes: the test arrays only watched; a stop on the training loss.
    watched = (
        "lin_model.fit(feat_train, out_train, epochs=1, verbose=0, "
        "validation_data=(feat_test, out_test), callbacks=[])"
    )
    assert notes_in(kernel, watched) == []
    on_loss = (
        "lin_model.fit(feat_train, out_train, epochs=1, verbose=0, validation_data=(feat_test, "
        "out_test), callbacks=[keras.callbacks.EarlyStopping(monitor='loss')])"
    )
    assert notes_in(kernel, on_loss) == []


def test_dataset_split_whose_training_side_reads_every_element(kernel: KernelSession) -> None:
    run(
        kernel,
        "gen = np.random.default_rng(41)\n"
        "stream = tf.data.Dataset.from_tensor_slices("
        "(gen.normal(size=(100, 2)).astype('float32'), np.arange(100)))\n",
    )
    cell = (
        "valid_ds = stream.take(30).batch(10)\n"
        "train_ds = stream.map(lambda x, y: (x * 2.0, y)).batch(10)\n"
    )
    [text] = notes_in(kernel, cell)
    assert text.startswith(
        "`valid_ds = stream.take(30).batch(10)` (line 1): `valid_ds` is the first 30 elements "
        "of `stream`, and `train_ds` reads `stream` without leaving them out"
    ), text
    fix = fix_of(text)
    assert fix == "train_ds = stream.skip(30).map(lambda x, y: (x * 2.0, y)).batch(10)"
    assert notes_in(kernel, fix) == []
    ids = "sorted(int(i) for _, y in {} for i in y)"
    assert set(value_of(kernel, ids.format("train_ds"))).isdisjoint(
        value_of(kernel, ids.format("valid_ds"))
    )
    # The held-out part after a skip; the training side shuffled but not split.
    tail = "dev_ds = stream.skip(80)\ntrain_ds = stream.shuffle(50)\n"
    [later] = notes_in(kernel, tail)
    assert "`dev_ds` is the elements after the first 80 of `stream`" in later
    assert fix_of(later) == "train_ds = stream.take(80).shuffle(50)"
    assert notes_in(kernel, fix_of(later)) == []
    # Look-alike: a split made properly (the stale `dev_ds`, inside it, deleted first).
    proper = "del dev_ds\nvalid_ds = stream.take(30)\ntrain_ds = stream.skip(30)"
    assert notes_in(kernel, proper) == []
