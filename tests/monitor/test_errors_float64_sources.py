"""A float64 value made earlier meeting float32 inside the learner's functions (issue #25,
``errors/float64_sources.py``): the entry follows the failing operand back to the name the
running cell passed (or the global the function reads) and fixes it where it is made, not
at the failing line, where a cast only moves the error to the next operation. Each printed
fix is applied and the whole call runs; a float64 made at the failing line keeps the cast
there."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SOLVER = """def accel(pos, k):
    p = pos[0]
    return tf.stack([-k * p, 0.0 * p])

def step(pos, k, h):
    a = accel(pos, k)
    return pos + h * a

def run_steps(k, pos0, n):
    pos = pos0
    for _ in range(n):
        pos = step(pos, k, 0.01)
    return pos
"""


def test_an_argument_made_float64_is_fixed_where_it_is_made(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SOLVER)
    cell = """stiff = tf.Variable(3.0)
start = tf.constant(np.array([0.5, 1.0]))
end = run_steps(stiff, start, 5)
"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "dtype-casting"
    text = error["explanation"]
    assert (
        "The float64 comes from `start`, a float64 value that `end = run_steps(stiff, start, 5)` "
        "(line 3 of this cell) passes down to `accel` (NumPy makes float64 from Python floats)"
    ) in text
    assert "a cast at this line would only move the error to the next operation" in text
    fix = fix_of(text)
    assert fix == "start = tf.constant(np.array([0.5, 1.0]), dtype=tf.float32)"
    runs_cleanly(kernel, cell.replace("start = tf.constant(np.array([0.5, 1.0]))", fix))
    assert value_of(kernel, "end.dtype.name") == "float32"


def test_a_global_read_by_the_function(kernel: KernelSession) -> None:
    cell = """offsets = np.linspace(0.0, 1.0, 4)
table = tf.constant(offsets)
def shift(v):
    return v + table

moved = shift(tf.ones(4))
"""
    text = failing(kernel, cell)["explanation"]
    assert "The float64 comes from `table`, a float64 value `shift` reads from the notebook" in text
    fix = fix_of(text)
    assert fix == "table = tf.constant(offsets, dtype=tf.float32)"
    runs_cleanly(kernel, cell.replace("table = tf.constant(offsets)", fix))
    assert value_of(kernel, "[round(x, 4) for x in moved.numpy().tolist()]") == [
        1.0,
        1.3333,
        1.6667,
        2.0,
    ]


def test_a_float64_made_at_the_failing_line_is_cast_there(kernel: KernelSession) -> None:
    cell = """def weigh(v):
    w = tf.constant([1.0, 2.0], dtype=tf.float64)
    return v * w

out = weigh(tf.ones(2))
"""
    text = failing(kernel, cell)["explanation"]
    assert "comes from" not in text
    assert "`v * tf.cast(w, tf.float32)`" in text


def test_float32_made_already_gets_no_entry(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SOLVER)
    runs_cleanly(kernel, "end = run_steps(tf.Variable(2.0), tf.constant([0.5, 1.0]), 3)")


MLP = """def mlp_out(params, inputs):
    z = tf.convert_to_tensor(inputs)
    for k in range(0, len(params) - 2, 2):
        z = tf.tanh(z @ params[k] + params[k + 1])
    return z @ params[-2] + params[-1]

params = [tf.Variable(tf.ones((2, 8))), tf.Variable(tf.zeros(8)),
          tf.Variable(tf.ones((8, 1))), tf.Variable(tf.zeros(1))]
"""


def test_numpy_data_the_cell_passes_is_made_float32_not_cast_in_the_function(
    kernel: KernelSession,
) -> None:
    """The learner's function is right; the cell passes an array NumPy made float64 by
    default (``np.random.normal``): the fix makes the data float32 where it is made, not a
    cast inside the function."""
    runs_cleanly(kernel, MLP)
    cell = """probe = np.random.normal(size=(30, 2))
scores = mlp_out(params, probe)
"""
    text = failing(kernel, cell)["explanation"]
    assert "The float64 comes from `probe`" in text
    assert "(NumPy's `normal` makes float64 unless told otherwise)" in text
    fix = fix_of(text)
    assert fix == "probe = np.random.normal(size=(30, 2)).astype(np.float32)"
    runs_cleanly(kernel, cell.replace("probe = np.random.normal(size=(30, 2))", fix))
    assert value_of(kernel, "scores.dtype.name") == "float32"
    # A tensor made from np.linspace in an earlier cell: given a dtype where it is made.
    runs_cleanly(kernel, "sweep = tf.constant(np.linspace(-1, 1, 40).reshape(-1, 2))")
    text = failing(kernel, "curve = mlp_out(params, sweep)")["explanation"]
    assert "(NumPy's `linspace` makes float64 unless told otherwise)" in text
    fix = fix_of(text)
    assert fix == "sweep = tf.constant(np.linspace(-1, 1, 40).reshape(-1, 2), dtype=tf.float32)"
    runs_cleanly(kernel, f"{fix}\ncurve = mlp_out(params, sweep)")
    # Look-alike: the data made float32 at its source gets no entry.
    runs_cleanly(kernel, "curve = mlp_out(params, np.random.normal(size=(5, 2)).astype('float32'))")
