"""An exponential passed to a library parameter that takes a logarithm (issue #25,
``symptoms/log_parameters.py``): ``tf.nn.log_poisson_loss(targets, log_input=tf.math.exp(
score))`` exponentiates the score twice. Told in a plain loop (keyword) with the
statement given the score itself; the fix, applied, gives the Poisson negative
log-likelihood written by hand. Look-alikes stay silent: the log passed, a log of a mean."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """gen_c = np.random.default_rng(5)
feat_c = gen_c.normal(size=(200, 2)).astype("float32")
visits = gen_c.poisson(np.exp(feat_c @ np.array([0.3, -0.2]) + 0.4)).astype("float32")
coef = tf.Variable(tf.zeros((2,)))
"""
LOSS = """score = tf.linalg.matvec(feat_c, coef) + 0.4
nll_lib = float(tf.reduce_mean(tf.nn.log_poisson_loss(visits, log_input=tf.math.exp(score))))
nll_hand = float(tf.reduce_mean(tf.exp(score) - visits * score))
"""


def log_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "takes the logarithm" in n["text"]]


def test_exponential_given_as_log_input(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = log_notes(LOSS, kernel)
    assert text.startswith(
        "`tf.nn.log_poisson_loss(visits, log_input=tf.math.exp(score))` (line 2 of this "
        "cell) passes `tf.math.exp(score)` as `log_input`"
    ), text
    assert value_of(kernel, "abs(nll_lib - nll_hand) > 0.1") is True
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == (
        "nll_lib = float(tf.reduce_mean(tf.nn.log_poisson_loss(visits, log_input=score)))"
    )
    fixed = LOSS.replace(
        "nll_lib = float(tf.reduce_mean(tf.nn.log_poisson_loss(visits, "
        "log_input=tf.math.exp(score))))",
        fix,
    )
    assert log_notes(fixed, kernel) == []
    assert value_of(kernel, "abs(nll_lib - nll_hand) < 1e-5") is True


def test_logs_given_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    mean_log = """mean_rate = tf.exp(tf.linalg.matvec(feat_c, coef))
loss_ok = tf.nn.log_poisson_loss(visits, tf.math.log(mean_rate))
rate_again = tf.exp(tf.math.log(mean_rate))
"""
    assert log_notes(mean_log, kernel) == []
