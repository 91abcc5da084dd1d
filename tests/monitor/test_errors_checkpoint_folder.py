"""A checkpoint restored from its folder, or from a prefix without its save number (issue
#25, ``errors/families_checkpoint_folder.py``): the entry says restore takes a prefix and
fixes the call with ``tf.train.latest_checkpoint(folder)``; the printed fix runs in the
kernel and brings the saved value back. Restoring the prefix itself gets no entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_managers_folder_given_to_restore(kernel: KernelSession, tmp_path: Path) -> None:
    folder = str(tmp_path / "saves")
    runs_cleanly(
        kernel,
        "scale = tf.Variable(3.0)\n"
        f"store = tf.train.CheckpointManager(tf.train.Checkpoint(scale=scale), {folder!r}, 2)\n"
        "store.save()\n"
        "fresh = tf.Variable(0.0)\n"
        f"runs_dir = {folder!r}",
    )
    cell = "tf.train.Checkpoint(scale=fresh).restore(runs_dir)"
    error = failing(kernel, cell)
    assert error["course"]["section"] == "keras-saving"
    text = error["explanation"]
    assert "`runs_dir` is the folder holding the checkpoints" in text
    fix = fix_of(text)
    assert fix == "tf.train.Checkpoint(scale=fresh).restore(tf.train.latest_checkpoint(runs_dir))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(fresh)") == 3.0
    # The prefix the manager names: no entry.
    runs_cleanly(kernel, "tf.train.Checkpoint(scale=fresh).read(store.latest_checkpoint)")


def test_a_prefix_without_its_save_number(kernel: KernelSession, tmp_path: Path) -> None:
    prefix = str(tmp_path / "weights" / "step")
    runs_cleanly(
        kernel,
        "bias = tf.Variable([1.0, 2.0])\n"
        f"tf.train.Checkpoint(b=bias).save({prefix!r})\n"
        "again = tf.Variable([0.0, 0.0])",
    )
    error = failing(kernel, f"tf.train.Checkpoint(b=again).restore({prefix!r}).expect_partial()")
    text = error["explanation"]
    assert "`save` adds the save number" in text
    fix = fix_of(text)
    folder = str(tmp_path / "weights")
    assert fix == (
        f"tf.train.Checkpoint(b=again).restore(tf.train.latest_checkpoint({folder!r}))"
        ".expect_partial()"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "again.numpy().tolist()") == [1.0, 2.0]
