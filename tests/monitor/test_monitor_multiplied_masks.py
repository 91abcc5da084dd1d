"""Scores masked by multiplying with a 0/1 mask, then given to a softmax (issue #25, silent
bugs): the masked entries become scores of 0 that still take probability; a self-excluding
log-sum-exp and a causal attention are told with the product turned into a large negative
score; the fix runs in the kernel and the masked entries then weigh nothing. An additive
mask, a mask applied to probabilities and a diagonal read out by a product stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """gen = np.random.default_rng(5)
feats = tf.constant(gen.normal(size=(6, 3)), tf.float32)
T = 4
q_rows = gen.normal(size=(T, 8)).astype("float32")
k_rows = gen.normal(size=(T, 8)).astype("float32")
"""


def mask_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "not minus infinity" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("where the mask is 0: ", 1)[1])[0]


def test_a_self_excluding_logsumexp(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """def others_lse(emb):
    sims = tf.matmul(emb, emb, transpose_b=True)
    m = tf.shape(emb)[0]
    sims = sims * (1. - tf.eye(m))
    return tf.reduce_logsumexp(sims, axis=1)

spread = others_lse(feats)
"""
    notes = mask_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`sims = sims * (1. - tf.eye(m))` (line 4 in `others_lse`) masks by multiplying "
        "with `1. - tf.eye(m)`"
    )
    fix = fix_of(notes[0])
    assert fix == "sims = sims - 1e9 * tf.eye(m)"
    fixed = cell.replace("sims = sims * (1. - tf.eye(m))", fix)
    assert mask_notes(checked_report(run(kernel, fixed))) == []
    check = """full = (feats @ tf.transpose(feats)).numpy()
np.fill_diagonal(full, -np.inf)
want = np.log(np.exp(full).sum(axis=1))
assert np.allclose(spread.numpy(), want, atol=1e-4)
"""
    checked_report(run(kernel, check))


def test_a_causal_attention_masked_by_a_product(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """keep = np.tril(np.ones((T, T), dtype="float32"))
att = q_rows @ k_rows.T
att *= keep
weights = tf.nn.softmax(att, axis=-1)
"""
    notes = mask_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`att *= keep` (line 3 of this cell) masks by multiplying")
    fix = fix_of(notes[0])
    assert fix == "att = att - 1e9 * (1.0 - keep)"
    fixed = cell.replace("att *= keep", fix)
    assert mask_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, "assert float(weights[0, 1:].numpy().sum()) < 1e-6"))
    inline = """lower = tf.linalg.band_part(tf.ones((T, T)), -1, 0)
def attend(q, k):
    s = tf.matmul(q, k, transpose_b=True)
    return tf.nn.softmax(s * lower, axis=-1)
"""
    notes = mask_notes(checked_report(run(kernel, inline)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("The product with `lower` given to `tf.nn.softmax` (line 4")
    assert "`s - 1e9 * (1.0 - lower)` in its place" in notes[0]


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """blocked = 1.0 - np.tril(np.ones((T, T), dtype="float32"))
att = q_rows @ k_rows.T - 1e9 * blocked
weights = tf.nn.softmax(att, axis=-1)
sims = feats @ tf.transpose(feats)
own = tf.reduce_sum(sims * tf.eye(6), axis=1)
probs = tf.nn.softmax(sims) * (1.0 - tf.eye(6))
probs = probs / tf.reduce_sum(probs, axis=1, keepdims=True)
"""
    assert mask_notes(checked_report(run(kernel, cell))) == []


def test_a_padding_mask_made_from_a_condition(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """def choice_loss(picks, scores, valid_n):
    live = tf.cast(tf.sequence_mask(valid_n, 5), tf.float32)
    scores = scores * live
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=picks, logits=scores)

menu = tf.constant([[1.0, 2.0, -1.0, 0.0, 0.0], [0.5, 3.0, 0.0, 0.0, 0.0]])
choice = choice_loss(tf.constant([0, 1]), menu, tf.constant([3, 2]))
"""
    notes = mask_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`scores = scores * live` (line 3 in `choice_loss`) masks by multiplying with `live`"
    )
    fix = fix_of(notes[0])
    assert fix == "scores = scores - 1e9 * (1.0 - live)"
    fixed = cell.replace("scores = scores * live", fix)
    assert mask_notes(checked_report(run(kernel, fixed))) == []
    check = """first = -np.log(np.exp(1.0) / np.exp([1.0, 2.0, -1.0]).sum())
second = -np.log(np.exp(3.0) / np.exp([0.5, 3.0]).sum())
assert np.allclose(choice.numpy(), [first, second], atol=1e-5), choice
"""
    checked_report(run(kernel, check))
    inline = """tok = np.array([[4, 9, 0, 0]])
att = np.array([[-1.0, -2.0, 0.5, 0.5]], dtype="float32")
share = keras.ops.softmax(att * (tok != 0).astype("float32"))
"""
    notes = mask_notes(checked_report(run(kernel, inline)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        'The product with `(tok != 0).astype("float32")` given to `keras.ops.softmax` (line 3'
    )
    assert '`att - 1e9 * (1.0 - (tok != 0).astype("float32"))` in its place' in notes[0]


def test_padding_masks_applied_after_the_softmax_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """def padded_losses(picks, scores, valid_n):
    live = tf.cast(tf.sequence_mask(valid_n, 5), tf.float32)
    per_item = tf.nn.softmax_cross_entropy_with_logits(labels=picks, logits=scores)
    mean_loss = tf.reduce_sum(per_item * live) / tf.reduce_sum(live)
    probs = tf.nn.softmax(scores) * live
    total = tf.reduce_sum(scores * live, axis=-1)
    kept = tf.nn.softmax(tf.where(live > 0, scores, -1e9))
    added = tf.nn.log_softmax(scores + (1.0 - live) * -1e9)
    return mean_loss, probs, total, kept, added
"""
    assert mask_notes(checked_report(run(kernel, cell))) == []
