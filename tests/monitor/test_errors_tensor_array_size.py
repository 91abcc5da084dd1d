"""A tf.TensorArray written past the size it was made with (errors/families_tensor_array.py):
the entry names the array's construction, in the function the failing line calls or in the
failing cell, and prints it with ``dynamic_size=True``; the fixed cell runs and gives the
right values. An array that grows, or is big enough, stays silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_traced_loop_writing_an_empty_array(kernel: KernelSession) -> None:
    definition = """@tf.function
def cumulative(series):
    total = tf.constant(0.0)
    sums = tf.TensorArray(tf.float32, size=0)
    for step in tf.range(tf.shape(series)[0]):
        total += series[step]
        sums = sums.write(step, total)
    return sums.stack()
"""
    runs_cleanly(kernel, definition)
    # The function is defined in an earlier cell: the graph error names only this call.
    text = failing(kernel, "print(cumulative(tf.constant([1.0, 2.0, 3.0])))")["explanation"]
    assert "`sums` is a TensorArray made with a fixed size (`size=0`)" in text, text
    assert "cell In[" in text, text
    fix = fix_of(text)
    assert fix == "sums = tf.TensorArray(tf.float32, size=0, dynamic_size=True)"
    runs_cleanly(kernel, definition.replace("sums = tf.TensorArray(tf.float32, size=0)", fix))
    assert value_of(kernel, "cumulative(tf.constant([1.0, 2.0, 3.0])).numpy().tolist()") == [
        1.0,
        3.0,
        6.0,
    ]


def test_an_eager_loop_writing_past_a_short_array(kernel: KernelSession) -> None:
    cell = """letters = ["a", "bb", "ccc", "dddd"]
lengths_ta = tf.TensorArray(tf.int32, size=len(letters) - 1, dynamic_size=False)
for spot, word in enumerate(letters):
    lengths_ta = lengths_ta.write(spot, len(word))
print(lengths_ta.stack().numpy())
"""
    text = failing(kernel, cell)["explanation"]
    assert "`lengths_ta` is a TensorArray made with a fixed size" in text, text
    fix = fix_of(text)
    assert fix == "lengths_ta = tf.TensorArray(tf.int32, size=len(letters) - 1, dynamic_size=True)"
    runs_cleanly(kernel, cell.replace(cell.splitlines()[1], fix))
    assert value_of(kernel, "lengths_ta.stack().numpy().tolist()") == [1, 2, 3, 4]
    # Look-alike: an array sized to the loop, no entry.
    runs_cleanly(
        kernel,
        "exact_ta = tf.TensorArray(tf.int32, size=len(letters))\n"
        "for spot, word in enumerate(letters):\n"
        "    exact_ta = exact_ta.write(spot, len(word))\nprint(exact_ta.stack().numpy())",
    )
