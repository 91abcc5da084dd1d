"""A learner's Keras layer that scores each example with a dot product written as a sum
without an axis (``symptoms/batch_totals.py``): called on a batch, it gives one number
for the whole batch. The note names the call, the layer's return and the fix with
``axis=-1``; the fixed layer gives one score per row, equal to each row's own dot
product. A layer meant to give a total (a mean, a scaled sum), a layer summing each row,
and a single example stay silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SCORER = """class PairScorer(keras.layers.Layer):
    def __init__(self, n_users, n_items, width, **kwargs):
        super().__init__(**kwargs)
        self.users = self.add_weight(name="users", shape=(n_users, width), initializer="ones")
        self.items = self.add_weight(name="items", shape=(n_items, width), initializer="ones")

    def call(self, pairs):
        u = tf.gather(self.users, pairs[:, 0])
        v = tf.gather(self.items, pairs[:, 1])
        return {returned}

ratings_seen = np.array([[0, 1], [2, 2], [1, 0], [3, 1], [0, 0]], dtype=np.int32)
scorer = PairScorer(4, 3, 6)
scorer.users.assign(tf.reshape(tf.range(24.0), (4, 6)))
"""


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    return note_texts(checked_report(run(kernel, code)))


def test_a_dot_product_summed_without_an_axis_scores_the_batch(kernel: KernelSession) -> None:
    assert notes_of(kernel, SCORER.format(returned="tf.reduce_sum(u * v)")) == []
    notes = [
        n for n in notes_of(kernel, "affinity = scorer(ratings_seen[1:])") if "PairScorer" in n
    ]
    assert len(notes) == 1, notes
    text = notes[0]
    assert "`scorer(ratings_seen[1:])` gave `affinity` a single number" in text, text
    assert "for 4 rows of `ratings_seen[1:]`" in text
    assert "`PairScorer.call` returns `tf.reduce_sum(u * v)`" in text
    fix = "return tf.reduce_sum(u * v, axis=-1)"
    assert f"`{fix}`" in text
    # The fix, written in the class: one score per pair, each its user's row summed
    # (the items are all ones).
    fixed_class = SCORER.format(returned=fix[len("return ") :])
    assert notes_of(kernel, fixed_class + "affinity = scorer(ratings_seen[1:])") == []
    assert value_of(kernel, "affinity.numpy().tolist()") == [87.0, 51.0, 123.0, 15.0]


def test_totals_meant_and_single_rows_stay_silent(kernel: KernelSession) -> None:
    for returned in (
        "tf.reduce_mean(u * v)",  # a mean over the batch: a loss-like total
        "0.5 * tf.reduce_sum(u * v)",  # a scaled total
        "tf.reduce_sum(u * v, axis=1)",  # each row's own dot product
    ):
        code = SCORER.format(returned=returned) + "affinity = scorer(ratings_seen)"
        assert [n for n in notes_of(kernel, code) if "PairScorer" in n] == [], returned
    # One example: a single number is one score.
    code = SCORER.format(returned="tf.reduce_sum(u * v)") + "one = scorer(ratings_seen[:1])"
    assert [n for n in notes_of(kernel, code) if "PairScorer" in n] == []
