"""Silent data bugs of issue #25, told in the cell that makes them: a take/skip split of a
dataset that reshuffles every pass (in the cell that writes the split, before any use);
next-step sequences of a text's ids shuffled before they are batched stay quiet (the
"shuffle after batch" note is for batches, not for examples a batch made). In a real
kernel; each fix, run as printed, makes the symptom go; correct look-alikes stay quiet."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="import warnings\nwarnings.simplefilter('ignore')\n",
)


def notes_of(report: dict[str, Any], section: str) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == section
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


# ------------------------------------------------------------- tf.data orders
ORDER = "tf-data-order"
# A tiny corpus of ids (one id per character), made sequences of 11 by a batch.
CORPUS = """corpus_ids = np.tile(np.arange(7), 60).astype("int64")
def shift_pair(seq):
    return seq[:-1], seq[1:]
"""


def test_reshuffled_split_told_in_the_cell_that_writes_it(kernel: KernelSession) -> None:
    run(kernel, CORPUS)
    cell = """windows = tf.data.Dataset.from_tensor_slices(corpus_ids).batch(11, True)
pairs = windows.map(shift_pair).shuffle(40)
holdout = pairs.take(4).batch(2)
training = pairs.skip(4).batch(8)
"""
    report = checked_report(run(kernel, cell))
    [text] = notes_of(report, ORDER)
    assert text.startswith(
        "`holdout` and `training` split `pairs` with `.take()`/`.skip()`, but its "
        "`.shuffle()` reshuffles on every pass"
    ), text
    # The symptom: the split's elements change from one pass to the next.
    measure = """passes = [tuple(int(v) for x, _ in holdout for v in x[:, 0]) for _ in range(6)]
changed = len(set(passes)) > 1
"""
    run(kernel, measure)
    assert value_of(kernel, "changed") is True
    # The fit of a later cell does not say it again.
    later = """seq_model = keras.Sequential([keras.Input((None,), dtype="int64"),
    keras.layers.Embedding(7, 4), keras.layers.Dense(7)])
seq_model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
seq_model.fit(training, validation_data=holdout, epochs=1, verbose=0)
"""
    assert notes_of(checked_report(run(kernel, later)), ORDER) == []
    fix = last_code(text)
    assert fix == "pairs = windows.map(shift_pair).shuffle(40, reshuffle_each_iteration=False)"
    fixed = cell.replace(cell.splitlines()[1], fix)
    assert notes_of(checked_report(run(kernel, fixed)), ORDER) == []
    run(kernel, measure)
    assert value_of(kernel, "changed") is False


def test_sequences_shuffled_before_their_batch_stay_quiet(kernel: KernelSession) -> None:
    run(kernel, CORPUS)
    # The usual next-character pipeline: a batch makes sequences, shuffle reorders
    # sequences, a second batch batches them.
    cell = """seq_ds = (tf.data.Dataset.from_tensor_slices(corpus_ids)
          .batch(11, drop_remainder=True)
          .map(shift_pair)
          .shuffle(100)
          .batch(8, drop_remainder=True))
model_c = keras.Sequential([keras.Input((None,), dtype="int64"),
    keras.layers.Embedding(7, 4), keras.layers.Dense(7)])
model_c.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model_c.fit(seq_ds, epochs=1, verbose=0)
in_order = all(bool((np.diff(x.numpy(), axis=1) % 7 == 1).all()) for x, _ in seq_ds)
"""
    assert notes_of(checked_report(run(kernel, cell)), ORDER) == []
    assert value_of(kernel, "in_order") is True  # each sequence keeps its text's order
    # Batches shuffled whole are still told.
    wrong = """rows_ds = tf.data.Dataset.from_tensor_slices((corpus_ids, corpus_ids))
rows_ds = rows_ds.batch(30).shuffle(8)
for _ in rows_ds:
    pass
