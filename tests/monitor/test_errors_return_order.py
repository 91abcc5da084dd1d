"""A library call's results unpacked in another order than it returns them (issue #25,
``errors/families_return_order.py``): ``u, s, v = tf.linalg.svd(x)``, ``r, q =
tf.linalg.qr(a)``. The entry reads the order from the function's docstring, says what each
misplaced name holds, and unpacks in the documented order; each printed fix runs and the
product is right. Unpacking in the documented order gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """pts = tf.random.normal((40, 3))
tall = tf.random.normal((5, 3))
"""


def test_svd_results_unpacked_as_u_s_v(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    rebuild = "back = u @ tf.linalg.diag(s) @ tf.transpose(v)"
    text = failing(kernel, f"u, s, v = tf.linalg.svd(pts)\n{rebuild}")["explanation"]
    assert "`tf.linalg.svd` returns `s`, `u`, `v` in that order" in text
    assert "`u` holds the `s` result, a (3,) float32 tensor" in text
    fix = fix_of(text)
    assert fix == "s, u, v = tf.linalg.svd(pts)"
    runs_cleanly(kernel, f"{fix}\n{rebuild}")
    assert value_of(kernel, "float(tf.reduce_max(tf.abs(back - pts))) < 1e-3") is True


def test_qr_results_unpacked_as_r_q(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    text = failing(kernel, "r, q = tf.linalg.qr(tall)\nagain = q @ r")["explanation"]
    assert "`tf.linalg.qr` returns `q`, `r` in that order" in text
    fix = fix_of(text)
    assert fix == "q, r = tf.linalg.qr(tall)"
    runs_cleanly(kernel, f"{fix}\nagain = q @ r")
    assert value_of(kernel, "float(tf.reduce_max(tf.abs(again - tall))) < 1e-3") is True


def test_the_documented_order_gets_no_entry(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    runs_cleanly(kernel, "e, v = tf.linalg.eigh(tf.eye(3))\nsquare = v @ tf.linalg.diag(e)")
