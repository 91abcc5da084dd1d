"""A causal attention mask built as the upper triangle (issue #25,
``symptoms/causal_masks.py``): ``band_part(ones, 0, -1)`` used as the positions a query
may attend to lets each position see the future. Told for a hand-written attention
function whose mask is named as the positions kept, and for a Keras MultiHeadAttention
given the upper triangle as ``attention_mask``; each fix, applied, hides the later
positions (the first position's output no longer changes with the last token). The lower
triangle used as the positions allowed, its complement used as the positions hidden, and
an upper triangle multiplied as the positions hidden stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """keras.utils.set_random_seed(2)
tokens = tf.random.normal((2, 6, 8))
changed = tf.concat([tokens[:, :-1], tokens[:, -1:] + 5.0], axis=1)
"""


def mask_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "upper triangle" in n["text"]]


ATTEND = """def attend(seq):
    n = tf.shape(seq)[1]
    logits = tf.matmul(seq, seq, transpose_b=True)
    keep = tf.linalg.band_part(tf.ones([n, n]), num_lower=0, num_upper=-1)
    logits = tf.where(keep > 0, logits, -1e9)
    return tf.matmul(tf.nn.softmax(logits, axis=-1), seq)
"""


def test_hand_written_attention_keeps_the_upper_triangle(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = mask_notes(ATTEND, kernel)
    assert text.startswith(
        "`tf.linalg.band_part(tf.ones([n, n]), num_lower=0, num_upper=-1)` (line 4 of this "
        "cell, in `attend`) keeps the upper triangle"
    )
    fix = fix_in(text)
    assert fix == "keep = tf.linalg.band_part(tf.ones([n, n]), num_lower=-1, num_upper=0)"
    fixed = ATTEND.replace(
        "keep = tf.linalg.band_part(tf.ones([n, n]), num_lower=0, num_upper=-1)", fix
    )
    assert mask_notes(fixed, kernel) == []
    # With the causal mask, the first position's output ignores a change of the last token.
    first = "float(tf.reduce_max(tf.abs(attend(tokens)[:, 0] - attend(changed)[:, 0])))"
    assert value_of(kernel, first) < 1e-5


def test_multi_head_attention_given_the_upper_triangle(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "heads = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)\n"
        "future = tf.linalg.band_part(tf.ones((6, 6)), 0, -1)\n"
        "mixed = heads(tokens, tokens, attention_mask=future)"
    )
    [text] = mask_notes(cell, kernel)
    assert "read as `heads(tokens, tokens, attention_mask=future)` on line 3" in text
    fix = fix_in(text)
    assert fix == "future = tf.linalg.band_part(tf.ones((6, 6)), -1, 0)"
    run(kernel, fix)
    first = (
        "float(tf.reduce_max(tf.abs(heads(tokens, tokens, attention_mask=future)[:, 0]"
        " - heads(changed, changed, attention_mask=future)[:, 0])))"
    )
    assert value_of(kernel, first) < 1e-5


def test_causal_masks_written_right_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    fine = (
        "lower = tf.linalg.band_part(tf.ones((6, 6)), -1, 0)\n"
        "att = keras.layers.MultiHeadAttention(num_heads=1, key_dim=4)\n"
        "a = att(tokens, tokens, attention_mask=lower)\n"
        "hidden = 1.0 - tf.linalg.band_part(tf.ones((6, 6)), -1, 0)\n"
        "s = tf.matmul(tokens, tokens, transpose_b=True) + hidden * -1e9\n"
        "ahead = tf.linalg.band_part(tf.ones((6, 6)), 0, -1) - tf.eye(6)\n"
        "w = tf.nn.softmax(s + ahead * -1e9, axis=-1)\n"
    )
    assert mask_notes(fine, kernel) == []
