"""A hand-written loss weighing -log(p) by ``p ** gamma`` (the focal factor inverted) named
as the cause when fit learned nothing (issue #25, ``training/inverted_weights.py`` read by
``training/run_outcomes.py``): a notebook function over softmax outputs and a ``Loss``
subclass over a sigmoid. The fix, applied, trains the model; the correct focal loss and an
entropy term stay silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="import warnings\nwarnings.simplefilter('ignore')\n",
)

DATA = """rng = np.random.default_rng(12)
tiles = rng.normal(size=(600, 6)).astype("float32")
colour = np.argmax(tiles[:, :3], axis=1)
colour_hot = np.eye(3, dtype="float32")[colour]
ripe = (tiles[:, 3:4] > 0).astype("float32")
def make_sorter(loss):
    keras.utils.set_random_seed(3)
    net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"),
                            keras.layers.Dense(3, activation="softmax")])
    net.compile(keras.optimizers.Adam(0.02), loss, metrics=["accuracy"])
    return net
def make_picker(loss):
    keras.utils.set_random_seed(3)
    net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1, activation="sigmoid")])
    net.compile(keras.optimizers.Adam(0.05), loss, metrics=["accuracy"])
    return net
"""

SHARP = """def sharp_loss(y_true, y_pred, power=2.0):
    hit = tf.reduce_sum(y_true * y_pred, axis=-1)
    return tf.reduce_mean(-(hit ** power) * tf.math.log(hit + 1e-7))
"""

FIT_SORTER = """sorter = make_sorter(sharp_loss)
sorter.fit(tiles, colour_hot, epochs=8, batch_size=32, verbose=0)
score = sorter.evaluate(tiles, colour_hot, verbose=0)[1]
"""

PICKY = """class PickyLoss(keras.losses.Loss):
    def call(self, y_true, y_pred):
        q = y_true * y_pred + (1 - y_true) * (1 - y_pred)
        return -q ** 3 * keras.ops.log(q + 1e-6)
"""

FIT_PICKER = """picker = make_picker(PickyLoss())
picker.fit(tiles, ripe, epochs=8, batch_size=32, verbose=0)
score = picker.evaluate(tiles, ripe, verbose=0)[1]
"""


def cause_notes(report: dict) -> list[str]:
    return [n["text"] for n in report["notes"] if "weighs each example's -log by" in n["text"]]


def test_an_inverted_focal_factor_in_a_loss_function(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, SHARP)
    [text] = cause_notes(checked_report(run(kernel, FIT_SORTER)))
    assert "The loss `sharp_loss` weighs each example's -log by `hit ** power`" in text, text
    assert value_of(kernel, "score") < 0.4
    fixed = re.search(r"becomes `([^`]+)`", text)
    assert fixed is not None
    assert fixed.group(1) == (
        "return tf.reduce_mean(-((1 - hit) ** power) * tf.math.log(hit + 1e-7))"
    )
    run(kernel, SHARP.replace(SHARP.splitlines()[2].strip(), fixed.group(1)))
    assert cause_notes(checked_report(run(kernel, FIT_SORTER))) == []
    assert value_of(kernel, "score") > 0.8


def test_an_inverted_factor_in_a_loss_class_over_a_sigmoid(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, PICKY)
    [text] = cause_notes(checked_report(run(kernel, FIT_PICKER)))
    assert "The loss `PickyLoss.call` weighs each example's -log by `q ** 3`" in text, text
    fixed = re.search(r"becomes `([^`]+)`", text)
    assert fixed is not None and fixed.group(1) == (
        "return -(1 - q) ** 3 * keras.ops.log(q + 1e-6)"
    )
    run(kernel, PICKY.replace(PICKY.splitlines()[3].strip(), fixed.group(1)))
    assert cause_notes(checked_report(run(kernel, FIT_PICKER))) == []
    assert value_of(kernel, "score") > 0.8


def test_the_right_focal_factor_and_an_entropy_term_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(
        kernel,
        """def focal_ok(y_true, y_pred, gamma=2.0):
    hit = tf.reduce_sum(y_true * y_pred, axis=-1)
    return tf.reduce_mean(-((1.0 - hit) ** gamma) * tf.math.log(hit + 1e-7))
def with_entropy(y_true, y_pred):
    ce = -tf.reduce_sum(y_true * tf.math.log(y_pred + 1e-7), axis=-1)
    return tf.reduce_mean(ce + 0.01 * tf.reduce_sum(y_pred * tf.math.log(y_pred + 1e-7), axis=-1))
""",
    )
    for loss in ("focal_ok", "with_entropy"):
        cell = FIT_SORTER.replace("sharp_loss", loss)
        assert cause_notes(checked_report(run(kernel, cell))) == [], loss