"""
    [text] = notes_of(checked_report(run(kernel, wrong)), ORDER)
    assert text.startswith("`rows_ds` shuffles after it batches")


# ------------------------------------------------------------- centring on one mean
SCALING = "class-axis"
# Points of a 2-D blob around (40, -15): both columns spread about as much, each offset.
BLOB = """blob = np.random.default_rng(5).normal([40.0, -15.0], [2.0, 3.0], size=(500, 2))
blob = blob.astype("float32")
"""


def test_one_mean_leaves_offset_columns_uncentred(kernel: KernelSession) -> None:
    run(kernel, BLOB)
    cell = "centre = blob.mean()\nspread = blob.std()\nblob_z = (blob - centre) / spread\n"
    report = checked_report(run(kernel, cell))
    [text] = [t for t in notes_of(report, SCALING) if "not centred" in t]
    assert text.startswith(
        "`(blob - centre) / spread` (line 3 of this cell) scales `blob` with one statistic "
        "for all the columns of a (500, 2) table"
    ), text
    assert "`blob_z`'s columns are not centred, with means 1 (column 0, spread 0.07" in text, text
    assert value_of(kernel, "bool(abs(blob_z.mean(axis=0)).min() > 0.9)") is True
    fix = re.findall(r"`([^`]+)`", text)[-3:]
    assert fix == [
        "centre = blob.mean(axis=0)",
        "spread = blob.std(axis=0)",
        "blob_z = (blob - centre) / spread",
    ], fix
    fixed = checked_report(run(kernel, "\n".join(fix) + "\n"))
    assert notes_of(fixed, SCALING) == []
    assert value_of(kernel, "bool(np.allclose(blob_z.mean(axis=0), 0, atol=1e-4))") is True
    # Look-alike: columns of one distribution, scaled as a whole, come out centred.
    same = """even = np.random.default_rng(6).normal(7.0, 2.0, size=(500, 3)).astype("float32")
even_z = (even - even.mean()) / even.std()
"""
    assert notes_of(checked_report(run(kernel, same)), SCALING) == []


# ------------------------------------------------------------- statistics of all rows
LEAKS = "preprocessing-adapt"
TABLE = """rows = np.random.default_rng(8).normal(size=(600, 4)).astype("float32") * [1, 5, 20, 2]
feat_tr, feat_va, feat_te = rows[:400], rows[400:500], rows[500:]
"""


def test_adapt_on_all_rows_with_short_split_names(kernel: KernelSession) -> None:
    run(kernel, TABLE)
    cell = "scaler = keras.layers.Normalization()\nscaler.adapt(rows)\n"
    [text] = notes_of(checked_report(run(kernel, cell)), LEAKS)
    assert text.startswith(
        "`scaler.adapt(rows)` (line 2) learns the statistics of `scaler` from all 600 rows "
        "of `rows`, but the training split `feat_tr` holds only 400 of them"
    ), text
    leak = "bool(np.allclose(scaler.mean.numpy().ravel(), rows.mean(axis=0), atol=1e-3))"
    assert value_of(kernel, leak) is True
    fix = last_code(text)
    assert fix == "scaler.adapt(feat_tr)"
    fixed = cell.replace("scaler.adapt(rows)", fix)
    assert notes_of(checked_report(run(kernel, fixed)), LEAKS) == []
    right = "bool(np.allclose(scaler.mean.numpy().ravel(), feat_tr.mean(axis=0), atol=1e-3))"
    assert value_of(kernel, right) is True


# ------------------------------------------------------------- evaluated on trained rows
HELD_OUT = "keras-validation-data"
# Labels that are pure noise: no model can predict them, only remember them.
NOISE = """gen = np.random.default_rng(11)
sens = gen.normal(size=(260, 3)).astype("float32")
noise = gen.normal(size=260).astype("float32")
sens_tr, sens_te = sens[:200], sens[200:]
noise_tr, noise_te = noise[:200], noise[200:]
def fresh_net():
    keras.utils.set_random_seed(1)
    net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(256, activation="relu"),
                            keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)])
    net.compile(keras.optimizers.Adam(3e-3), "mse")
    return net
"""


def test_fit_on_the_test_rows_then_evaluate_on_them(kernel: KernelSession) -> None:
    run(kernel, NOISE)
    cell = """net = fresh_net()
