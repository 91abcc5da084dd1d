"""A cross-entropy whose softmaxes normalise over one axis while its sum adds up another
(issue #25, ``symptoms/distribution_axes.py``): the learner's own listwise loss in a
``def``, its rank read from the arrays the cell calls it with, and a top-level one summed
over the examples' axis. Written with other names and APIs than any notebook; each
printed fix is put in the cell's place and run: the note is gone and the value is the
row-wise cross-entropy computed with NumPy. Correct look-alikes (the same axis, a 1-D
input where both axes are one, a softmax times weights summed over the examples) stay
silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "class-axis"

SETUP = (
    "import numpy as np\n"
    "import tensorflow as tf\n"
    "import keras\n"
    "prefs = np.random.default_rng(3).normal(size=(4, 6)).astype('float32')\n"
    "guesses = np.random.default_rng(4).normal(size=(4, 6)).astype('float32')\n"
    "def row_xent(a, b):\n"
    "    pa = np.exp(a) / np.exp(a).sum(-1, keepdims=True)\n"
    "    pb = np.exp(b) / np.exp(b).sum(-1, keepdims=True)\n"
    "    return float(np.mean(-(pa * np.log(pb)).sum(-1)))\n"
)


def axis_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [
        note["text"]
        for note in report["notes"]
        if (note["course"] or {}).get("section") == SECTION and "normalise" in note["text"]
    ]


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


PLAYLIST = """def playlist_xent(liked, predicted):
    wanted = keras.ops.softmax(liked, axis=0)
    log_pred = tf.math.log(tf.nn.softmax(predicted, axis=0) + 1e-9)
    per_user = -tf.reduce_sum(wanted * log_pred, axis=1)
    return float(tf.reduce_mean(per_user))

xent = playlist_xent(prefs, guesses)
"""


def test_listwise_loss_normalised_over_the_rows(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = axis_notes(kernel, PLAYLIST)
    assert text.startswith(
        "`tf.reduce_sum(wanted * log_pred, axis=1)` (line 4 in `playlist_xent`) adds up over "
        "axis 1, but `wanted = keras.ops.softmax(liked, axis=0)` (line 2) and "
        "`log_pred = tf.math.log(tf.nn.softmax(predicted, axis=0) + 1e-9)` (line 3) "
        "normalise over axis 0"
    ), text
    assert "the input reads `prefs` (4, 6), given to `playlist_xent`" in text
    fixes = spans(text)[-2:]
    assert fixes == [
        "wanted = keras.ops.softmax(liked, axis=1)",
        "log_pred = tf.math.log(tf.nn.softmax(predicted, axis=1) + 1e-9)",
    ]
    fixed = PLAYLIST.replace("wanted = keras.ops.softmax(liked, axis=0)", fixes[0]).replace(
        "log_pred = tf.math.log(tf.nn.softmax(predicted, axis=0) + 1e-9)", fixes[1]
    )
    assert axis_notes(kernel, fixed) == []
    assert value_of(kernel, "abs(xent - row_xent(prefs, guesses)) < 1e-4") is True


TOP_LEVEL = """p_true = tf.nn.softmax(prefs)
log_q = tf.nn.log_softmax(guesses)
per_row = -tf.reduce_sum(p_true * log_q, axis=0)
"""


def test_sum_over_the_examples_axis_is_moved(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = axis_notes(kernel, TOP_LEVEL)
    assert "`prefs` (4, 6)" in text
    assert "normalise over axis -1" in text
    fix = spans(text)[-1]
    assert fix == "per_row = -tf.reduce_sum(p_true * log_q, axis=-1)"
    assert axis_notes(kernel, TOP_LEVEL.replace(TOP_LEVEL.splitlines()[2], fix)) == []
    assert value_of(kernel, "list(per_row.shape)") == [4]
    assert value_of(kernel, "abs(float(tf.reduce_mean(per_row)) - row_xent(prefs, guesses)) < 1e-4")


def test_matching_axes_and_one_dimensional_lists_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    assert axis_notes(kernel, PLAYLIST.replace("axis=0", "axis=1")) == []
    # One list: axis 0 and axis -1 are the same axis.
    assert (
        axis_notes(
            kernel,
            PLAYLIST.replace("axis=1", "axis=-1").replace(
                "playlist_xent(prefs, guesses)", "playlist_xent(prefs[0], guesses[0])"
            ),
        )
        == []
    )
    # Probabilities times per-example weights summed over the examples: soft class counts.
    assert (
        axis_notes(
            kernel,
            "share = tf.nn.softmax(guesses)\n"
            "weights_per_user = np.ones((4, 1), 'float32')\n"
            "soft_counts = tf.reduce_sum(share * weights_per_user, axis=0)\n",
        )
        == []
    )
