"""A tf.Variable made inside a tf.function from the function's own argument (issue #25,
``_made_from_arguments`` in ``errors/graph.py``): moving that line out of the function
would name a value that does not exist there, so the entry never prints that fix. Made only
to take a gradient with respect to it, the tensor is watched by the tape instead: the
printed fix (convert, then ``tape.watch``) runs on inputs of two shapes and gives the
gradients. A variable made from other values still gets the move-out fix."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """scorer = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(3)])
batch = np.random.rand(4, 5).astype("float32")
"""

SALIENCY = """@tf.function
def input_grad(inp):
    probe = tf.Variable(inp)
    with tf.GradientTape() as g:
        top = tf.reduce_max(scorer(probe), axis=1)
    return g.gradient(top, probe)
first = input_grad(batch[:2])
second = input_grad(batch[2:])
"""


def test_a_variable_wrapping_an_input_for_its_gradient_is_watched(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    error = failing(kernel, SALIENCY)
    text = error["explanation"]
    assert "Its value comes from `inp`, known only inside `input_grad`" in text
    assert "put it before line" not in text
    assert "Fix: write line 3 as `probe = tf.convert_to_tensor(inp)`" in text
    assert "put `g.watch(probe)` before line 5, the first line inside" in text
    fixed = SALIENCY.replace("tf.Variable(inp)", "tf.convert_to_tensor(inp)").replace(
        "as g:\n", "as g:\n        g.watch(probe)\n"
    )
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "[list(first.shape), list(second.shape)]") == [[2, 5], [2, 5]]
    assert value_of(kernel, "bool(tf.reduce_any(first != 0))") is True


def test_a_variable_sized_from_an_input_gets_no_move_out_fix(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "@tf.function\n"
        "def running(inp):\n"
        "    acc = tf.Variable(tf.zeros_like(inp))\n"
        "    acc.assign_add(inp)\n"
        "    return acc.read_value()\n"
        "running(batch)\n"
        "running(batch[:2])"
    )
    text = failing(kernel, cell)["explanation"]
    assert "Its value comes from `inp`" in text and "Fix:" not in text
    assert "from a value of the same shape" in text


def test_a_variable_of_a_constant_is_still_moved_out(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "@tf.function\n"
        "def tally(inp):\n"
        "    seen = tf.Variable(0.0)\n"
        "    seen.assign_add(tf.reduce_sum(inp))\n"
        "    return seen.read_value()\n"
        "tally(batch)\n"
        "tally(batch[:2])"
    )
    text = failing(kernel, cell)["explanation"]
    assert "put it before line 1" in text and "`seen = tf.Variable(0.0)`" in text
