"""A per-example operation over axis 0 inside a loss or metric function given to
``compile`` (issue #25, the coach explains code it has never seen): Keras calls it with a
batch, so axis 0 counts examples. ``tf.argmax(y_pred)`` (TensorFlow's default axis 0) in a
metric and ``tf.nn.softmax(z, axis=0)`` in a loss are told where they are compiled, with
the calls over the last axis as the fix; the fix runs and gives the right numbers. The
same functions over the last axis, and an axis-0 softmax outside any compiled function,
stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

DATA = """rng = np.random.default_rng(11)
obs = rng.normal(size=(300, 4)).astype("float32")
kind = np.argmax(obs[:, :3], axis=1)
kind_hot = np.eye(3, dtype="float32")[kind]
keras.utils.set_random_seed(11)
"""

METRIC = """def hits(y_true, y_pred):
    same = tf.equal(tf.argmax(y_true), tf.argmax(y_pred))
    return tf.reduce_mean(tf.cast(same, tf.float32))
"""

FIT = """sorter = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
sorter.compile(optimizer=keras.optimizers.Adam(0.05), loss="categorical_crossentropy",
               metrics=[hits, "categorical_accuracy"])
log = sorter.fit(obs, kind_hot, epochs=20, batch_size=60, verbose=0).history
gap = abs(log["hits"][-1] - log["categorical_accuracy"][-1])
"""


def axis_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "class-axis"
    ]


def test_a_metric_taking_argmax_over_the_batch(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, METRIC)
    notes = axis_notes(checked_report(run(kernel, FIT)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tf.argmax(y_true)` (line 2 of `hits`) (TensorFlow's default axis is 0) works over "
        "axis 0 of `y_true`. So does `tf.argmax(y_pred)`. `hits` is given to "
        "`sorter.compile` as a metric"
    ), text
    # The metric compares one "class" per column: not the accuracy Keras reports.
    assert value_of(kernel, "gap") > 0.1
    fixes = ("tf.argmax(y_true, axis=-1)", "tf.argmax(y_pred, axis=-1)")
    assert all(f"`{fix}`" in text for fix in fixes)
    fixed = METRIC.replace("tf.argmax(y_true)", fixes[0]).replace("tf.argmax(y_pred)", fixes[1])
    run(kernel, fixed)
    assert axis_notes(checked_report(run(kernel, FIT))) == []
    assert value_of(kernel, "gap") < 0.02


LOSS = """def spread_loss(y_true, z):
    p = tf.nn.softmax(z, axis=0)
    return -tf.reduce_mean(tf.reduce_sum(y_true * tf.math.log(p + 1e-7), axis=-1))

scorer = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
scorer.compile(optimizer="adam", loss=spread_loss)
z = scorer(obs[:50])
mine = float(spread_loss(kind_hot[:50], z))
true_ce = float(keras.losses.CategoricalCrossentropy(from_logits=True)(kind_hot[:50], z))
"""


def test_a_loss_with_a_softmax_over_the_batch(kernel: KernelSession) -> None:
    run(kernel, DATA)
    notes = axis_notes(checked_report(run(kernel, LOSS)))
    assert len(notes) == 1, notes
    assert (
        "`tf.nn.softmax(z, axis=0)` (line 2 of `spread_loss`) works over axis 0 of `z`"
        in (notes[0])
    )
    assert "as a loss" in notes[0]
    assert abs(value_of(kernel, "mine") - value_of(kernel, "true_ce")) > 0.5
    fix = "tf.nn.softmax(z, axis=-1)"
    assert f"`{fix}`" in notes[0]
    fixed = LOSS.replace("tf.nn.softmax(z, axis=0)", fix)
    assert axis_notes(checked_report(run(kernel, fixed))) == []
    assert abs(value_of(kernel, "mine") - value_of(kernel, "true_ce")) < 1e-3


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # A metric over the last axis, given positionally to argmax.
    run(
        kernel,
        METRIC.replace("tf.argmax(y_true)", "tf.argmax(y_true, 1)").replace(
            "tf.argmax(y_pred)", "tf.argmax(y_pred, 1)"
        ),
    )
    assert axis_notes(checked_report(run(kernel, FIT))) == []
    # A softmax over axis 0 of a (classes,) vector in a helper no compile is given.
    cell = """def weights_of(scores):
    return tf.nn.softmax(scores, axis=0)

mix = weights_of(tf.constant([1.0, 2.0, 3.0]))
m2 = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
m2.compile(optimizer="adam", loss="mse")
"""
    assert axis_notes(checked_report(run(kernel, cell))) == []
