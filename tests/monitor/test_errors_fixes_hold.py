"""A printed fix that, once applied, must not lead back to the same error (issue #25):
every place of the failing statement that would fail again is fixed, a dtype is cast
where the value comes in when it is read several times, and a missing axis of N > 1
values is made with the data, not added as an axis of size 1. Each fix is applied in
the kernel and runs; the correct look-alike gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

OPTIMIZERS = """enc_opt = keras.optimizers.SGD(learning_rate=0.01)
dec_opt = keras.optimizers.RMSprop(learning_rate=0.002)
"""


def test_a_renamed_attribute_is_renamed_in_every_place_of_the_line(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, OPTIMIZERS)
    cell = 'rates = (float(enc_opt.lr), float(dec_opt.lr))\nprint(f"rates {rates}")'
    text = failing(kernel, cell)["explanation"]
    assert "dropped the `lr` alias" in text
    fix = fix_of(text)
    assert fix == "rates = (float(enc_opt.learning_rate), float(dec_opt.learning_rate))"
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))
    assert value_of(kernel, "[round(r, 4) for r in rates]") == [0.01, 0.002]
    # A module's name mistyped twice on one line: both places renamed.
    text = failing(kernel, "pair = [keras.layers.Dence(3), keras.layers.Dence(1)]")["explanation"]
    fix = fix_of(text)
    assert fix == "pair = [keras.layers.Dense(3), keras.layers.Dense(1)]"
    runs_cleanly(kernel, fix)
    runs_cleanly(kernel, "print(enc_opt.learning_rate, dec_opt.learning_rate)")


CURVE = """def wave(x):
    return amp * tf.sin(freq * x) + freq * x
"""
CURVE_SETUP = """xs = np.linspace(0.0, 1.0, 50)
amp = tf.Variable(0.5)
freq = tf.Variable(2.0)
"""


def test_a_parameter_read_several_times_is_cast_once_where_it_comes_in(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, CURVE_SETUP)
    text = failing(kernel, CURVE + "ys = wave(tf.constant(xs))")["explanation"]
    assert "`wave` reads `x` twice" in text
    fix = fix_of(text)
    assert fix == "x = tf.cast(x, tf.float32)"
    fixed = CURVE.replace("    return", f"    {fix}\n    return")
    runs_cleanly(kernel, fixed + "ys = wave(tf.constant(xs))")
    assert value_of(kernel, "ys.dtype.name") == "float32"
    # Read once, a cast at the failing place is the fix; a float32 input needs none.
    text = failing(kernel, "def scaled(x):\n    return freq * x\nscaled(tf.constant(xs))")[
        "explanation"
    ]
    assert text.endswith("Cast `x` to float32: `freq * tf.cast(x, tf.float32)`.")
    runs_cleanly(kernel, CURVE + "ys = wave(tf.constant(xs, tf.float32))")


def test_a_name_read_several_times_is_made_in_the_right_dtype(kernel: KernelSession) -> None:
    runs_cleanly(kernel, CURVE_SETUP + "grid = tf.constant(xs)")
    cell = "ys = amp * tf.sin(freq * grid) + freq * grid"
    text = failing(kernel, cell)["explanation"]
    assert "The line reads `grid` twice" in text
    assert "(`grid = tf.constant(xs)`, line 4 of cell In[" in text
    fix = fix_of(text)
    assert fix == "grid = tf.constant(xs, dtype=tf.float32)"
    runs_cleanly(kernel, f"{fix}\n{cell}")
    assert value_of(kernel, "ys.dtype.name") == "float32"


def test_a_name_inside_the_refused_operand_is_made_in_the_right_dtype(
    kernel: KernelSession,
) -> None:
    """The float64 value is an expression over a name (``1.0 - ramp[:, None]``) whose
    other uses would fail next: the fix casts the name where it is made, not the part."""
    runs_cleanly(kernel, "start_vec = tf.zeros((1, 3))\nend_vec = tf.ones((1, 3))")
    cell = """ramp = tf.range(5) / 4
mix = (1.0 - ramp[:, None]) * start_vec + ramp[:, None] * end_vec
print(mix.shape)"""
    text = failing(kernel, cell)["explanation"]
    assert "The line reads `ramp` twice" in text
    fix = fix_of(text)
    assert fix == "ramp = tf.cast(tf.range(5) / 4, tf.float32)"
    runs_cleanly(kernel, cell.replace("ramp = tf.range(5) / 4", fix))
    assert value_of(kernel, "mix.dtype.name") == "float32"
    # Variant: the name made in an earlier cell, read once on the line and again below.
    runs_cleanly(kernel, "steps = tf.range(1, 4) / 3")
    cell = "shifted = tf.ones((2, 3)) + steps * 2.0\ntotal = float(tf.reduce_sum(steps))"
    text = failing(kernel, cell)["explanation"]
    assert "The cell reads `steps` again on line 2" in text
    fix = fix_of(text)
    assert fix == "steps = tf.cast(tf.range(1, 4) / 3, tf.float32)"
    runs_cleanly(kernel, fix)
    runs_cleanly(kernel, cell)
    assert value_of(kernel, "shifted.dtype.name") == "float32"
    # Look-alike: a name used once, nowhere else in the cell, keeps the cast at the use.
    runs_cleanly(kernel, "bump = tf.range(3) / 3")
    text = failing(kernel, "lifted = tf.ones((2, 3)) + bump * 2.0")["explanation"]
    assert text.endswith(
        "Cast `bump * 2.0` to float32: `tf.ones((2, 3)) + tf.cast(bump * 2.0, tf.float32)`."
    )
    runs_cleanly(kernel, "lifted = tf.ones((2, 3)) + tf.cast(bump * 2.0, tf.float32)")


GENERATOR = """NOISE_DIM = 4
maker = keras.Sequential([keras.Input(shape=(NOISE_DIM,)), keras.layers.Dense(8),
                          keras.layers.Dense(2)])
"""


def test_a_missing_axis_of_several_values_is_made_with_the_data(kernel: KernelSession) -> None:
    runs_cleanly(kernel, GENERATOR)
    cell = "seed = tf.random.normal([32])\npoints = maker(seed)"
    text = failing(kernel, cell)["explanation"]
    assert "each example must have 4 values on its last axis" in text
    assert "An axis of size 1 (`seed[..., None]`) would still not be 4 values" in text
    assert "`seed = tf.random.normal([32])` (line 1 of this cell)" in text
    assert "seed[..., None])`" not in text.split("Fix:")[1]
    fix = fix_of(text)
    assert fix == "seed = tf.random.normal([32, NOISE_DIM])"
    runs_cleanly(kernel, cell.replace("seed = tf.random.normal([32])", fix))
    assert value_of(kernel, "list(points.shape)") == [32, 2]
    # Made elsewhere than by a call taking a shape: the rule, no fix that fails again.
    text = failing(kernel, "column = np.random.rand(6, 4)[:, 0]\nmaker(column)")["explanation"]
    assert "make the data with 4 features" in text
    assert "Fix:" not in text
    # The look-alike: data made with the Input's 4 values per example.
    runs_cleanly(kernel, "print(maker(tf.random.normal([32, NOISE_DIM])).shape)")
