"""A Keras layer or model called with its inputs as several positional arguments
(``errors/families_positional_inputs.py``): Python's message names ``training``, an
argument the learner never wrote; the entry says where each value went in ``call``'s
signature and prints the call meant, which runs in the kernel."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]


def test_a_two_input_model_given_two_arguments(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "query_in = keras.Input((4,))\ndoc_in = keras.Input((6,))\n"
        "matcher = keras.Model([query_in, doc_in], keras.layers.Dense(1)("
        "keras.layers.Concatenate()([query_in, doc_in])))\n"
        "qs = np.random.rand(7, 4).astype('float32')\nds_ = np.random.rand(7, 6).astype('float32')",
    )
    error = failing(kernel, "match = matcher(qs, ds_)")
    text = error["explanation"]
    assert "further positional arguments" in text and "`training`" in text
    fix = fix_of(text)
    assert fix == "matcher([qs, ds_])"
    runs_cleanly(kernel, f"match = {fix}")
    assert value_of(kernel, "list(match.shape)") == [7, 1]
    # The list the model expects stays quiet.
    runs_cleanly(kernel, "again = matcher([qs, ds_], training=False)")


def test_a_critic_given_two_batches_of_rows(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "critic = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])\n"
        "made = tf.random.uniform((5, 3))\npool = np.random.rand(40, 3).astype('float32')",
    )
    error = failing(kernel, "verdicts = tf.sigmoid(critic(made, pool[:5]))")
    text = error["explanation"]
    assert "`pool[:5]` into `training`" in text
    assert "same shape after the batch axis" in text
    fix = fix_of(text)
    assert fix == "verdicts = tf.sigmoid(critic(tf.concat([made, pool[:5]], axis=0)))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(verdicts.shape)") == [10, 1]
    # A layer called the same way is read the same; rows of different widths: one call each.
    runs_cleanly(kernel, "head = keras.layers.Dense(2)\nwide = tf.ones((5, 4))")
    error = failing(kernel, "head(made, wide)")
    assert "Dense layer" in error["explanation"]
    assert "once per value" in error["explanation"]
    runs_cleanly(kernel, "fine = critic(made, training=True)")
