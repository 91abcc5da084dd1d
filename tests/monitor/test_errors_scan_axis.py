"""tf.scan walking the batch axis where time was meant (errors/families_scan_axis.py): the
entry names the scan, the axis it walks and the state's batch rows, and prints the scan's
statement with time put first and the batch put back first in the result; the fixed
function runs and gives (batch, time, units). A time-major scan stays silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_scan_over_batch_major_sequences(kernel: KernelSession) -> None:
    cell = """mix_in = tf.random.normal((5, 6)) * 0.1
mix_state = tf.random.normal((10, 10)) * 0.1

def leaky_pass(seqs):                    # seqs: (examples, steps, 5)
    start = tf.zeros((tf.shape(seqs)[0], 10))
    def advance(state, frame):
        return 0.5 * state + tf.matmul(frame, mix_in)[:, :10] @ tf.eye(10)[:6 * 0 + 10]
    return tf.scan(advance, seqs, initializer=start)

print(leaky_pass(tf.random.normal((3, 9, 5))).shape)
"""
    cell = cell.replace(
        "tf.matmul(frame, mix_in)[:, :10] @ tf.eye(10)[:6 * 0 + 10]",
        "tf.pad(tf.matmul(frame, mix_in), [[0, 0], [0, 4]])",
    )
    text = failing(kernel, cell)["explanation"]
    assert "once per entry of the FIRST axis of `seqs` (3, 9, 5)" in text, text
    assert "is the batch (3), not the 9 time steps" in text, text
    fix = fix_of(text)
    assert fix == (
        "return tf.transpose(tf.scan(advance, tf.transpose(seqs, [1, 0, 2]), "
        "initializer=start), [1, 0, 2])"
    )
    runs_cleanly(kernel, cell.replace("return tf.scan(advance, seqs, initializer=start)", fix))
    assert value_of(kernel, "list(leaky_pass(tf.random.normal((3, 9, 5))).shape)") == [3, 9, 10]


def test_a_foldl_over_batch_major_sequences_with_matmul(kernel: KernelSession) -> None:
    cell = """proj = tf.ones((4, 2))

def last_summary(tracks):                # tracks: (riders, laps, 4)
    init = tf.zeros((tracks.shape[0], 2))
    return tf.foldl(lambda acc, lap: acc + tf.matmul(lap, proj), tracks, initializer=init)

print(last_summary(tf.ones((6, 8, 4))).shape)
"""
    text = failing(kernel, cell)["explanation"]
    assert "is the batch (6), not the 8 time steps" in text, text
    fix = fix_of(text)
    runs_cleanly(
        kernel,
        cell.replace(
            "return tf.foldl(lambda acc, lap: acc + tf.matmul(lap, proj), tracks, "
            "initializer=init)",
            fix,
        ),
    )
    assert fix == (
        "return tf.foldl(lambda acc, lap: acc + tf.matmul(lap, proj), "
        "tf.transpose(tracks, [1, 0, 2]), initializer=init)"
    )
    assert value_of(kernel, "last_summary(tf.ones((6, 8, 4))).numpy().tolist()") == [[32.0] * 2] * 6
    # Look-alike: a time-major scan, no entry.
    runs_cleanly(
        kernel,
        "steps_first = tf.ones((8, 6, 4))\n"
        "ok = tf.scan(lambda acc, lap: acc + tf.matmul(lap, proj), steps_first, "
        "initializer=tf.zeros((6, 2)))\nprint(ok.shape)",
    )
