"""A random draw left at its float32 default given an integer tensor as a bound
(``errors/families_tensors.py``, ``CONVERSION_DTYPE``): ``tf.random.uniform`` converts its
``minval`` and ``maxval`` to the dtype it draws, float32 unless told, and an int32 tensor
(a length read with ``tf.size`` or ``tf.shape``) does not convert. The message names only
the dtypes, so it is read from the call: with whole-number bounds, integers were meant
and the fix asks for them with ``dtype=``; with a float bound beside the integer tensor,
that tensor is cast. Each fix runs in the kernel and gives the values meant; the draws
written right get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")

PLAYLIST = """songs = tf.constant(["intro", "verse", "chorus", "bridge", "outro"])
def shuffle_play(titles, picks=12):
    slots = tf.random.uniform((picks,), minval=0, maxval=tf.size(titles))
    return tf.one_hot(slots, depth=5)
"""


def test_whole_number_bounds_meant_integers(kernel: KernelSession) -> None:
    runs_cleanly(kernel, PLAYLIST)
    error = failing(kernel, "heard = shuffle_play(songs)")
    text = error["explanation"]
    assert "`tf.random.uniform` draws float32 numbers unless it is given a `dtype`" in text, text
    assert "your `maxval`, `tf.size(titles)`, is an int32 tensor" in text
    assert "(`tf.one_hot` reads `slots` as positions, which must be integers)" in text
    assert "float32 is the dtype of" not in text
    fix = fix_of(text)
    assert fix == (
        "slots = tf.random.uniform((picks,), minval=0, maxval=tf.size(titles), dtype=tf.int32)"
    )
    runs_cleanly(
        kernel,
        PLAYLIST.replace(
            "slots = tf.random.uniform((picks,), minval=0, maxval=tf.size(titles))", fix
        ),
    )
    runs_cleanly(kernel, "heard = shuffle_play(songs)")
    # Twelve one-hot rows over the five songs: every draw is a whole position in range.
    assert value_of(kernel, "heard.shape.as_list()") == [12, 5]
    assert value_of(kernel, "float(tf.reduce_sum(heard))") == 12.0


def test_a_float_bound_beside_an_integer_tensor_is_cast(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "steps = tf.constant(40)")
    error = failing(kernel, "delays = tf.random.uniform([6], 0.5, steps)")
    text = error["explanation"]
    assert "your `maxval`, `steps`, is an int32 tensor" in text, text
    assert "With a float bound beside it, cast that bound to float32" in text
    fix = fix_of(text)
    assert fix == "delays = tf.random.uniform([6], 0.5, tf.cast(steps, tf.float32))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "delays.dtype.name") == "float32"
    assert value_of(kernel, "bool(tf.reduce_all((delays >= 0.5) & (delays < 40.0)))") is True


def test_draws_written_right_stay_silent(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "steps = tf.constant(40)")
    runs_cleanly(kernel, "picks = tf.random.uniform([6], 0, steps, dtype=tf.int32)")
    runs_cleanly(kernel, "noise = tf.random.uniform([6], 0, 40)")
    assert value_of(kernel, "picks.dtype.name") == "int32"
    assert value_of(kernel, "noise.dtype.name") == "float32"
