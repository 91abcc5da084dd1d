"""A NumPy name written on ``tf`` (issue #25, ``numpy_only_name`` in
``errors/families_api_names.py``): ``tf.linalg.cond``, ``tf.math.nanmean``. The entry says
the name is NumPy's (never a version or spelling problem), the TensorFlow way where it is
known, and outside a traced function calls NumPy on the eager values; each printed fix
runs and gives NumPy's value. Inside a tf.function no NumPy fix is printed."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_condition_number_is_numpy_s(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "gram = tf.constant([[4.0, 0.0], [0.0, 1.0]])")
    error = failing(kernel, "kappa = tf.linalg.cond(gram)")
    text = error["explanation"]
    assert "`np.linalg.cond` is NumPy's: TensorFlow has no `tf.linalg.cond`" in text
    assert "version the tutorial" not in text and "largest singular value" in text
    fix = fix_of(text)
    assert fix == "kappa = np.linalg.cond(gram)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "round(float(kappa), 3)") == 4.0
    s = "s = tf.linalg.svd(gram, compute_uv=False)\nratio = s[0] / s[-1]"
    runs_cleanly(kernel, s)
    assert value_of(kernel, "round(float(ratio), 3)") == 4.0


def test_a_mean_ignoring_nans_is_numpy_s(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "temps = tf.constant([20.0, float('nan'), 24.0])")
    text = failing(kernel, "typical = tf.math.nanmean(temps)")["explanation"]
    assert "`np.nanmean` is NumPy's" in text
    fix = fix_of(text)
    assert fix == "typical = np.nanmean(temps)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "float(typical)") == 22.0


def test_inside_a_tf_function_no_numpy_fix(kernel: KernelSession) -> None:
    cell = "@tf.function\ndef spread(x):\n    return tf.percentile(x, 90)\nspread(tf.ones(3))"
    text = failing(kernel, cell)["explanation"]
    assert "`np.percentile` is NumPy's" in text and "Fix:" not in text
    runs_cleanly(kernel, "middle = np.percentile(tf.constant([1.0, 2.0, 3.0]), 50)")
