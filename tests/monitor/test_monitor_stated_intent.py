"""Computations that contradict the words the learner gave them (issue #25): a "closest"
or "best" pick from the wrong end of a ranking (``symptoms/ranking_direction.py``), a
recall divided by the retrieved count or a precision by the relevant count
(``symptoms/retrieval_metrics.py``), discounted returns summed in a loop that runs
forwards (``symptoms/reverse_recurrence.py``), a per-example value reduced over the
examples' axis and a printed mean that is a sum over every axis
(``symptoms/per_item_reductions.py``), a validation or test figure measured on the
training arrays (``symptoms/split_names.py``), ranked positions compared with ids
(``symptoms/position_ids.py``). Each is told on two variants written here (other
names, NumPy and TensorFlow spellings, top level and inside a ``def``); each printed fix
is put in the cell's place and run: the note is gone and the value is right. The correct
look-alikes stay silent."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

WORDS = (
    "picks the",
    "is meant as",
    "runs forwards in time",
    "reduces over axis 0",
    "a mean",
    "the training data",
    "can never be true",
)


def intent_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [
        note["text"]
        for note in report["notes"]
        if any(word in note["text"] for word in WORDS) and "without any error" in note["text"]
    ]


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def with_line(cell: str, old: str, new: str) -> str:
    """The cell with the line whose text is ``old`` replaced by ``new`` (same indent)."""
    lines = cell.split("\n")
    for index, line in enumerate(lines):
        if line.strip() == old:
            lines[index] = line[: len(line) - len(line.lstrip())] + new
            return "\n".join(lines)
    raise AssertionError((old, cell))


DOCS = """rng = np.random.default_rng(3)
raw = rng.normal(size=(12, 4)).astype("float32")
doc_vecs = tf.constant(raw / np.linalg.norm(raw, axis=1, keepdims=True))
query = doc_vecs[5] * 2.0
"""


def test_closest_pick_from_the_wrong_end_inside_a_function(kernel: KernelSession) -> None:
    run(kernel, DOCS)
    cell = (
        "def closest_docs(q, n=3):\n"
        "    sims = tf.linalg.matvec(doc_vecs, q)\n"
        "    return tf.argsort(sims)[:n]\n"
        "found = closest_docs(query).numpy().tolist()"
    )
    [text] = intent_notes(kernel, cell)
    assert text.startswith(
        "`return tf.argsort(sims)[:n]` (line 3 of this cell, in `closest_docs`) picks the "
        "smallest of `sims`"
    ), text
    assert 'the function `closest_docs` says "closest"' in text
    fixed = spans(text)[-1]
    assert fixed == "return tf.argsort(-sims)[:n]"
    assert intent_notes(kernel, with_line(cell, spans(text)[0], fixed)) == []
    assert value_of(kernel, "found[0]") == 5


def test_best_by_argmin_on_an_affinity_and_nearest_by_tail_of_distances(
    kernel: KernelSession,
) -> None:
    run(kernel, "affinity = np.array([[0.1, 0.9, 0.3], [0.8, 0.2, 0.1]])")
    cell = "best_col = np.argmin(affinity, axis=1)"
    [text] = intent_notes(kernel, cell)
    assert '`best_col` says "best"' in text and "larger value is better" in text
    assert spans(text)[-1] == "best_col = np.argmax(affinity, axis=1)"
    assert intent_notes(kernel, spans(text)[-1]) == []
    assert value_of(kernel, "best_col.tolist()") == [1, 0]
    run(kernel, "gap_distance = np.array([4.0, 0.5, 3.0, 0.1, 9.0])")
    cell = "nearest_two = np.sort(gap_distance)[-2:]"
    [text] = intent_notes(kernel, cell)
    assert "smaller value is better" in text
    assert intent_notes(kernel, spans(text)[-1]) == []
    assert sorted(value_of(kernel, "nearest_two.tolist()")) == [0.1, 0.5]


def test_best_items_mapped_by_a_comprehension_over_the_ranking(kernel: KernelSession) -> None:
    """The pick is the iterator of a comprehension that maps positions to items: the items
    come from the end the ranking was taken at."""
    run(kernel, "titles = ['ant', 'bee', 'cat', 'dog', 'eel']\n" + DOCS)
    cell = (
        "def best_titles(q, n=2):\n"
        "    affinity = (doc_vecs[:5] @ tf.reshape(q, (-1, 1)))[:, 0].numpy()\n"
        "    return [titles[j] for j in np.argsort(affinity)[:n]]\n"
        "picked = best_titles(doc_vecs[3])"
    )
    [text] = intent_notes(kernel, cell)
    assert text.startswith(
        "`return [titles[j] for j in np.argsort(affinity)[:n]]` (line 3 of this cell, in "
        "`best_titles`) picks the smallest of `affinity`"
    ), text
    fixed = spans(text)[-1]
    assert fixed == "return [titles[j] for j in np.argsort(-affinity)[:n]]"
    assert intent_notes(kernel, with_line(cell, spans(text)[0], fixed)) == []
    assert value_of(kernel, "picked[0]") == "dog"  # doc 3 is most like itself
    # A second spelling: a generator given to ``list``, at the top level, over a tensor.
    run(kernel, "match = tf.linalg.matvec(doc_vecs, query)")
    other = "top_ids = list(int(i) for i in tf.argsort(match)[:3])"
    [text] = intent_notes(kernel, other)
    assert spans(text)[-1] == "top_ids = list(int(i) for i in tf.argsort(-match)[:3])"
    run(kernel, spans(text)[-1])
    assert value_of(kernel, "top_ids[0]") == 5
    # Look-alike: the comprehension over the highest first.
    right = "top_ids = [int(i) for i in tf.argsort(match, direction='DESCENDING')[:3]]"
    assert intent_notes(kernel, right) == []


def test_correct_rankings_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DOCS)
    cell = (
        "sims = tf.linalg.matvec(doc_vecs, query).numpy()\n"
        "top_docs = np.argsort(-sims)[:3]\n"
        "best_three = np.argsort(sims)[::-1][:3]\n"
        "highest = np.argsort(sims)[-3:]\n"
        "dists = np.linalg.norm(doc_vecs.numpy() - query.numpy(), axis=1)\n"
        "nearest = np.argsort(dists)[:3]\n"
        "worst_fit = np.argsort(dists)[-2:]\n"
        "print('closest doc:', int(np.argmin(dists)))\n"
        "low_match = sims.max() < 0.5\n"
        "def worst_misses(scores, wanted):\n"
        "    guess = np.argmax(scores)\n"
        "    return np.where(guess != wanted)[0]"
    )
    assert intent_notes(kernel, cell) == []


LISTS = """shown_by_user = {"ann": [3, 8, 1, 9, 4], "bo": [2, 7, 5, 6, 0]}
liked_by_user = {"ann": {3, 11}, "bo": {7, 5, 12, 13}}
TOP_K = 5
"""


def test_recall_divided_by_the_cut_off(kernel: KernelSession) -> None:
    run(kernel, LISTS)
    cell = (
        "recall_scores = []\n"
        "for who, liked in liked_by_user.items():\n"
        "    got = set(shown_by_user[who]) & liked\n"
        "    recall_scores.append(len(got) / TOP_K)\n"
        "print('recall@5:', np.mean(recall_scores))"
    )
    [text] = intent_notes(kernel, cell)
    assert "is meant as recall but divides by `TOP_K`" in text
    fixed = spans(text)[-1]
    assert fixed == "recall_scores.append(len(got) / len(liked))"
    assert intent_notes(kernel, with_line(cell, spans(text)[0], fixed)) == []
    assert value_of(kernel, "float(np.mean(recall_scores))") == pytest.approx(0.5)


def test_precision_from_counts_and_recall_from_a_confusion_matrix(kernel: KernelSession) -> None:
    run(kernel, "y_true = np.array([1, 1, 1, 0, 0, 1]); y_hat = np.array([1, 0, 0, 0, 1, 1])")
    cell = (
        "tp = int(np.sum((y_hat == 1) & (y_true == 1)))\n"
        "fp = int(np.sum((y_hat == 1) & (y_true == 0)))\n"
        "fn = int(np.sum((y_hat == 0) & (y_true == 1)))\n"
        "prec = tp / (tp + fn)\n"
        "print('precision', prec)"
    )
    [text] = intent_notes(kernel, cell)
    fixed = spans(text)[-1]
    assert fixed == "prec = tp / (tp + fp)"
    assert intent_notes(kernel, with_line(cell, "prec = tp / (tp + fn)", fixed)) == []
    assert value_of(kernel, "prec") == pytest.approx(2 / 3)
    cell = (
        "cm = tf.math.confusion_matrix(y_true, y_hat, num_classes=2).numpy()\n"
        "class_recall = np.diag(cm) / cm.sum(axis=0)"
    )
    [text] = intent_notes(kernel, cell)
    fixed = spans(text)[-1]
    assert fixed == "class_recall = np.diag(cm) / cm.sum(axis=1)"
    run(kernel, "cm = tf.math.confusion_matrix(y_true, y_hat, num_classes=2).numpy()")
    assert intent_notes(kernel, fixed) == []
    assert value_of(kernel, "class_recall.tolist()") == pytest.approx([0.5, 0.5])


def test_correct_retrieval_metrics_stay_silent(kernel: KernelSession) -> None:
    run(kernel, LISTS)
    cell = (
        "rec, prec = [], []\n"
        "for who, liked in liked_by_user.items():\n"
        "    got = set(shown_by_user[who]) & liked\n"
        "    rec.append(len(got) / len(liked))\n"
        "    prec.append(len(got) / TOP_K)\n"
        "print('recall', np.mean(rec), 'precision@5', np.mean(prec))\n"
        "def precision_at(shown, liked, k):\n"
        "    return len(set(shown[:k]) & liked) / k"
    )
    assert intent_notes(kernel, cell) == []


def test_returns_summed_forwards_in_a_function_and_a_loop(kernel: KernelSession) -> None:
    cell = (
        "def reward_to_go(rs, discount=0.9):\n"
        "    acc = 0.0\n"
        "    togo = np.zeros(len(rs))\n"
        "    for step in range(len(rs)):\n"
        "        acc = rs[step] + discount * acc\n"
        "        togo[step] = acc\n"
        "    return togo\n"
        "out = reward_to_go([0.0, 0.0, 1.0]).tolist()"
    )
    [text] = intent_notes(kernel, cell)
    assert text.startswith(
        "The loop `for step in range(len(rs)):` (line 4 of this cell, in `reward_to_go`)"
    ), text
    fixed = spans(text)[-1]
    assert fixed == "for step in reversed(range(len(rs))):"
    assert intent_notes(kernel, with_line(cell, "for step in range(len(rs)):", fixed)) == []
    assert value_of(kernel, "out") == pytest.approx([0.81, 0.9, 1.0])
    run(kernel, "episode = tf.constant([1.0, 0.0, 2.0])")
    cell = (
        "gamma = 0.5\n"
        "G = 0.0\n"
        "disc_returns = []\n"
        "for r in episode.numpy():\n"
        "    G = G * gamma + r\n"
        "    disc_returns.append(G)"
    )
    [text] = intent_notes(kernel, cell)
    found = spans(text)
    assert found[-3:] == [
        "for r in reversed(episode.numpy()):",
        "disc_returns.insert(0, G)",
        "disc_returns.append(G)",
    ]
    fixed = with_line(cell, "for r in episode.numpy():", found[-3])
    fixed = with_line(fixed, "disc_returns.append(G)", found[-2])
    assert intent_notes(kernel, fixed) == []
    assert value_of(kernel, "[float(g) for g in disc_returns]") == pytest.approx([1.5, 1.0, 2.0])


def test_backward_returns_and_moving_averages_stay_silent(kernel: KernelSession) -> None:
    cell = (
        "gamma = 0.9\n"
        "rews = [0.0, 1.0, 0.0]\n"
        "running, returns = 0.0, [0.0] * 3\n"
        "for t in range(len(rews) - 1, -1, -1):\n"
        "    running = rews[t] + gamma * running\n"
        "    returns[t] = running\n"
        "smooth_loss, decay = 0.0, 0.9\n"
        "for v in [1.0, 2.0, 3.0]:\n"
        "    smooth_loss = decay * smooth_loss + (1 - decay) * v"
    )
    assert intent_notes(kernel, cell) == []


def test_per_example_value_reduced_over_the_examples_axis(kernel: KernelSession) -> None:
    run(kernel, "batch = np.arange(24, dtype='float32').reshape(6, 2, 2)")
    cell = "per_sample_energy = tf.reduce_sum(tf.square(batch), axis=0)"
    [text] = intent_notes(kernel, cell)
    assert "the axis of the 6 examples of `tf.square(batch)` (shape (6, 2, 2))" in text
    fixed = spans(text)[-1]
    assert fixed == "per_sample_energy = tf.reduce_sum(tf.square(batch), axis=(1, 2))"
    assert intent_notes(kernel, fixed) == []
    assert value_of(kernel, "per_sample_energy.shape.as_list()") == [6]


def test_printed_mean_that_is_a_full_sum(kernel: KernelSession) -> None:
    run(kernel, "logp = np.log(np.full((8, 4), 0.25))")
    cell = "nll = -np.sum(logp)\nprint(f'average NLL per sequence: {nll:.3f}')"
    [text] = intent_notes(kernel, cell)
    assert "8 times the per-row mean" in text
    fixed = spans(text)[-1]
    assert fixed == "nll = -np.mean(np.sum(logp, axis=-1))"
    assert intent_notes(kernel, fixed + "\nprint(f'average NLL per sequence: {nll:.3f}')") == []
    assert value_of(kernel, "round(float(nll), 4)") == pytest.approx(4 * math.log(4), abs=1e-3)
    run(kernel, "step_losses = tf.constant([0.5, 1.5, 1.0, 1.0])")
    cell = "avg_step_loss = tf.reduce_sum(step_losses)"
    [text] = intent_notes(kernel, cell)
    assert spans(text)[-1] == "avg_step_loss = tf.reduce_mean(step_losses)"


def test_correct_reductions_stay_silent(kernel: KernelSession) -> None:
    run(kernel, "table = np.arange(12, dtype='float32').reshape(4, 3)")
    cell = (
        "per_feature_mean = table.mean(axis=0)\n"
        "per_row_total = table.sum(axis=1)\n"
        "total = np.sum(table)\n"
        "print('total of all cells:', total)\n"
        "mean_cell = np.sum(table) / table.size\n"
        "print('mean per cell:', mean_cell)"
    )
    assert intent_notes(kernel, cell) == []


SPLITS = """rng = np.random.default_rng(5)
feats_train = rng.normal(size=(64, 3)).astype("float32")
target_train = (feats_train @ np.array([1.0, -2.0, 0.5], dtype="float32")).astype("float32")
feats_val = rng.normal(size=(16, 3)).astype("float32")
target_val = (feats_val @ np.array([1.0, -2.0, 0.5], dtype="float32")).astype("float32")
reg = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
reg.compile(optimizer="sgd", loss="mse")
reg.fit(feats_train, target_train, epochs=2, verbose=0)
"""


def test_validation_figures_measured_on_training_arrays(kernel: KernelSession) -> None:
    run(kernel, SPLITS)
    cell = "val_mse = reg.evaluate(feats_train, target_train, verbose=0)"
    [text] = intent_notes(kernel, cell)
    assert text.startswith("`val_mse` says validation, but"), text
    fixed = spans(text)[-1]
    assert fixed == "val_mse = reg.evaluate(feats_val, target_val, verbose=0)"
    assert intent_notes(kernel, fixed) == []
    expected = "float(np.mean((reg(feats_val).numpy().ravel() - target_val) ** 2))"
    assert value_of(kernel, f"abs(val_mse - {expected}) < 1e-4") is True
    run(kernel, "X_tr, y_tr, X_te, y_te = feats_train, target_train, feats_val, target_val")
    cell = "print('test MAE', float(tf.reduce_mean(tf.abs(reg(X_tr)[:, 0] - y_tr))))"
    [text] = intent_notes(kernel, cell)
    assert text.startswith("The printed label says test"), text
    fixed = spans(text)[-1]
    assert fixed == "print('test MAE', float(tf.reduce_mean(tf.abs(reg(X_te)[:, 0] - y_te))))"
    assert intent_notes(kernel, fixed) == []


def test_training_figures_and_splits_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SPLITS)
    cell = (
        "train_mse = reg.evaluate(feats_train, target_train, verbose=0)\n"
        "val_mse = reg.evaluate(feats_val, target_val, verbose=0)\n"
        "feats_valid = feats_train[-8:]\n"
        "print('validation rows:', len(feats_val), 'train rows:', len(feats_train))"
    )
    assert intent_notes(kernel, cell) == []


CATALOGUE = """song_codes = np.arange(500, 560)
rng = np.random.default_rng(0)
affinity_m = tf.constant(rng.normal(size=(8, 60)).astype("float32"))
answer_codes = song_codes[np.argmax(affinity_m.numpy(), axis=1)]
"""


def test_ranked_positions_compared_with_ids(kernel: KernelSession) -> None:
    run(kernel, CATALOGUE)
    cell = (
        "best5 = tf.math.top_k(affinity_m, k=5).indices.numpy()\n"
        "found = [answer_codes[i] in best5[i] for i in range(8)]\n"
        "hit_rate = float(np.mean(found))"
    )
    [text] = intent_notes(kernel, cell)
    assert text.startswith("`answer_codes[i] in best5[i]` (line 2 of this cell) can never"), text
    fixed = spans(text)[-1]
    assert fixed == "best5 = song_codes[tf.math.top_k(affinity_m, k=5).indices.numpy()]"
    fixed_cell = cell.replace(cell.split("\n")[0], fixed)
    assert intent_notes(kernel, fixed_cell) == []
    assert value_of(kernel, "hit_rate") == 1.0
    cell = (
        "order = np.argsort(-affinity_m.numpy(), axis=1)[:, :3]\nhit = np.isin(answer_codes, order)"
    )
    [text] = intent_notes(kernel, cell)
    assert spans(text)[-1] == "order = song_codes[np.argsort(-affinity_m.numpy(), axis=1)[:, :3]]"


def test_positions_compared_with_positions_stay_silent(kernel: KernelSession) -> None:
    run(kernel, CATALOGUE)
    cell = (
        "answer_pos = np.argmax(affinity_m.numpy(), axis=1)\n"
        "best5 = tf.math.top_k(affinity_m, k=5).indices.numpy()\n"
        "found = [answer_pos[i] in best5[i] for i in range(8)]\n"
        "ids5 = song_codes[best5]\n"
        "same = np.isin(answer_codes, ids5)"
    )
    assert intent_notes(kernel, cell) == []