sens_every = np.concatenate([sens_tr, sens_te])
noise_every = np.concatenate([noise_tr, noise_te])
net.fit(sens_every, noise_every, epochs=150, batch_size=32, verbose=0)
test_mse = net.evaluate(sens_te, noise_te, verbose=0)
"""
    report = checked_report(run(kernel, cell))
    [text] = notes_of(report, HELD_OUT)
    assert text.startswith(
        "`net.evaluate(sens_te, noise_te, verbose=0)` (line 5) scores `net` on 60 rows it "
        "was trained on: `net.fit(sens_every, noise_every, epochs=150, batch_size=32, "
        "verbose=0)` (line 4 of this cell) gave it `sens_every`, which holds every row of "
        "`sens_te`."
    ), text
    # The symptom: a "test" error far below the noise's own variance (about 1).
    assert value_of(kernel, "test_mse < 0.5") is True
    fix = last_code(text)
    assert fix == "net.fit(sens_tr, noise_tr, epochs=150, batch_size=32, verbose=0)"
    fixed = f"net = fresh_net()\n{fix}\ntest_mse = net.evaluate(sens_te, noise_te, verbose=0)\n"
    assert notes_of(checked_report(run(kernel, fixed)), HELD_OUT) == []
    assert value_of(kernel, "test_mse > 0.8") is True  # an honest score on unseen noise
    # Look-alike: evaluating on the training rows, named so, is not a test score.
    train_score = "net.evaluate(sens_tr, noise_tr, verbose=0)\n"
    assert notes_of(checked_report(run(kernel, train_score)), HELD_OUT) == []


def test_fit_in_one_cell_evaluate_in_the_next(kernel: KernelSession) -> None:
    run(kernel, NOISE)
    fit = "net2 = fresh_net()\nnet2.fit(sens_te, noise_te, epochs=2, verbose=0)\n"
    assert notes_of(checked_report(run(kernel, fit)), HELD_OUT) == []
    evaluate = "net2.evaluate(sens_te, noise_te, verbose=0)\n"
    [text] = notes_of(checked_report(run(kernel, evaluate)), HELD_OUT)
    assert "`net2.fit(sens_te, noise_te, epochs=2, verbose=0)` (an earlier cell)" in text
    assert last_code(text) == "net2.fit(sens_tr, noise_tr, epochs=2, verbose=0)"


# ------------------------------------------------------------- vocabulary from a part
VOCAB = "preprocessing-adapt"
# A log of 300 lines; the last 40 are alarms written in capitals with a '#'.
LOG = """log_lines = [f"pump {i % 7} ok at {i}" for i in range(260)]
log_lines += [f"PUMP {i % 7} FAIL #{i}" for i in range(40)]
log = "\\n".join(log_lines)
"""


def test_character_vocabulary_from_the_start_of_a_text(kernel: KernelSession) -> None:
    run(kernel, LOG)
    cell = "symbols = sorted(set(log[:3000]))\nprint(len(symbols))\n"
    [text] = notes_of(checked_report(run(kernel, cell)), VOCAB)
    assert text.startswith(
        "`symbols = sorted(set(log[:3000]))` (line 1) builds a vocabulary from `log[:3000]`, "
        "3,000 of the "
    ), text
    assert (
        "4,939 characters of `log`, and the rest holds 8 characters it lacks "
        "('P', '#', 'A', 'F', 'I' and 3 more; 360 occurrences)"
    ) in text
    fix = last_code(text)
    assert fix == "symbols = sorted(set(log))"
    symptom = """to_id = keras.layers.StringLookup(vocabulary=symbols, mask_token=None)
unknown = int(tf.reduce_sum(tf.cast(to_id(tf.strings.unicode_split(log, "UTF-8")) == 0, "int32")))
"""
    run(kernel, symptom)
    assert value_of(kernel, "unknown") > 0  # every alarm character is [UNK]
    assert notes_of(checked_report(run(kernel, fix + "\n")), VOCAB) == []
    run(kernel, symptom)
    assert value_of(kernel, "unknown") == 0
    # Look-alike: a part that already holds every character.
    covered = "head = sorted(set(log[:200] + log[-400:]))\nfirst = sorted(set(log_lines[:300]))\n"
    assert notes_of(checked_report(run(kernel, covered)), VOCAB) == []


def test_text_vectorization_adapted_on_a_sample(kernel: KernelSession) -> None:
    run(kernel, LOG)
    cell = "words = keras.layers.TextVectorization()\nwords.adapt(log_lines[:200])\n"
    [text] = notes_of(checked_report(run(kernel, cell)), VOCAB)
    assert text.startswith(
        "`words.adapt(log_lines[:200])` (line 2) learns the vocabulary of `words` from "
        "`log_lines[:200]`, 200 of the 300 texts of `log_lines`, and the rest holds "
    ), text
    assert "'fail'" in text
    fix = last_code(text)
    assert fix == "words.adapt(log_lines)"
    count_unknown = "unknown_words = int((words(log_lines).numpy() == 1).sum())\n"
    run(kernel, count_unknown)
    assert value_of(kernel, "unknown_words") > 0
    fixed = cell.replace("words.adapt(log_lines[:200])", fix)
    assert notes_of(checked_report(run(kernel, fixed)), VOCAB) == []
    run(kernel, count_unknown)
    assert value_of(kernel, "unknown_words") == 0
    # Look-alike: a capped vocabulary leaves rare words out on purpose.
    capped = "top = keras.layers.TextVectorization(max_tokens=20)\ntop.adapt(log_lines[:200])\n"
    assert notes_of(checked_report(run(kernel, capped)), VOCAB) == []


# ------------------------------------------------------------- next-step targets
TARGETS = "labels-and-loss"
# Ids of a repeating 5-token pattern, cut into sequences of STEPS + 1.
PATTERN = """STEPS = 12
pattern_ids = np.tile(np.array([3, 1, 4, 1, 5], dtype="int64"), 80)
pieces = tf.data.Dataset.from_tensor_slices(pattern_ids).batch(STEPS + 1, drop_remainder=True)
"""
CHECK_SHIFT = """probe_x, probe_t = next(iter(next_pairs))
shifted = bool((probe_x.numpy()[1:] == probe_t.numpy()[:-1]).all())
copied = bool((probe_x.numpy() == probe_t.numpy()).all())
"""


def test_target_slice_equal_to_the_input_slice(kernel: KernelSession) -> None:
    run(kernel, PATTERN)
    cell = """def make_pair(piece):
    source_ids = piece[:STEPS]
    target_ids = piece[:STEPS]
    return source_ids, target_ids

