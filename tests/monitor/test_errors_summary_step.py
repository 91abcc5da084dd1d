"""A TensorBoard summary written without a step (issue #25,
``errors/families_summary_step.py``): the entry names the summary call, its writer and the
step to give (the optimizer the loop's step function updates, of several); the fix, given
to each summary call of the block, runs. A summary given a step is quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import tempfile
fit_opt = keras.optimizers.Adam(0.01)
spare_opt = keras.optimizers.SGD(0.1)
slope = tf.Variable(0.0)

def one_update(x):
    with tf.GradientTape() as tape:
        loss = (slope * x - 2.0 * x) ** 2
    fit_opt.apply_gradients([(tape.gradient(loss, slope), slope)])
    return loss

log_writer = tf.summary.create_file_writer(tempfile.mkdtemp())
"""
LOOP = """with log_writer.as_default():
    for x in [1.0, 2.0, 3.0]:
        step_loss = one_update(tf.constant(x))
        tf.summary.write("loss", step_loss)
"""


def test_a_summary_without_a_step_gets_the_loops_optimizer_counter(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, SETUP)
    error = failing(kernel, LOOP)
    text = error["explanation"]
    assert error["course"]["section"] == "training-loop"
    assert '`tf.summary.write("loss", step_loss)` under `with log_writer.as_default():`' in text
    assert "gives no step" in text
    assert "`fit_opt.iterations` counts the updates `fit_opt` has applied" in text
    fix = fix_of(text)
    assert fix == 'tf.summary.write("loss", step_loss, step=fit_opt.iterations)'
    runs_cleanly(kernel, LOOP.replace('tf.summary.write("loss", step_loss)', fix))
