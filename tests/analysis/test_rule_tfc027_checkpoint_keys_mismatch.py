from __future__ import annotations

import textwrap

import pytest

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span
from tests.tf_runner import run_tensorflow

CODE = "TFC027"

# Runnable: a module's gains saved through a manager and restored into a fresh module under
# another key. The restore matches nothing (the status assertion raises) and the gains stay
# at their initial ones; with the saved key they come back.
GAINS = """\
import os
import tempfile

import tensorflow as tf


class Scaler(tf.Module):
    def __init__(self):
        self.gain = tf.Variable([1.0, 1.0, 1.0])


store = tempfile.mkdtemp()
trained = Scaler()
trained.gain.assign([0.5, 2.0, 4.0])
saver = tf.train.Checkpoint(scaler=trained)
manager = tf.train.CheckpointManager(saver, os.path.join(store, "runs"), max_to_keep=1)
manager.save()

fresh = Scaler()
status = tf.train.Checkpoint(weights=fresh).restore(manager.latest_checkpoint)
try:
    status.assert_existing_objects_matched()
    matched = "matched"
except AssertionError:
    matched = "matched nothing"
print(matched, fresh.gain.numpy().tolist())
"""
GAINS_FIXED = GAINS.replace("Checkpoint(weights=fresh)", "Checkpoint(scaler=fresh)")

FIX_CASES = (FixCase(CODE, GAINS, GAINS_FIXED, "a manager's latest checkpoint"),)


def test_a_managed_checkpoint_restored_under_another_key():
    [finding] = check(GAINS, CODE)
    assert span(finding) == (20, 10, 20, 44)
    assert finding.message == (
        "`tf.train.Checkpoint(weights=fresh)` restores `manager.latest_checkpoint` under the "
        "key `weights`, but that checkpoint was saved by `tf.train.Checkpoint(scaler=trained)` "
        "under the key `scaler`: a restore matches the saved keys, not the objects, so `fresh` "
        "finds nothing and keeps its fresh values, and nothing raises. Restore with the saved "
        "keys: `tf.train.Checkpoint(scaler=fresh)`"
    )
    assert finding.section_id == "keras-saving"
    assert fixed(GAINS, finding) == GAINS_FIXED


@pytest.mark.tensorflow
def test_the_mismatched_restore_matches_nothing_and_the_fixed_one_restores():
    mismatched, repaired = run_tensorflow(GAINS, GAINS_FIXED)
    assert mismatched.error is None and repaired.error is None
    assert mismatched.stdout.strip() == "matched nothing [1.0, 1.0, 1.0]"
    assert repaired.stdout.strip() == "matched [0.5, 2.0, 4.0]"


def test_the_same_object_under_another_key_in_a_function_run_twice():
    source = """\
        import tempfile

        import keras
        import tensorflow as tf

        runs = tempfile.mkdtemp()

        def resume(epochs):
            encoder = keras.Sequential([keras.Input((5,)), keras.layers.Dense(2)])
            adam = keras.optimizers.Adam()
            keeper = tf.train.CheckpointManager(
                tf.train.Checkpoint(encoder=encoder, opt=adam), runs, max_to_keep=3
            )
            tf.train.Checkpoint(enc=encoder, opt=adam).restore(keeper.latest_checkpoint)
            for epoch in range(epochs):
                keeper.save()
        """
    [finding] = check(source, CODE)
    assert span(finding) == (14, 5, 14, 47)
    assert "under the keys `enc`, `opt`" in finding.message
    assert "under the keys `encoder`, `opt`" in finding.message
    assert "so `encoder` finds nothing" in finding.message
    assert finding.message.endswith("`tf.train.Checkpoint(encoder=encoder, opt=adam)`")
    assert fixed(source, finding).splitlines()[13] == (
        "    tf.train.Checkpoint(encoder=encoder, opt=adam).restore(keeper.latest_checkpoint)"
    )


