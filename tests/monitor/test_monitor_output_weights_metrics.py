"""Two silent mistakes around several outputs and class labels:

- ``loss_weights`` given as a list to a model whose outputs were given as a dict
  (``symptoms/loss_weight_order.py``): Keras pairs the list with ``output_names``, the
  names sorted, not the order the ``loss`` dict lists them in. The note says which output
  gets which weight; the fix (a dict keyed by name, in the order written) is compiled and
  the loss fit logs is the weighted sum meant.
- a one-hot metric (``CategoricalAccuracy``) fed integer class ids
  (``symptoms/one_hot_metrics.py``): the fix (the Sparse twin, where the metric is made)
  is run and gives the share of right argmaxes.

Correct look-alikes stay silent: a weights dict, a list in ``output_names`` order, equal
weights; ``CategoricalAccuracy`` given one-hot rows, ``SparseCategoricalAccuracy`` ids."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import keras
keras.utils.set_random_seed(8)
readings = np.random.normal(size=(160, 5)).astype("float32")
level = readings[:, 0].astype("float32")
grade = np.digitize(readings[:, 1], [-0.6, 0.0, 0.6]).astype("int64")

def dual():
    x_in = keras.Input(shape=(5,))
    z = keras.layers.Dense(10, activation="relu")(x_in)
    return keras.Model(x_in, {
        "water": keras.layers.Dense(1, name="water")(z),
        "band": keras.layers.Dense(4, activation="softmax", name="band")(z),
    })
"""
KERNEL = KernelSetup(after_load=SETUP)

WEIGHTED = """net = dual()
net.compile(
    optimizer="sgd",
    loss={"water": "mse", "band": "sparse_categorical_crossentropy"},
    loss_weights=[3.0, 0.5],
)
"""


def _notes(report: dict[str, Any], word: str) -> list[str]:
    return [note["text"] for note in report["notes"] if word in note["text"]]


def test_a_weights_list_in_another_order_than_the_outputs(kernel: KernelSession) -> None:
    report = checked_report(run(kernel, WEIGHTED))
    [text] = _notes(report, "loss_weights")
    assert "`net.output_names` order, band, water" in text
    assert 'it weighs "band" 3.0, "water" 0.5' in text
    assert "The `loss` dict of this compile call lists the outputs as water, band" in text
    fix = 'loss_weights={"water": 3.0, "band": 0.5}'
    assert text.endswith(f"`{fix}`.")
    assert (
        next(n for n in report["notes"] if "loss_weights" in n["text"])["course"]["section"]
        == "functional-api"
    )
    # The fix compiled: the loss fit logs is 3 * water's loss + 0.5 * band's.
    fixed = WEIGHTED.replace("loss_weights=[3.0, 0.5]", fix)
    assert not _notes(checked_report(run(kernel, fixed)), "loss_weights")
    run(
        kernel,
        "score = net.evaluate(readings, {'water': level, 'band': grade}, "
        "verbose=0, return_dict=True)",
    )
    total, water, band = value_of(
        kernel, "[score['loss'], score['water_loss'], score['band_loss']]"
    )
    assert total == pytest.approx(3.0 * water + 0.5 * band, rel=1e-3)


def test_weights_keyed_or_in_output_names_order_are_quiet(kernel: KernelSession) -> None:
    keyed = WEIGHTED.replace("loss_weights=[3.0, 0.5]", 'loss_weights={"water": 3.0, "band": 1.0}')
    assert not _notes(checked_report(run(kernel, keyed)), "loss_weights")
    # The loss dict written in output_names order: the list means what it says.
    sorted_order = WEIGHTED.replace(
        '{"water": "mse", "band": "sparse_categorical_crossentropy"}',
        '{"band": "sparse_categorical_crossentropy", "water": "mse"}',
    )
    assert not _notes(checked_report(run(kernel, sorted_order)), "loss_weights")
    equal = WEIGHTED.replace("[3.0, 0.5]", "[1.0, 1.0]")
    assert not _notes(checked_report(run(kernel, equal)), "loss_weights")


SCORES = """scores = np.random.default_rng(2).dirichlet(np.ones(4), size=160).astype("float32")
"""
METRIC = """hit_rate = keras.metrics.CategoricalAccuracy(name="hits")
hit_rate.update_state(grade, scores)
print(float(hit_rate.result()))
"""


def test_a_one_hot_metric_fed_class_ids(kernel: KernelSession) -> None:
    run(kernel, SCORES)
    report = checked_report(run(kernel, METRIC))
    [text] = _notes(report, "CategoricalAccuracy")
    assert "`hit_rate` is a `CategoricalAccuracy`" in text
    assert "gives it `grade`, one class id per example, against `scores`'s 4 scores" in text
    fix = 'hit_rate = keras.metrics.SparseCategoricalAccuracy(name="hits")'
    assert f"Fix: `{fix}`" in text
    fixed = METRIC.replace('hit_rate = keras.metrics.CategoricalAccuracy(name="hits")', fix)
    assert not _notes(checked_report(run(kernel, fixed)), "is a `CategoricalAccuracy`")
    right = value_of(kernel, "float(np.mean(np.argmax(scores, axis=1) == grade))")
    assert value_of(kernel, "float(hit_rate.result())") == pytest.approx(right, abs=1e-6)


def test_one_hot_rows_and_the_sparse_metric_are_quiet(kernel: KernelSession) -> None:
    run(kernel, SCORES)
    rows = METRIC.replace("update_state(grade,", "update_state(np.eye(4)[grade],")
    assert not _notes(checked_report(run(kernel, rows)), "is a `CategoricalAccuracy`")
    sparse = METRIC.replace("CategoricalAccuracy", "SparseCategoricalAccuracy")
    assert not _notes(checked_report(run(kernel, sparse)), "CategoricalAccuracy`, which")
