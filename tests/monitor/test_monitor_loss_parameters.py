"""A custom loss whose parameters are named in the swapped order, ``def f(y_pred,
y_true)`` (``training/loss_parameters.py``, issue #25 part 2): Keras calls every loss as
loss(y_true, y_pred), so the names are swapped; silent for a symmetric loss, wrong for
any other. Told in the cell that compiles, naming the def line and the compile call; the
fixed def line, run as printed, makes evaluate's loss the one computed by hand with the
labels and outputs in their places, and the fixed compile gets no note. Look-alikes (the
right order, neutral names) stay silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "import warnings\n"
    "warnings.simplefilter('ignore')\n"
    "keras.utils.set_random_seed(3)\n"
    "feats = np.random.normal(size=(256, 4)).astype('float32')\n"
    "labels = (feats[:, :1] > 0).astype('float32')\n"
    "net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation='sigmoid')])\n"
    "probs = net.predict(feats, verbose=0)\n"
    # Misses cost five times as much as false alarms, computed with the roles right.
    "by_hand = float(np.mean(-(5 * labels * np.log(probs + 1e-7)"
    " + (1 - labels) * np.log(1 - probs + 1e-7))))\n"
)

DEF = """def costly_misses(y_pred, y_true):
    return tf.reduce_mean(-(5.0 * y_true * tf.math.log(y_pred + 1e-7)
                            + (1.0 - y_true) * tf.math.log(1.0 - y_pred + 1e-7)))
"""
COMPILE = 'net.compile(optimizer="adam", loss=costly_misses)\n'
LOSS = "float(net.evaluate(feats, labels, verbose=0, batch_size=256))"


def swapped_notes(report: dict) -> list[str]:
    return [n["text"] for n in report["notes"] if "swapped order" in n["text"]]


def test_swapped_parameters_told_at_compile(kernel: KernelSession) -> None:
    run(kernel, DEF)
    [text] = swapped_notes(checked_report(run(kernel, COMPILE)))
    assert text.startswith("`def costly_misses(y_pred, y_true):` (cell In["), text
    assert "is given to `net.compile` as the loss" in text
    assert "`y_pred` receives the labels and `y_true` the model's output" in text
    assert abs(value_of(kernel, LOSS) - value_of(kernel, "by_hand")) > 0.5
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "def costly_misses(y_true, y_pred):"
    run(kernel, DEF.replace("def costly_misses(y_pred, y_true):", fix))
    assert swapped_notes(checked_report(run(kernel, COMPILE))) == []
    assert abs(value_of(kernel, LOSS) - value_of(kernel, "by_hand")) < 1e-3


def test_a_loss_class_with_swapped_call(kernel: KernelSession) -> None:
    cell = """class CostlyMisses(keras.losses.Loss):
    def call(self, y_pred, y_true):
        return tf.reduce_mean(-(5.0 * y_true * tf.math.log(y_pred + 1e-7)
                                + (1.0 - y_true) * tf.math.log(1.0 - y_pred + 1e-7)), axis=-1)

net.compile(optimizer="adam", loss=CostlyMisses())
"""
    [text] = swapped_notes(checked_report(run(kernel, cell)))
    assert text.startswith("`def call(self, y_pred, y_true):` (line 2 of this cell)"), text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "def call(self, y_true, y_pred):"
    fixed = cell.replace("def call(self, y_pred, y_true):", fix)
    assert swapped_notes(checked_report(run(kernel, fixed))) == []
    assert abs(value_of(kernel, LOSS) - value_of(kernel, "by_hand")) < 1e-3


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    right = DEF.replace("def costly_misses(y_pred, y_true):", "def costly_misses(y_true, y_pred):")
    assert swapped_notes(checked_report(run(kernel, right + COMPILE))) == []
    neutral = "def gap(a, b):\n    return tf.reduce_mean(tf.square(a - b))\n"
    cell = neutral + 'net.compile(optimizer="adam", loss=gap)\n'
    assert swapped_notes(checked_report(run(kernel, cell))) == []


LOSS_CLASS = """class CostlyMisses(keras.losses.Loss):
    def call(self, y_pred, y_true):
        return tf.reduce_mean(-(5.0 * y_true * tf.math.log(y_pred + 1e-7)
                                + (1.0 - y_true) * tf.math.log(1.0 - y_pred + 1e-7)))

costly = CostlyMisses()
called = float(costly(labels, probs))
"""


def test_a_loss_class_with_swapped_call_used_in_a_custom_loop(kernel: KernelSession) -> None:
    # Called directly, never compiled: told where the class is written.
    [text] = swapped_notes(checked_report(run(kernel, LOSS_CLASS)))
    assert text.startswith(
        "`def call(self, y_pred, y_true):` (line 2 of this cell) in `CostlyMisses`"
    ), text
    assert value_of(kernel, "abs(called - by_hand) > 0.1") is True
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "def call(self, y_true, y_pred):"
    fixed = LOSS_CLASS.replace("def call(self, y_pred, y_true):", fix)
    assert swapped_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "abs(called - by_hand) < 1e-3") is True