def test_the_path_save_returned_and_a_latest_checkpoint_of_the_folder():
    source = """\
        import os
        import tensorflow as tf

        layer = tf.Module()
        layer.kernel = tf.Variable([[1.0]])
        where = tf.train.Checkpoint(layer=layer).save(os.path.join("/tmp/exp", "step"))
        copy = tf.Module()
        copy.kernel = tf.Variable([[0.0]])
        tf.train.Checkpoint(module=copy).read(where)
        tf.train.Checkpoint(net=copy).restore(tf.train.latest_checkpoint("/tmp/exp"))
        """
    read, latest = check(source, CODE)
    assert span(read) == (9, 1, 9, 33)
    assert "restores `where` under the key `module`" in read.message
    assert fixed(source, read).splitlines()[8] == "tf.train.Checkpoint(layer=copy).read(where)"
    assert "under the key `layer`" in latest.message
    assert fixed(source, latest).splitlines()[9] == (
        'tf.train.Checkpoint(layer=copy).restore(tf.train.latest_checkpoint("/tmp/exp"))'
    )


def test_a_written_path_read_back_in_notebook_cells():
    cells = [
        "import tensorflow as tf\nbias = tf.Variable(0.5)\nstate = tf.train.Checkpoint(b=bias)",
        "target = '/tmp/bias_ckpt'\nstate.write(target)",
        "restored = tf.train.Checkpoint(bias=bias)\nrestored.read(target)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line, finding.column) == (2, 1, 12)
    assert "saved by `tf.train.Checkpoint(b=bias)` under the key `b`" in finding.message


def test_keys_it_cannot_pair_are_named_without_a_fix():
    source = """\
        import tensorflow as tf

        def save_and_load(tower_a, tower_b, twin_a, twin_b, folder):
            manager = tf.train.CheckpointManager(
                tf.train.Checkpoint(left=tower_a, right=tower_b), folder, max_to_keep=1
            )
            manager.save()
            tf.train.Checkpoint(first=twin_a, second=twin_b).restore(manager.latest_checkpoint)
        """
    [finding] = check(source, CODE)
    assert finding.fix is None
    assert finding.message.endswith(
        "Restore with the keys it was saved under (`left`, `right` for the objects they "
        "hold), or through the saving checkpoint itself"
    )


def test_silent_look_alikes():
    source = """\
        import os
        import tempfile

        import keras
        import tensorflow as tf

        folder = tempfile.mkdtemp()
        other = tempfile.mkdtemp()
        net = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        opt = keras.optimizers.SGD()

        # the same keys, in two objects
        tf.train.Checkpoint(model=net, optimizer=opt).save(os.path.join(folder, "a"))
        tf.train.Checkpoint(model=net, optimizer=opt).restore(tf.train.latest_checkpoint(folder))

        # one checkpoint object for both
        both = tf.train.Checkpoint(weights=net)
        first = both.save(os.path.join(other, "b"))
        both.restore(first)

        # a subset of the saved keys: the model without its optimizer
        tf.train.Checkpoint(model=net).restore(tf.train.latest_checkpoint(folder))

        # another folder
        tf.train.Checkpoint(params=net).restore(tf.train.latest_checkpoint("/elsewhere"))

        # Keras weights files
        net.save_weights(os.path.join(folder, "net.weights.h5"))
        net.load_weights(os.path.join(folder, "net.weights.h5"))

        # keys unknown to the analysis
        parts = {"model": net}
        tf.train.Checkpoint(**parts).restore(tf.train.latest_checkpoint(other))
        tf.train.Checkpoint(root=net).restore(first)
        """
    assert check(source, CODE) == []


def test_silent_when_the_same_spelling_is_another_folder():
    source = """\
        import tensorflow as tf

        def save(model, folder):
            tf.train.Checkpoint(model=model).save(folder + "/ckpt")

        def load(model, folder):
            tf.train.Checkpoint(net=model).restore(tf.train.latest_checkpoint(folder))
        """
    assert check(source, CODE) == []


def test_silent_when_the_saving_checkpoint_is_rebound():
    source = """\
        import tensorflow as tf

        def both(model, optimizer, prefix, resume):
            state = tf.train.Checkpoint(model=model)
            if resume:
                state = tf.train.Checkpoint(weights=model, optimizer=optimizer)
            saved = state.save(prefix)
            tf.train.Checkpoint(weights=model).restore(saved)
        """
    assert check(source, CODE) == []


def test_the_fix_keeps_the_rest_of_the_line():
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        steps = tf.Variable(0)
        path = tf.train.Checkpoint(counter=steps).save("/tmp/counter/ckpt")
        status = tf.train.Checkpoint(step=steps).restore(path)  # resume
        status.expect_partial()
        """
    )
    [finding] = check(source, CODE)
    assert fixed(source, finding).splitlines()[4] == (
        "status = tf.train.Checkpoint(counter=steps).restore(path)  # resume"
    )
