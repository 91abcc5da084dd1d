"""``tf.nn.ctc_beam_search_decoder`` always takes the last class as the CTC blank (issue
#25, ``symptoms/ctc_blanks.py``'s ``beam_search_blank``): in a session whose CTC calls say
the blank is class 0, the decoder's entry (TensorFlow 1's ``merge_repeated`` refused,
``errors/families_arguments.py``) and a note after a cell that ran it say so, with the fix:
the scores rolled one class down, then the ids moved back up. The fix is run and decodes
the sequences the scores spell. A session whose blank is the last class stays silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")

# Two clips of 6 frames over 4 classes, class 0 the blank: each frame's score peaks on
# one class, so the clips spell [1, 2, 3] and [3, 3, 2].
FRAMES = """spelled = np.array([[1, 1, 0, 2, 0, 3], [3, 0, 3, 2, 2, 0]])
frame_scores = np.transpose(np.eye(4, dtype=np.float32)[spelled] * 10.0, (1, 0, 2))
clip_lengths = np.array([6, 6], np.int32)
greedy, _ = tf.nn.ctc_greedy_decoder(frame_scores, clip_lengths, blank_index=0)
"""

BEAM = """found, found_logp = tf.nn.ctc_beam_search_decoder(frame_scores, clip_lengths,
                                                   beam_width=5, top_paths=2,
                                                   merge_repeated=False)
"""


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_beam_search_with_a_tf1_keyword_in_a_blank_zero_session(kernel: KernelSession) -> None:
    run(kernel, FRAMES)
    error = failing(kernel, BEAM)
    text = error["explanation"]
    assert "`merge_repeated` is an argument of TensorFlow 1's version" in text
    assert "`tf.nn.ctc_beam_search_decoder` always takes the last class" in text, text
    assert "`tf.nn.ctc_greedy_decoder` in cell In[" in text
    assert "(its `blank_index=0`)" in text
    assert error["course"]["section"] == "labels-and-loss"
    fix = text.split("Fix: ", 1)[1]
    decode, shift = spans(fix)[-2:]
    assert decode == (
        "found, found_logp = tf.nn.ctc_beam_search_decoder(tf.roll(frame_scores, shift=-1, "
        "axis=-1), clip_lengths, beam_width=5, top_paths=2)"
    )
    assert shift == (
        "found = [tf.SparseTensor(p.indices, p.values + 1, p.dense_shape) for p in found]"
    )
    run(kernel, decode + "\n" + shift)
    assert value_of(kernel, "tf.sparse.to_dense(found[0]).numpy().tolist()") == [
        [1, 2, 3],
        [3, 3, 2],
    ]
    assert value_of(kernel, "tf.sparse.to_dense(greedy[0]).numpy().tolist()") == [
        [1, 2, 3],
        [3, 3, 2],
    ]


def beam_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "always takes the last class" in n["text"]]


def test_a_beam_search_that_ran_gets_the_note(kernel: KernelSession) -> None:
    run(kernel, FRAMES)
    cell = "top, top_logp = tf.nn.ctc_beam_search_decoder(frame_scores, clip_lengths)\n"
    [text] = beam_notes(kernel, cell)
    assert text.startswith("Line 1 of this cell: `tf.nn.ctc_beam_search_decoder`"), text
    decode, shift = spans(text)[-2:]
    assert decode == (
        "top, top_logp = tf.nn.ctc_beam_search_decoder(tf.roll(frame_scores, shift=-1, "
        "axis=-1), clip_lengths)"
    )
    # As written, the blank's scores were read as a label's: the result is wrong.
    assert value_of(kernel, "tf.sparse.to_dense(top[0]).numpy().tolist()") != [
        [1, 2, 3],
        [3, 3, 2],
    ]
    assert beam_notes(kernel, decode + "\n" + shift) == []
    assert value_of(kernel, "tf.sparse.to_dense(top[0]).numpy().tolist()") == [
        [1, 2, 3],
        [3, 3, 2],
    ]


def test_a_session_whose_blank_is_last_stays_silent(kernel: KernelSession) -> None:
    run(kernel, FRAMES)
    cell = (
        "last_scores = tf.roll(frame_scores, shift=-1, axis=-1)\n"
        "plain, _ = tf.nn.ctc_greedy_decoder(last_scores, clip_lengths)\n"
        "best, best_logp = tf.nn.ctc_beam_search_decoder(last_scores, clip_lengths)\n"
    )
    assert beam_notes(kernel, cell) == []
