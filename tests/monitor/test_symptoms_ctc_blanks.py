"""A CTC loss left at its default blank (class 0) while the session's other CTC calls take
another class as the blank (issue #25, ``symptoms/ctc_blanks.py``): a decoder's default
(the last class) or a ``blank_index`` written in an earlier loss. The note names both
calls, its fix run as printed computes the loss with the session's blank and the note
goes; a session whose newest known blank is 0 stays silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """acts = tf.random.normal((7, 3, 6))
frame_counts = np.full(3, 7, dtype="int32")
tags = np.array([[1, 2], [3, 1], [2, 4]], dtype="int32")
tag_len = np.array([2, 2, 2], dtype="int32")
"""


def notes_in(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [
        n["text"]
        for n in report["notes"]
        if (n["course"] or {}).get("section") == "labels-and-loss" and "blank" in n["text"]
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


LOSS = (
    "def seq_loss(labels, scores, label_len, frame_len):\n"
    "    return tf.reduce_mean(tf.nn.ctc_loss(labels, scores, label_len,\n"
    "                                         frame_len))\n"
    "value = float(seq_loss(tags, acts, tag_len, frame_counts))\n"
)


def test_a_default_loss_after_a_decoder_with_its_default(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    assert notes_in(kernel, "best, _ = tf.nn.ctc_greedy_decoder(acts, frame_counts)") == []
    [text] = notes_in(kernel, LOSS)
    assert text.startswith(
        "`tf.nn.ctc_loss` (line 2 of this cell) is not given `blank_index`, so it trains "
        "class 0 as the CTC blank, but `tf.nn.ctc_greedy_decoder` in cell In["
    ), text
    assert "takes the last class as the blank (its default)" in text
    fix = last_code(text)
    assert fix == "tf.nn.ctc_loss(labels, scores, label_len, frame_len, blank_index=-1)"
    written = LOSS[LOSS.index("tf.nn.ctc_loss(") : LOSS.index("frame_len))") + len("frame_len)")]
    fixed = LOSS.replace(written, fix)
    assert notes_in(kernel, fixed) == []
    last = "float(tf.reduce_mean(tf.nn.ctc_loss(tags, acts, tag_len, frame_counts, blank_index=5)))"
    assert value_of(kernel, f"abs(value - {last}) < 1e-5") is True


def test_a_default_loss_after_a_loss_given_its_blank(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    assert (
        notes_in(
            kernel,
            "SIL = 5\nfirst = tf.nn.ctc_loss(tags, acts, tag_len, frame_counts, blank_index=SIL)",
        )
        == []
    )
    [text] = notes_in(kernel, "again = tf.nn.ctc_loss(tags, acts, tag_len, frame_counts)")
    assert "takes class 5 as the blank (its `blank_index=SIL`)" in text, text
    fix = last_code(text)
    assert fix == "tf.nn.ctc_loss(tags, acts, tag_len, frame_counts, blank_index=SIL)"
    assert notes_in(kernel, f"again = {fix}") == []


def test_a_session_whose_newest_blank_is_zero_stays_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    assert (
        notes_in(kernel, "b0, _ = tf.nn.ctc_greedy_decoder(acts, frame_counts, blank_index=0)")
        == []
    )
    assert notes_in(kernel, LOSS) == []
    assert (
        notes_in(kernel, "given = tf.nn.ctc_loss(tags, acts, tag_len, frame_counts, blank_index=0)")
        == []
    )
