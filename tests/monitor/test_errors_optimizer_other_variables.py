"""One optimizer stepping a second set of the learner's own variables
(``errors/optimizer_variables.py``).

A Keras 3 optimizer that stepped ``canvas`` refuses ``sketch`` ("Unknown variable"). The
entry names both variables and prints a new optimizer made as the first was, placed above
the loop, and the step with it; applied, the loop runs and moves ``sketch``. A second
optimizer from the start runs without an entry."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

FIRST = """canvas = tf.Variable(tf.fill([3, 5], 4.0))
painter = keras.optimizers.RMSprop(learning_rate=0.05)
for sweep in range(3):
    with tf.GradientTape() as recorder:
        blur = tf.reduce_mean(canvas ** 2)
    painter.apply_gradients([(recorder.gradient(blur, canvas), canvas)])
"""

SECOND = """sketch = tf.Variable(tf.fill([3, 5], -2.0))
for sweep in range(3):
    with tf.GradientTape() as recorder:
        blur = tf.reduce_mean(sketch ** 2)
    d_sketch = recorder.gradient(blur, sketch)
    painter.apply_gradients([(d_sketch, sketch)])"""


def test_a_second_variable_stepped_by_the_first_ones_optimizer(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FIRST)
    error = failing(kernel, SECOND)
    text = error["explanation"]
    assert error["course"]["section"] == "parameters-are-variables"
    assert "`painter` (one RMSprop optimizer) was built for `canvas`" in text, text
    assert "`sketch` is another variable" in text
    assert "creates its variables again" not in text
    creation, step = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])[:2]
    assert creation == "sketch_optimizer = keras.optimizers.RMSprop(learning_rate=0.05)"
    assert "above line 2 (the loop that holds the step)" in text
    assert step == "sketch_optimizer.apply_gradients([(d_sketch, sketch)])"
    lines = SECOND.splitlines()
    lines[-1] = "    " + step
    fixed = "\n".join([lines[0], creation, *lines[1:]])
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "float(sketch[0, 0])") > -2.0  # stepped towards 0
    assert value_of(kernel, "int(sketch_optimizer.iterations)") == 3


def test_an_optimizer_per_variable_stays_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, FIRST)
    runs_cleanly(
        kernel,
        "etcher = keras.optimizers.RMSprop(learning_rate=0.05)\n"
        + SECOND.replace("painter.apply_gradients", "etcher.apply_gradients"),
    )
