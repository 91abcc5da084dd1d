"""A norm of each example over three or more axes asked of ``tf.norm``
(``errors/families_norm_axes.py``): TensorFlow refuses the axes with a message about what
``axis`` may be; the entry says ``tf.norm`` takes one axis or a pair, and the fix is the
reduction that computes the norm asked (``reduce_max`` of ``abs`` for the infinity norm,
``reduce_euclidean_norm`` for the default, a power sum for another order), which runs and
gives NumPy's value. A norm over one axis or a pair runs with no entry."""

from __future__ import annotations

import numpy as np
import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

VOLUMES = """volumes = tf.random.normal((4, 2, 3, 5, 2), seed=3)
flat_ref = volumes.numpy().reshape(4, -1)
"""


def test_infinity_and_default_norms_per_example(kernel: KernelSession) -> None:
    runs_cleanly(kernel, VOLUMES)
    error = failing(kernel, "peak = tf.norm(volumes, ord=np.inf, axis=(1, 2, 3, 4))")
    text = error["explanation"]
    assert "`tf.norm` takes one axis (a vector norm) or a pair of axes" in text
    assert "not 4: `(1, 2, 3, 4)` asks for one norm" in text
    assert "the infinity norm is the largest absolute value" in text
    fix = fix_of(text)
    assert fix == "peak = tf.reduce_max(tf.abs(volumes), axis=(1, 2, 3, 4))"
    runs_cleanly(kernel, fix)
    expected = np.abs(value_of(kernel, "flat_ref.tolist()")).max(axis=1)
    assert np.allclose(value_of(kernel, "peak.numpy().tolist()"), expected)
    text = failing(kernel, "size = tf.linalg.norm(volumes, axis=[2, 3, 4], keepdims=True)")[
        "explanation"
    ]
    fix = fix_of(text)
    assert fix == "size = tf.math.reduce_euclidean_norm(volumes, axis=[2, 3, 4], keepdims=True)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(size.shape)") == [4, 2, 1, 1, 1]


def test_other_orders_and_the_correct_look_alikes(kernel: KernelSession) -> None:
    runs_cleanly(kernel, VOLUMES)
    fix = fix_of(
        failing(kernel, "taxi = tf.norm(volumes, ord=1, axis=(-3, -2, -1))")["explanation"]
    )
    assert fix == "taxi = tf.reduce_sum(tf.abs(volumes), axis=(-3, -2, -1))"
    runs_cleanly(kernel, fix)
    cell = "cubic = tf.norm(volumes, ord=3, axis=(1, 2, 3, 4))"
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == "cubic = tf.reduce_sum(tf.abs(volumes) ** 3, axis=(1, 2, 3, 4)) ** (1 / 3)"
    runs_cleanly(kernel, fix)
    expected = (np.abs(value_of(kernel, "flat_ref.tolist()")) ** 3).sum(axis=1) ** (1 / 3)
    assert np.allclose(value_of(kernel, "cubic.numpy().tolist()"), expected, rtol=1e-4)
    # One axis or a pair of axes is what tf.norm takes: no entry.
    runs_cleanly(kernel, "rows = tf.norm(volumes, axis=-1)")
    runs_cleanly(kernel, "mats = tf.norm(volumes, ord=np.inf, axis=(3, 4))")
    runs_cleanly(kernel, "peak = tf.reduce_max(tf.abs(volumes), axis=(1, 2, 3, 4))")
