"""A traced function's names are its own (issue #25, ``errors/context.py``): inside a
``tf.function`` the learner's frame is known from TensorFlow's message only, and its
locals live in AutoGraph's generated copy (``tf__<name>``); the entry reads them there, so
a parameter named like a global is described with the value the function had (a symbolic
tensor), never the global's shape or dtype. Where no such copy is found, a name the
function binds is not read from the namespace at all. The dtype fix printed runs."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """batch = np.ones((5, 7))
row = np.ones((9, 9, 9))
kernel_w = tf.ones((3, 2))
"""


def test_a_parameter_named_like_a_global_is_the_functions_value(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = """@tf.function
def encode(batch):
    hidden = tf.nn.relu(batch)
    return tf.matmul(hidden, kernel_w)
coded = encode(tf.ones((4, 6)))"""
    text = failing(kernel, cell)["explanation"]
    assert "`hidden` is a (4, 6) float32 symbolic tensor (inside a traced function)" in text
    assert "(5, 7)" not in text and "float64" not in text, text


def test_the_dtype_fix_reads_the_local_and_runs(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    line = "    return batch * tf.constant(3, tf.int32)"
    cell = f"""@tf.function
def tripled(batch):
{line}
out = tripled(tf.ones((2, 2)))"""
    text = failing(kernel, cell)["explanation"]
    assert "while `batch` is float32" in text, text
    assert "float64" not in text
    fix = re.findall(r"`([^`]+)`", text)[-1]  # the cast, the entry's last code
    assert fix == "batch * tf.cast(tf.constant(3, tf.int32), tf.float32)"
    runs_cleanly(kernel, cell.replace(line, f"    return {fix}"))
    assert value_of(kernel, "out.numpy().tolist()") == [[3.0, 3.0], [3.0, 3.0]]


def test_a_lambdas_parameter_is_never_the_global(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = """@tf.function
def squeezed(batch):
    return tf.map_fn(lambda row: tf.reshape(row, (5, 5)), batch)
small = squeezed(tf.ones((3, 4)))"""
    text = failing(kernel, cell)["explanation"]
    assert "(9, 9, 9)" not in text and "float64" not in text, text