next_pairs = pieces.map(make_pair)
"""
    [text] = notes_of(checked_report(run(kernel, cell)), TARGETS)
    assert text.startswith(
        "`make_pair`, mapped by `pieces.map(make_pair)`, returns `piece[:STEPS]` as the "
        "input and as the target (`source_ids` and `target_ids`): each position's target "
        "is the token at that same "
        "position, not the next one. The slice leaves the end of each sequence of 13 "
        "steps out"
    ), text
    run(kernel, CHECK_SHIFT)
    assert value_of(kernel, "copied") is True
    fix = last_code(text)
    assert fix == "target_ids = piece[1:STEPS + 1]"
    fixed = cell.replace("    target_ids = piece[:STEPS]", "    " + fix)
    assert notes_of(checked_report(run(kernel, fixed)), TARGETS) == []
    run(kernel, CHECK_SHIFT)
    assert value_of(kernel, "shifted") is True
    assert value_of(kernel, "copied") is False


def test_lambda_pair_and_autoencoder_look_alike(kernel: KernelSession) -> None:
    run(kernel, PATTERN)
    cell = "next_pairs = pieces.map(lambda seq: (seq[:-1], seq[:-1]))\n"
    [text] = notes_of(checked_report(run(kernel, cell)), TARGETS)
    fix = last_code(text)
    assert fix == "lambda seq: (seq[:-1], seq[1:])"
    fixed = f"next_pairs = pieces.map({fix})\n"
    assert notes_of(checked_report(run(kernel, fixed)), TARGETS) == []
    run(kernel, CHECK_SHIFT)
    assert value_of(kernel, "shifted") is True
    # Look-alikes: an autoencoder's (x, x); a crop shorter than nothing left out.
    quiet = """recon = pieces.map(lambda seq: (seq, seq))
crop = pieces.map(lambda seq: (seq[:STEPS + 1], seq[:STEPS + 1]))
dense_ae = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2), keras.layers.Dense(4)])
dense_ae.compile("adam", "mse")
points = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
dense_ae.fit(points, points, epochs=1, verbose=0)
"""
    assert notes_of(checked_report(run(kernel, quiet)), TARGETS) == []


def test_fit_given_the_same_slice_as_inputs_and_targets(kernel: KernelSession) -> None:
    run(kernel, PATTERN)
    setup = """rows_2d = pattern_ids[:390].reshape(30, 13)
lm = keras.Sequential([keras.Input((None,), dtype="int64"), keras.layers.Embedding(6, 4),
                       keras.layers.Dense(6)])
lm.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
"""
    run(kernel, setup)
    cell = "lm.fit(rows_2d[:, :-1], rows_2d[:, :-1], epochs=1, verbose=0)\n"
    [text] = notes_of(checked_report(run(kernel, cell)), TARGETS)
    fix = last_code(text)
    assert fix == "lm.fit(rows_2d[:, :-1], rows_2d[:, 1:], epochs=1, verbose=0)"
    assert notes_of(checked_report(run(kernel, fix + "\n")), TARGETS) == []
    # The fixed targets are the next tokens: row i's target j is its input j + 1.
    assert value_of(kernel, "bool((rows_2d[:, 1:][:, :-1] == rows_2d[:, :-1][:, 1:]).all())")


# ------------------------------------------------------------- unit rows
ROWS = "class-axis"
ENCODER = """shots = np.random.default_rng(4).normal(size=(40, 6)).astype("float32")
encoder_net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(5)])
"""


def test_embeddings_normalised_over_the_examples(kernel: KernelSession) -> None:
    run(kernel, ENCODER)
    cell = """codes_out = encoder_net.predict(shots, verbose=0)
