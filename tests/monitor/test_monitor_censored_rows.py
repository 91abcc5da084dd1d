"""A survival likelihood that counts every row as an event (issue #25,
``symptoms/censored_rows.py``): the event indicator of right-censored data left out of
the log-hazard term. An exponential model fitted by hand with ``observed`` unused is told
with the fix that multiplies the log-hazard by it; the fix, applied, recovers the true
log-hazard and no note. Look-alikes stay silent: the indicator used, a cast copy of it
used."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """gen_v = np.random.default_rng(21)
z_cov = gen_v.normal(size=2000).astype("float32")
true_t = gen_v.exponential(1.0 / np.exp(-0.5 + 0.6 * z_cov))
cut_t = gen_v.exponential(1.5, size=2000)
dur = np.minimum(true_t, cut_t).astype("float32")
observed = true_t <= cut_t
"""
FIT = """# exponential hazard model by maximum likelihood
slope_v = tf.Variable(0.0)
level_v = tf.Variable(0.0)
adam_v = keras.optimizers.Adam(0.05)
for _ in range(400):
    with tf.GradientTape() as tape:
        log_rate = level_v + slope_v * z_cov
        neg_ll = -tf.reduce_mean(log_rate - tf.exp(log_rate) * dur)
    adam_v.apply_gradients(zip(tape.gradient(neg_ll, [slope_v, level_v]), [slope_v, level_v]))
"""


def survival_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "observed event" in n["text"]]


def test_event_indicator_left_out(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = survival_notes(FIT, kernel)
    assert text.startswith(
        "`log_rate - tf.exp(log_rate) * dur` (line 8 of this cell) counts every row as an "
        "observed event"
    ), text
    assert "The event indicator `observed` is never used here" in text
    assert value_of(kernel, "float(level_v) > -0.3") is True  # hazard over-estimated
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == (
        'neg_ll = -tf.reduce_mean(observed.astype("float32") * log_rate - tf.exp(log_rate) * dur)'
    )
    fixed = FIT.replace(
        "        neg_ll = -tf.reduce_mean(log_rate - tf.exp(log_rate) * dur)\n",
        f"        {fix}\n",
    )
    assert survival_notes(fixed, kernel) == []
    assert value_of(kernel, "abs(float(level_v) + 0.5) < 0.1") is True


def test_indicator_used_stays_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    copy = "obs_f = tf.cast(observed, tf.float32)\n"
    run(kernel, copy)
    used_copy = FIT.replace("tf.reduce_mean(log_rate -", "tf.reduce_mean(obs_f * log_rate -")
    assert survival_notes(used_copy, kernel) == []
