"""A partial checkpoint restore asserted complete names every object it left out (issue
#25): a checkpoint saved with a model, its optimizer and a counter, restored into a
Checkpoint of the model alone, holds two objects nobody claims; the error names the
first only, the entry names both (read from the restore status's object graph), and
its fix (``assert_existing_objects_matched()``) runs. A restore into every saved object
but one keeps the one-object wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")


def _saved(tmp_path: Path) -> str:
    return (
        "net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])\n"
        "sgd = keras.optimizers.SGD(0.1, momentum=0.9)\n"
        "with tf.GradientTape() as tape:\n"
        "    loss = tf.reduce_sum(net(tf.ones((4, 3))))\n"
        "sgd.apply_gradients(zip(tape.gradient(loss, net.trainable_variables), "
        "net.trainable_variables))\n"
        "epoch = tf.Variable(3)\n"
        "written = tf.train.Checkpoint(net=net, opt=sgd, epoch=epoch)"
        f".save({str(tmp_path / 'run')!r})"
    )


def test_every_saved_object_left_out_is_named(kernel: KernelSession, tmp_path: Path) -> None:
    runs_cleanly(kernel, _saved(tmp_path))
    cell = (
        "copy = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])\n"
        "loaded = tf.train.Checkpoint(net=copy).restore(written)\nloaded.assert_consumed()"
    )
    text = failing(kernel, cell)["explanation"]
    assert "The checkpoint holds `epoch` and `opt` (saved under `epoch=`, `opt=`)" in text
    fix = fix_of(text)
    assert fix == "loaded.assert_existing_objects_matched()"
    runs_cleanly(
        kernel,
        cell.replace("loaded.assert_consumed()", fix)
        + "\nassert np.allclose(copy.get_weights()[0], net.get_weights()[0])",
    )
    # A Checkpoint of the learner's, given the model and the counter: one object left out.
    named = (
        "partial = tf.train.Checkpoint(net=copy, epoch=tf.Variable(0))\n"
        "got = partial.restore(written)\ngot.assert_consumed()"
    )
    text = failing(kernel, named)["explanation"]
    assert "`partial`, the checkpoint you restored into, has no object for it" in text
    assert "`epoch`" not in text.split("has no object")[0]
    runs_cleanly(kernel, named.replace("got.assert_consumed()", fix_of(text)))
