"""Rows that silently stop going with their targets (issue #25, silent data bugs): one
array reordered by a permutation and its partner left in order
(``symptoms/reordered_pairs.py``), a split cut from labels sorted by class
(``symptoms/sorted_splits.py``), and predictions of a shuffled dataset compared with the
targets in their own order (``symptoms/shuffled_predictions.py``). In a real kernel: the
symptom holds, the note names the learner's arrays, the printed fix run as printed makes
the result right and the note go; correct look-alikes stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def notes_in(kernel: KernelSession, code: str, section: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == section]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


# ------------------------------------------------------------------ reordered pairs
SAMPLES = (
    "rng = np.random.default_rng(0)\n"
    "features = rng.normal(size=(50, 3)).astype('float32')\n"
    "targets = (features[:, 0] > 0).astype('int32')\n"
)
SPLIT = (
    "order = rng.permutation(len(features))\n"
    "features = features[order]\n"
    "f_train, f_test = features[:40], features[40:]\n"
    "t_train, t_test = targets[:40], targets[40:]\n"
)
MATCHED = "bool(((f_train[:, 0] > 0).astype('int32') == t_train).all())"


def test_features_reordered_by_a_permutation_their_targets_left_in_order(
    kernel: KernelSession,
) -> None:
    run(kernel, SAMPLES)
    [text] = notes_in(kernel, SPLIT, "tf-data-order")
    assert value_of(kernel, MATCHED) is False  # the symptom: rows and targets mismatched
    assert text.startswith(
        "`features = features[order]` (line 2 of this cell) reorders the 50 rows of "
        "`features` by the permutation `order`, but `targets` (also 50 rows) keeps its "
        "order, and line 4 still splits it as it splits `features` (`targets[:40]`)"
    ), text
    fix = last_code(text)
    assert fix == "features, targets = features[order], targets[order]"
    run(kernel, SAMPLES)
    assert notes_in(kernel, SPLIT.replace("features = features[order]", fix), "tf-data-order") == []
    assert value_of(kernel, MATCHED) is True


def test_a_gathered_copy_paired_with_targets_in_the_old_order(kernel: KernelSession) -> None:
    run(kernel, SAMPLES)
    cell = (
        "order = rng.permutation(50)\n"
        "mixed = tf.gather(features, order)\n"
        "pairs = tf.data.Dataset.from_tensor_slices((mixed, targets)).batch(10)\n"
    )
    [text] = notes_in(kernel, cell, "tf-data-order")
    assert "`tf.data.Dataset.from_tensor_slices((mixed, targets))` (line 3) still pairs" in text
    fix = last_code(text)
    assert fix == "mixed, targets = tf.gather(features, order), tf.gather(targets, order)"
    assert (
        notes_in(kernel, cell.replace("mixed = tf.gather(features, order)", fix), "tf-data-order")
        == []
    )
    check = (
        "all(bool(((x[:, 0] > 0).numpy().astype('int32') == y.numpy()).all()) for x, y in pairs)"
    )
    assert value_of(kernel, check) is True


def test_both_arrays_reordered_or_an_index_that_is_no_permutation_stay_silent(
    kernel: KernelSession,
) -> None:
    run(kernel, SAMPLES)
    both = SPLIT.replace(
        "features = features[order]", "features, targets = features[order], targets[order]"
    )
    assert notes_in(kernel, both, "tf-data-order") == []
    # A selection of rows (not a permutation of all of them), sliced beside other data.
    picked = (
        "keep = np.array([0, 2, 4] * 10)\n"
        "sample = features[keep]\n"
        "s_a, t_a = sample[:20], targets[:20]\n"
    )
    assert notes_in(kernel, picked, "tf-data-order") == []


# ------------------------------------------------------------------ sorted splits
CLASSES = "pics = np.random.rand(90, 4).astype('float32')\nkinds = np.repeat([0, 1, 2], 30)\n"
CUT = "p_train, p_val = pics[:60], pics[60:]\nk_train, k_val = kinds[:60], kinds[60:]\n"


def test_a_split_of_labels_sorted_by_class(kernel: KernelSession) -> None:
    run(kernel, CLASSES)
    [text] = notes_in(kernel, CUT, "keras-validation-data")
    assert value_of(kernel, "sorted(set(k_train.tolist()))") == [0, 1]  # the symptom
    assert text.startswith(
        "`kinds` is sorted by class, so `kinds[:60]` (line 2 of this cell) holds classes "
        "0 and 1 only: class 2 never appears in that part."
    ), text
    fix = last_code(text)
    assert fix == "perm = np.random.permutation(len(kinds)); pics, kinds = pics[perm], kinds[perm]"
    run(kernel, CLASSES)
    assert notes_in(kernel, fix + "\n" + CUT, "keras-validation-data") == []
    assert value_of(kernel, "sorted(set(k_train.tolist()))") == [0, 1, 2]
    # The pictures moved with their labels: each row still pairs with its own kind.
    assert value_of(kernel, "len(p_train) + len(p_val)") == 90


def test_sorted_labels_cut_with_every_class_and_counters_stay_silent(
    kernel: KernelSession,
) -> None:
    run(kernel, CLASSES)
    assert notes_in(kernel, "most = kinds[:-1]\n", "keras-validation-data") == []
    ids = "ids = np.arange(90)\nfirst_ids = ids[:60]\n"
    assert notes_in(kernel, ids, "keras-validation-data") == []
    # A look at the first rows of sorted labels is no split (found on dev and dev2).
    look = "print(kinds[:5], kinds[-5:])\nfirst = kinds[:5]\n"
    assert notes_in(kernel, look, "keras-validation-data") == []


def test_sorted_labels_split_alone_get_the_shuffle_in_words(kernel: KernelSession) -> None:
    """No array is sliced with the labels: a printed ``kinds = kinds[perm]`` would
    separate every label from its picture, so the fix is said, not printed as code."""
    run(kernel, CLASSES)
    [text] = notes_in(kernel, "k_train = kinds[:60]\n", "keras-validation-data")
    assert "[perm]" not in text
    assert text.endswith(
        "Shuffle `kinds` and the arrays whose rows pair with it by one permutation "
        "before splitting."
    ), text


def test_the_held_out_tail_of_sorted_labels_read_with_a_computed_cut(
    kernel: KernelSession,
) -> None:
    """The first slice of the labels holds every class; the second, cut at a point the
    cell computes (``int(0.7 * len(...))``), holds one: every slice of a name is read."""
    run(
        kernel,
        "gen = np.random.default_rng(4)\n"
        "readings = gen.normal(size=(200, 6)).astype('float32')\n"
        "grades = np.repeat([0, 1, 2], [60, 60, 80])\n",
    )
    cell = (
        "cut = int(0.7 * len(grades))\n"
        "r_fit, r_hold = readings[:cut], readings[cut:]\n"
        "g_fit, g_hold = grades[:cut], grades[cut:]\n"
    )
    [text] = notes_in(kernel, cell, "keras-validation-data")
    assert value_of(kernel, "sorted(set(g_hold.tolist()))") == [2]  # the symptom
    assert text.startswith(
        "`grades` is sorted by class, so `grades[cut:]` (line 3 of this cell) holds class 2 "
        "only: classes 0 and 1 never appear in that part."
    ), text
    fix = last_code(text)
    assert fix == (
        "perm = np.random.permutation(len(grades)); readings, grades = readings[perm], grades[perm]"
    )
    assert notes_in(kernel, fix + "\n" + cell, "keras-validation-data") == []
    assert value_of(kernel, "sorted(set(g_hold.tolist()))") == [0, 1, 2]
    # Look-alike: labels that alternate (no run of a class) split the same way.
    run(kernel, "grades = np.tile([0, 1, 2], 67)[:200]\n")
    assert notes_in(kernel, cell, "keras-validation-data") == []


OWNERS = (
    "shop = np.random.default_rng(3)\n"
    "owners, amounts = [], []\n"
    "for who in ['kim', 'ola', 'raj', 'eve', 'tom', 'ann', 'bob', 'zoe', 'lee', 'max']:\n"
    "    for _ in range(12):\n"
    "        owners.append(who)\n"
    "        amounts.append(shop.uniform(1, 50))\n"
    "owners = np.array(owners)\n"
    "amounts = np.array(amounts, dtype='float32')\n"
)


def test_a_split_of_rows_grouped_by_an_id_written_as_texts(kernel: KernelSession) -> None:
    """Rows appended owner by owner (not sorted: ``kim`` before ``eve``), cut at ``-hold``:
    the last owners are in the held-out part only."""
    run(kernel, OWNERS)
    cell = (
        "hold = len(owners) // 5\n"
        "own_tr, own_te = owners[:-hold], owners[-hold:]\n"
        "amt_tr, amt_te = amounts[:-hold], amounts[-hold:]\n"
    )
    [text] = notes_in(kernel, cell, "keras-validation-data")
    assert value_of(kernel, "sorted(set(own_te.tolist()) & set(own_tr.tolist()))") == []
    assert text.startswith(
        "`owners` keeps the rows of each value together, so `owners[:-hold]` (line 2 of this "
        "cell) holds values "
    ), text
    assert "only: values lee and max never appear in that part." in text
    fix = last_code(text)
    assert fix == (
        "perm = np.random.permutation(len(owners)); amounts, owners = amounts[perm], owners[perm]"
    )
    assert notes_in(kernel, fix + "\n" + cell, "keras-validation-data") == []
    # The amounts moved with their owners, and the held-out owners are seen in training.
    assert value_of(kernel, "len(set(own_te.tolist()) - set(own_tr.tolist()))") == 0
    # Look-alike: one id per row (a counter), cut the same way.
    run(kernel, "owners = np.array([f'o{i}' for i in range(len(amounts))])\n")
    assert notes_in(kernel, cell, "keras-validation-data") == []


# ------------------------------------------------------------------ shuffled predictions
MODEL = (
    "feats = np.random.rand(64, 2).astype('float32')\n"
    "truth = feats.sum(axis=1)\n"
    "reg = keras.Sequential([keras.Input((2,)), "
    "keras.layers.Dense(1, kernel_initializer='ones', use_bias=False)])\n"
)
SCORED = (
    "eval_ds = tf.data.Dataset.from_tensor_slices((feats, truth)).shuffle(64).batch(16)\n"
    "guess = reg.predict(eval_ds, verbose=0).ravel()\n"
    "error = float(np.mean(np.abs(guess - truth)))\n"
)


def test_predictions_of_a_shuffled_dataset_against_ordered_targets(
    kernel: KernelSession,
) -> None:
    run(kernel, MODEL)
    [text] = notes_in(kernel, SCORED, "tf-data-order")
    assert value_of(kernel, "error") > 0.1  # the model is exact: only the order is wrong
    assert text.startswith(
        "`guess` comes from `reg.predict(eval_ds, verbose=0)` (line 2 of this cell), and "
        "`eval_ds` has `.shuffle(64)`: the predictions come out in the shuffled order. Line "
        "3 compares them with `truth`, which keeps the original order"
    ), text
    fix = last_code(text)
    assert fix == "eval_ds = tf.data.Dataset.from_tensor_slices((feats, truth)).batch(16)"
    fixed = SCORED.replace(SCORED.splitlines()[0], fix)
    assert notes_in(kernel, fixed, "tf-data-order") == []
    assert value_of(kernel, "error") < 1e-5


def test_predictions_on_arrays_or_scored_by_evaluate_stay_silent(kernel: KernelSession) -> None:
    run(kernel, MODEL)
    on_arrays = "guess = reg.predict(feats, verbose=0).ravel()\nerror = np.abs(guess - truth)\n"
    assert notes_in(kernel, on_arrays, "tf-data-order") == []
    reg_ds = "mix_ds = tf.data.Dataset.from_tensor_slices((feats, truth)).shuffle(64).batch(16)\n"
    evaluated = reg_ds + "reg.compile(loss='mse')\nscore = reg.evaluate(mix_ds, verbose=0)\n"
    assert notes_in(kernel, evaluated, "tf-data-order") == []


# ------------------------------------------------------------------ class weights
GRADES = "grades = np.array([0] * 60 + [1] * 30 + [2] * 10)\n"
WEIGHTS = (
    "freq = np.bincount(grades)\n"
    "weights_by_class = {k: n / len(grades) for k, n in enumerate(freq)}\n"
)


def test_class_weights_that_grow_with_the_class_frequency(kernel: KernelSession) -> None:
    run(kernel, GRADES)
    [text] = notes_in(kernel, WEIGHTS, "labels-and-loss")
    assert (
        value_of(kernel, "bool(weights_by_class[0] > weights_by_class[2])") is True
    )  # the symptom
    assert text.startswith(
        "`weights_by_class` (line 2 of this cell) gives each class a weight that grows with "
        "how often it occurs in `grades`: class 0 (60 examples) weighs 0.6, class 2 (10 "
        "examples) 0.1."
    ), text
    fix = last_code(text)
    assert fix == (
        "weights_by_class = {int(c): len(grades) / (3 * n) for c, n in "
        "zip(*np.unique(grades, return_counts=True))}"
    )
    fixed = WEIGHTS.replace(WEIGHTS.splitlines()[1], fix)
    assert notes_in(kernel, fixed, "labels-and-loss") == []
    assert value_of(kernel, "bool(weights_by_class[2] > weights_by_class[1] > weights_by_class[0])")
    fit = (
        "tiny = keras.Sequential([keras.Input((1,)), keras.layers.Dense(3)])\n"
        "tiny.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))\n"
        "h = tiny.fit(np.zeros((100, 1)), grades, class_weight=weights_by_class, verbose=0)\n"
    )
    run(kernel, fit)


def test_class_weights_read_past_arrays_outside_the_classes(kernel: KernelSession) -> None:
    """Arrays the cell names whose values fall outside the table's classes (an offset
    below 0, ids in the billions) are skipped before any count (``bincount`` sizes its
    result by the largest value), and the labels named after them are still read.
    Before, the negative offsets made ``bincount`` raise and the check gave up."""
    run(kernel, GRADES)
    cell = WEIGHTS + (
        "aa_offsets = np.array([-1, 0, 1, 2] * 10)\n"
        "ab_ids = np.arange(1_700_000_000, 1_700_000_100)\n"
    )
    [text] = notes_in(kernel, cell, "labels-and-loss")
    assert "how often it occurs in `grades`" in text, text


def test_balanced_classes_and_inverse_weights_stay_silent(kernel: KernelSession) -> None:
    even = "pairs_y = np.array([0, 1] * 20)\nw_even = {0: 0.5, 1: 0.5}\n"
    assert notes_in(kernel, even, "labels-and-loss") == []
    run(kernel, GRADES)
    inverse = "inv_weight = {0: 0.5, 1: 1.0, 2: 3.0}\nn_grades = len(grades)\n"
    assert notes_in(kernel, inverse, "labels-and-loss") == []
