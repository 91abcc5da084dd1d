"""A mean of values times a padding mask divides by every position, padding included
(issue #25, silent bugs): told where it is written (a function or the top level, TensorFlow
or NumPy), fixed to the sum over the sum of the mask; each fix runs in the kernel and
gives the mean over the real positions. Correct look-alikes stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """ids = np.array([[4, 2, 7, 0, 0, 0], [5, 1, 1, 3, 8, 0], [9, 9, 0, 0, 0, 0]], "int32")
hits = np.array([[1, 0, 1, 1, 1, 1], [1, 1, 1, 0, 1, 1], [0, 1, 1, 1, 1, 1]], "float32")
real_mean = hits[ids != 0].mean()
"""


def mask_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "divides by every position" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(
        r"`([^`]+)`",
        text.split(
            "keeps instead: " if "keeps instead: " in text else "real positions instead: ", 1
        )[1],
    )[0]


def test_a_masked_accuracy_in_a_function(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """def token_hits(tokens, correct):
    keep = tf.cast(tf.not_equal(tokens, 0), tf.float32)
    return tf.reduce_mean(correct * keep)
"""
    notes = mask_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`tf.reduce_mean(correct * keep)` (line 3 of this cell, in `token_hits`) divides"
    )
    fix = fix_of(notes[0])
    assert fix == "tf.reduce_sum(correct * keep) / tf.reduce_sum(keep)"
    fixed = cell.replace("tf.reduce_mean(correct * keep)", fix)
    assert mask_notes(checked_report(run(kernel, fixed))) == []
    check = "assert abs(float(token_hits(ids, hits)) - real_mean) < 1e-6"
    checked_report(run(kernel, check))


def test_numpy_and_a_mask_parameter(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """weights = (ids > 0).astype("float32")
share = np.mean(hits * weights)
"""
    notes = mask_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix == "np.sum(hits * weights) / np.sum(weights)"
    checked_report(run(kernel, cell.replace("np.mean(hits * weights)", fix)))
    checked_report(run(kernel, "assert abs(share - real_mean) < 1e-6"))
    cell = """def scored(values, pad_mask):
    return (values * pad_mask).mean()
"""
    notes = mask_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    fix = fix_of(notes[0])
    assert fix == "(values * pad_mask).sum() / pad_mask.sum()"
    assert (
        mask_notes(checked_report(run(kernel, cell.replace("(values * pad_mask).mean()", fix))))
        == []
    )
    checked_report(run(kernel, "assert abs(scored(hits, ids != 0) - real_mean) < 1e-6"))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = """def fine(tokens, correct, scale):
    keep = tf.cast(tokens != 0, tf.float32)
    a = tf.reduce_sum(correct * keep) / tf.reduce_sum(keep)
    b = tf.reduce_mean(correct * keep) / tf.reduce_mean(keep)
    c = tf.reduce_mean(correct * scale)
    d = tf.reduce_mean(correct + (1.0 - keep) * -1e9)
    e = tf.reduce_mean(correct * keep, axis=1)
    noise = tf.cast(tf.random.uniform(tf.shape(correct)) > 0.5, tf.float32)
    return a + b + c + d + tf.reduce_mean(correct * noise)

fine(ids, hits, 2.0)
"""
    assert mask_notes(checked_report(run(kernel, cell))) == []


POOLING = """class AverageOverSteps(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, steps, mask=None):
        weights = tf.cast(mask, steps.dtype)
        weights = tf.expand_dims(weights, 2)
        return tf.reduce_mean(steps * weights, axis=1)

    def compute_mask(self, steps, mask=None):
        return None

