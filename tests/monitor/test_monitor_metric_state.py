"""A custom metric whose update_state overwrites its state (issue #25,
``symptoms/metric_state.py``): the note names the class, the call and the fix; the fixed
metric counts over both batches; a running maximum (assign reading its own state) and
``assign_add`` get no note."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

METRIC = """class HitCount(keras.metrics.Metric):
    def __init__(self, name="hits", **kwargs):
        super().__init__(name=name, **kwargs)
        self.hits = self.add_weight(name="hits", shape=(), initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        matched = tf.cast(tf.equal(y_true, tf.round(y_pred)), "float32")
        self.hits.assign(tf.reduce_sum(matched))

    def result(self):
        return self.hits

hits = HitCount()
hits.update_state(tf.constant([1.0, 0.0, 1.0]), tf.constant([0.9, 0.2, 0.1]))
hits.update_state(tf.constant([1.0, 1.0]), tf.constant([0.8, 0.7]))
"""


def epoch_notes(kernel: KernelSession, code: str) -> list[str]:
    report = checked_report(run(kernel, code))
    return [
        n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == "epoch-figures"
    ]


def test_update_state_that_assigns_instead_of_adding(kernel: KernelSession) -> None:
    [text] = epoch_notes(kernel, METRIC)
    assert text.startswith(
        "`HitCount.update_state` sets its state with `self.hits.assign(tf.reduce_sum(matched))`"
    ), text
    assert value_of(kernel, "float(hits.result())") == 2.0  # the last batch only
    fix = "self.hits.assign_add(tf.reduce_sum(matched))"
    assert f"`{fix}`" in text
    fixed = METRIC.replace("self.hits.assign(tf.reduce_sum(matched))", fix)
    assert epoch_notes(kernel, fixed) == []
    assert value_of(kernel, "float(hits.result())") == 4.0
    # Look-alike: a running maximum reads its own state.
    best = METRIC.replace(
        "self.hits.assign(tf.reduce_sum(matched))",
        "self.hits.assign(tf.maximum(self.hits, tf.reduce_sum(matched)))",
    )
    assert epoch_notes(kernel, best) == []