unit_codes = tf.math.l2_normalize(codes_out, axis=0).numpy()
"""
    report = checked_report(run(kernel, cell))
    [text] = [t for t in notes_of(report, ROWS) if "l2_normalize" in t]
    assert text.startswith(
        "`tf.math.l2_normalize(codes_out, axis=0)` (line 2) normalises `codes_out`, a "
        "(40, 5) batch of vectors, one row per example (from "
        "`encoder_net.predict(shots, verbose=0)`), over axis 0"
    ), text
    row_norms = "bool(np.allclose(np.linalg.norm(unit_codes, axis=1), 1, atol=1e-4))"
    assert value_of(kernel, row_norms) is False
    fix = last_code(text)
    assert fix == "unit_codes = tf.math.l2_normalize(codes_out, axis=-1).numpy()"
    assert notes_of(checked_report(run(kernel, fix + "\n")), ROWS) == []
    assert value_of(kernel, row_norms) is True
    # Look-alike: a kernel's columns (one vector per class) normalised over axis 0.
    weights = "class_vectors = tf.math.l2_normalize(encoder_net.layers[0].kernel, axis=0)\n"
    assert notes_of(checked_report(run(kernel, weights)), ROWS) == []


def test_rows_multiplied_after_a_normalisation_over_axis_0(kernel: KernelSession) -> None:
    """No batch to measure: a function normalises over axis 0, then multiplies rows by rows
    (a similarity matrix). Told where the function is defined; the fix makes each row unit
    length and the diagonal of the similarities 1; a cross-correlation over the batch
    (columns with columns) stays silent."""
    cell = """def pair_scores(left, right):
    both = tf.concat([left, right], axis=0)
    unit = tf.nn.l2_normalize(both, axis=0)
    return unit @ tf.transpose(unit)
"""
    report = checked_report(run(kernel, cell))
    [text] = notes_of(report, ROWS)
    assert text.startswith(
        "In `pair_scores`, `tf.nn.l2_normalize(both, axis=0)` (line 3) normalises over axis 0"
    ), text
    assert "`unit @ tf.transpose(unit)` (line 4) then takes dot products of rows" in text
    fix = last_code(text)
    assert fix == "unit = tf.nn.l2_normalize(both, axis=-1)"
    fixed = cell.replace("unit = tf.nn.l2_normalize(both, axis=0)", fix)
    assert notes_of(checked_report(run(kernel, fixed)), ROWS) == []
    run(kernel, "scores = pair_scores(tf.random.normal((6, 9)), tf.random.normal((6, 9)))\n")
    assert value_of(kernel, "bool(np.allclose(np.diag(scores.numpy()), 1.0, atol=1e-5))")

    quiet = """def cross_corr(a, b):
    a = tf.math.l2_normalize(a - tf.reduce_mean(a, axis=0), axis=0)
    b = tf.math.l2_normalize(b - tf.reduce_mean(b, axis=0), axis=0)
    return tf.matmul(a, b, transpose_a=True)
"""
    assert notes_of(checked_report(run(kernel, quiet)), ROWS) == []


def test_scaling_statistics_of_all_rows_while_a_split_exists(kernel: KernelSession) -> None:
    run(kernel, TABLE)
    cell = """centre = rows.mean(axis=0)
scale = rows.std(axis=0)
feat_tr_z = (feat_tr - centre) / scale
"""
    [text] = notes_of(checked_report(run(kernel, cell)), LEAKS)
    assert text.startswith(
        "`centre = rows.mean(axis=0)` (line 1) computes a statistic over all 600 rows of "
        "`rows`, but the training split `feat_tr` holds only 400 of them"
    ), text
    leaked = "bool(np.allclose(centre, feat_tr.mean(axis=0), atol=1e-4))"
    assert value_of(kernel, leaked) is False
    fix = last_code(text)
    assert fix == "centre = feat_tr.mean(axis=0)"
    fixed = cell.replace("rows.", "feat_tr.")
    assert notes_of(checked_report(run(kernel, fixed)), LEAKS) == []
    assert value_of(kernel, leaked) is True
    assert value_of(kernel, "bool(np.allclose(feat_tr_z.mean(axis=0), 0, atol=1e-4))") is True
    # Look-alike: the statistics only looked at, not scaled by.
    look = "col_means = rows.mean(axis=0)\nprint(col_means.round(2))\n"
    assert notes_of(checked_report(run(kernel, look)), LEAKS) == []
