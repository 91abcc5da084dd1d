"""One gradient and one variable given to ``apply_gradients`` as lists
(``errors/families_single_pair.py``).

``zip(g, palette)`` of one gradient and one variable pairs their slices, and Keras fails
on a slice (a plain tensor), on a scalar, or inside a tf.function on a symbolic tensor:
each gets the call with one pair, ``[(g, palette)]``, which runs and steps the variable.
A bare pair ``(g, palette)`` and a list of gradients zipped with one variable get their
own fix. The usual ``zip(grads, [a, b])`` runs without an entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

SETUP = """palette = tf.Variable(tf.fill([4, 3], 2.0))
tint = tf.Variable(5.0)
mixer = keras.optimizers.SGD(learning_rate=0.1)
"""


def test_one_gradient_zipped_with_one_variable(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = """with tf.GradientTape() as recorder:
    spread = tf.reduce_sum(palette ** 2)
g_pal = recorder.gradient(spread, palette)
mixer.apply_gradients(zip(g_pal, palette))"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "training-loop"
    assert "`g_pal` is one gradient and `palette` one variable" in text, text
    assert "pairs slice with slice" in text
    fix = fix_of(text)
    assert fix == "mixer.apply_gradients([(g_pal, palette)])"
    runs_cleanly(kernel, cell.replace("mixer.apply_gradients(zip(g_pal, palette))", fix))
    # One SGD step of 0.1 on x ** 2 from 2.0: 2.0 - 0.1 * 4.0.
    assert abs(value_of(kernel, "float(palette[0, 0])") - 1.6) < 1e-5


def test_a_scalar_variable_and_a_traced_step(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    scalar = """with tf.GradientTape() as recorder:
    off = (tint - 1.0) ** 2
mixer.apply_gradients(zip(recorder.gradient(off, tint), tint))"""
    text = failing(kernel, scalar)["explanation"]
    assert fix_of(text) == "mixer.apply_gradients([(recorder.gradient(off, tint), tint)])", text
    traced = """@tf.function
def shade_step():
    with tf.GradientTape() as recorder:
        spread = tf.reduce_sum(palette ** 2)
    g_pal = recorder.gradient(spread, palette)
    mixer.apply_gradients(zip(g_pal, palette))
    return spread

shade_step()"""
    text = failing(kernel, traced)["explanation"]
    assert "`g_pal` is one gradient and `palette` one variable" in text, text
    fix = fix_of(text)
    assert fix == "mixer.apply_gradients([(g_pal, palette)])"
    runs_cleanly(kernel, traced.replace("mixer.apply_gradients(zip(g_pal, palette))", fix))


def test_a_bare_pair_and_a_list_of_gradients(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    pair = """with tf.GradientTape() as recorder:
    spread = tf.reduce_sum(palette ** 2)
g_pal = recorder.gradient(spread, palette)
mixer.apply_gradients((g_pal, palette))"""
    text = failing(kernel, pair)["explanation"]
    assert "is one pair" in text, text
    assert fix_of(text) == "mixer.apply_gradients([(g_pal, palette)])"
    listed = """with tf.GradientTape() as recorder:
    spread = tf.reduce_sum(palette ** 2)
g_list = recorder.gradient(spread, [palette])
mixer.apply_gradients(zip(g_list, palette))"""
    text = failing(kernel, listed)["explanation"]
    assert "`g_list` is a list of gradients but `palette` is one variable" in text, text
    fix = fix_of(text)
    assert fix == "mixer.apply_gradients(zip(g_list, [palette]))"
    runs_cleanly(kernel, listed.replace("mixer.apply_gradients(zip(g_list, palette))", fix))


def test_lists_zipped_stay_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(
        kernel,
        """with tf.GradientTape() as recorder:
    spread = tf.reduce_sum(palette ** 2) + tint ** 2
grads = recorder.gradient(spread, [palette, tint])
mixer.apply_gradients(zip(grads, [palette, tint]))""",
    )
