"""A ``tf.train.Checkpoint.restore`` that matched nothing (issue #25, a restore that
restores nothing and raises nothing): the new checkpoint tracks the network under another
name than the one it was saved under. The entry names the checkpoint, the object and both
names, and gives the construction with the saved name; that fix applied restores the
weights and gets no entry. A restore under the saved name stays silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import tempfile\nimport numpy as np\nimport tensorflow as tf\n", after_load=""
)

SETUP = """class Scale(tf.Module):
    def __init__(self, start):
        super().__init__()
        self.k = tf.Variable([start])

    def __call__(self, x):
        return x * self.k

trained = Scale(5.0)
saver = tf.train.Checkpoint(net_weights=trained, step=tf.Variable(3))
saved_at = saver.save(tempfile.mkdtemp() + "/run")
"""

CELL = """fresh = Scale(0.0)
loader = tf.train.Checkpoint(scale=fresh)
loader.restore(saved_at)
same = bool(np.allclose(fresh(np.ones(1)), trained(np.ones(1))))
"""


def saving_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "keras-saving"
    ]


def test_restore_under_another_name(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = saving_notes(checked_report(run(kernel, CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`loader` tracks `fresh` as `scale`, but the checkpoint file holds only "
        "`net_weights`, `step`"
    ), text
    fix = "loader = tf.train.Checkpoint(net_weights=fresh)"
    assert f"`{fix}`" in text
    assert value_of(kernel, "same") is False
    fixed = CELL.replace("loader = tf.train.Checkpoint(scale=fresh)", fix)
    assert saving_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "same") is True


def test_restore_under_the_saved_name_stays_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    silent = CELL.replace("scale=fresh", "net_weights=fresh")
    assert saving_notes(checked_report(run(kernel, silent))) == []