lookup = keras.layers.Embedding(10, 3, mask_zero=True)
vectors = lookup(ids)
summary = AverageOverSteps()(vectors, mask=lookup.compute_mask(ids))
"""


def axis_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "averages over axis" in note["text"]]


def test_a_pooling_layer_over_its_mask_axis(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = axis_notes(checked_report(run(kernel, POOLING)))
    assert text.startswith(
        "`tf.reduce_mean(steps * weights, axis=1)` (line 9 of this cell, in "
        "`AverageOverSteps.call`) averages over axis 1, the positions `weights` (made from "
        "`mask`) marks, and divides by all of them"
    ), text
    fix = fix_of(text)
    assert fix == "tf.reduce_sum(steps * weights, axis=1) / tf.reduce_sum(weights, axis=1)"
    fixed = POOLING.replace("tf.reduce_mean(steps * weights, axis=1)", fix)
    report = checked_report(run(kernel, fixed))
    assert axis_notes(report) == [] and mask_notes(report) == []
    # Fixed, each row is the mean of its real steps' vectors.
    check = """table = lookup.get_weights()[0]
wanted = np.stack([table[row[row != 0]].mean(axis=0) for row in ids])
print(np.allclose(summary.numpy(), wanted, atol=1e-6))"""
    assert run(kernel, check).stdout.strip() == "True"


def test_look_alikes_of_a_mean_along_an_axis(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # A mean over the features axis, along which the mask does not vary, then masked.
    features = POOLING.replace(
        "tf.reduce_mean(steps * weights, axis=1)", "tf.reduce_mean(steps * weights, axis=-1)"
    )
    assert axis_notes(checked_report(run(kernel, features))) == []
    # The mean divided by the mean of the mask: the masked mean already.
    ratio = POOLING.replace(
        "tf.reduce_mean(steps * weights, axis=1)",
        "tf.reduce_mean(steps * weights, axis=1) / tf.reduce_mean(weights, axis=1)",
    )
    assert axis_notes(checked_report(run(kernel, ratio))) == []
    # A function's mask of unknown layout, averaged along an axis: left alone.
    unknown = """def per_row(values, row_mask):
    return tf.reduce_mean(values * row_mask, axis=1)
"""
    assert axis_notes(checked_report(run(kernel, unknown))) == []


def test_a_masked_product_bound_to_a_name_and_a_padding_id_held_in_a_constant(
    kernel: KernelSession,
) -> None:
    """The product on a line of its own (``scored = ... * keep``) and the padding id a
    constant of the notebook (``BLANK = 0``): the mean of that name is the same mistake."""
    run(kernel, DATA + "BLANK = 0\n")
    cell = """def tag_precision(gold, guessed):
    keep = tf.cast(gold != BLANK, tf.float32)
    scored = tf.cast(gold == guessed, tf.float32) * keep
    return tf.reduce_mean(scored)
"""
    notes = mask_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`tf.reduce_mean(scored)` (line 4 of this cell, in `tag_precision`) divides"
    )
    fix = fix_of(notes[0])
    assert fix == "tf.reduce_sum(scored) / tf.reduce_sum(keep)"
    fixed = cell.replace("tf.reduce_mean(scored)", fix)
    assert mask_notes(checked_report(run(kernel, fixed))) == []
    # ``ids`` against a guess right on every real position: the fixed mean is 1.
    guess = "guess = np.where(ids != 0, ids, 7)\n"
    checked_report(run(kernel, guess + "assert float(tag_precision(ids, guess)) == 1.0"))


def test_look_alikes_of_a_bound_product_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA + "BLANK = 0\nSHIFT = 2\n")
    for cell in (
        # The product named, then summed and divided by the mask's sum: right.
        "keep = (ids != BLANK).astype('float32')\nscored = hits * keep\n"
        "rate = scored.sum() / keep.sum()",
        # A name bound twice: the mean reads the second, unmasked value.
        "keep = (ids != BLANK).astype('float32')\nscored = hits * keep\nscored = hits + 0\n"
        "rate = np.mean(scored)",
        # A test against a constant that is not 0 is not a padding mask.
        "keep = (ids != SHIFT).astype('float32')\nscored = hits * keep\nrate = np.mean(scored)",
    ):
        assert mask_notes(checked_report(run(kernel, cell))) == [], cell
