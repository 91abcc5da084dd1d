"""Sequence scores given to a CTC op in the other layout (issue #25,
``errors/families_time_major.py``): ``tf.nn.ctc_loss`` reads its logits time-major unless
told otherwise, the CTC decoders only take time-major inputs. The entry names the layout
from the values (the batch size the other arguments give sits on the wrong axis of the
scores), and its fix (the flag, or a transpose) runs in the kernel. Calls in the right
layout, and a CTC error with the scores in the right layout, get no such entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """scores = tf.random.normal((6, 9, 5))
frames_len = np.full(6, 9, dtype="int32")
targets = np.array(
    [[1, 2, 0], [3, 3, 0], [2, 0, 0], [1, 1, 2], [4, 0, 0], [2, 3, 0]], dtype="int32"
)
target_len = np.array([2, 2, 1, 3, 1, 2], dtype="int32")
steps_first = tf.transpose(scores, [1, 0, 2])
"""


def test_batch_major_logits_given_to_ctc_loss(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = (
        "per_clip = tf.nn.ctc_loss(targets, scores, target_len,\n"
        "                          frames_len, blank_index=0)"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert (
        "`tf.nn.ctc_loss` reads `logits` time-major, (time, batch, classes), unless it is "
        "given `logits_time_major=False` (the flag defaults to True)"
    ) in text, text
    assert "`scores` is (6, 9, 5): its first axis is 6, the batch size `targets` (6, 3), " in text
    assert "`tf.transpose(scores, [1, 0, 2])`" in text
    fix = fix_of(text)
    assert fix == (
        "per_clip = tf.nn.ctc_loss(targets, scores, target_len, frames_len, blank_index=0, "
        "logits_time_major=False)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(per_clip.shape)") == [6]


def test_batch_major_scores_given_to_a_decoder(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, "paths, _ = tf.nn.ctc_greedy_decoder(scores, frames_len[:6] - 2)")
    text = error["explanation"]
    assert (
        "`tf.nn.ctc_greedy_decoder` reads `inputs` time-major, (time, batch, classes) (it has "
        "no flag for another layout)"
    ) in text, text
    assert "`frames_len[:6] - 2` (6,)" in text
    assert "the op took 9 for the batch" in text
    fix = fix_of(text)
    assert fix == (
        "paths, _ = tf.nn.ctc_greedy_decoder(tf.transpose(scores, [1, 0, 2]), frames_len[:6] - 2)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "int(paths[0].dense_shape[0])") == 6


def test_time_major_logits_with_the_flag_set_false(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = (
        "per_clip = tf.nn.ctc_loss(labels=targets, logits=steps_first, label_length=target_len,"
        " logit_length=frames_len, logits_time_major=False)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "so it reads `logits` batch-major, (batch, time, classes)" in text, text
    assert "`steps_first` is (9, 6, 5): its second axis is 6" in text
    fix = fix_of(text)
    assert fix == cell.replace("logits_time_major=False", "logits_time_major=True")
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(per_clip.shape)") == [6]


def test_the_right_layout_stays_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(
        kernel,
        "ok = tf.nn.ctc_loss(targets, scores, target_len, frames_len, logits_time_major=False)\n"
        "decoded, _ = tf.nn.ctc_beam_search_decoder(steps_first, frames_len, beam_width=3)",
    )
    # Lengths for 4 sequences beside scores of 6 in the right layout: not a layout mistake.
    text = failing(kernel, "d, _ = tf.nn.ctc_greedy_decoder(steps_first, frames_len[:4])")[
        "explanation"
    ]
    assert "time-major" not in text, text


def test_lengths_written_with_fill_or_full_give_the_batch(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "clips = np.zeros((5, 12, 3), 'float32')\nn_frames = 12\n"
        "frame_scores = tf.random.normal((len(clips), n_frames, 4))",
    )
    cell = (
        "best, _ = tf.nn.ctc_greedy_decoder(frame_scores,\n"
        "                                   sequence_length=tf.fill([len(clips)], n_frames))"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`tf.fill([len(clips)], n_frames)` (5,)" in text, text
    assert "the op took 12 for the batch" in text
    fix = fix_of(text)
    assert fix == (
        "best, _ = tf.nn.ctc_greedy_decoder(tf.transpose(frame_scores, [1, 0, 2]), "
        "sequence_length=tf.fill([len(clips)], n_frames))"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "int(best[0].dense_shape[0])") == 5
    cell = (
        "beams, _ = tf.nn.ctc_beam_search_decoder(frame_scores, np.full(5, n_frames, 'int32'),"
        " beam_width=3)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`np.full(5, n_frames, 'int32')` (5,)" in text, text
    fix = fix_of(text)
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "int(beams[0].dense_shape[0])") == 5
    # In the right layout, lengths written the same way: no error, no entry.
    runs_cleanly(
        kernel,
        "ok, _ = tf.nn.ctc_greedy_decoder(tf.transpose(frame_scores, [1, 0, 2]),"
        " tf.fill([len(clips)], n_frames))",
    )
