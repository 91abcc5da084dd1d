"""A hand-fitted model's predictor written again for new rows without its offset (issue
#25, ``symptoms/dropped_offsets.py``): a regression fitted with a known baseline term per
row, predicted on new rows without theirs. Told with the training step's sum, the term
left out and the fix that adds the new rows' own term (their names found the way the
cell renamed the data); the fix, applied, gives predictions that match the targets and no
note. Look-alikes stay silent: the prediction with its offset, a model fitted with no
offset."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

FIT = """gen_o = np.random.default_rng(8)
x_fit = gen_o.normal(size=(300, 2)).astype("float32")
base_fit = gen_o.uniform(5.0, 9.0, size=300).astype("float32")
y_fit = (x_fit @ np.array([1.0, -2.0], "float32")) + 0.5 + base_fit
x_new = gen_o.normal(size=(100, 2)).astype("float32")
base_new = gen_o.uniform(5.0, 9.0, size=100).astype("float32")
y_new = (x_new @ np.array([1.0, -2.0], "float32")) + 0.5 + base_new
coef = tf.Variable(tf.zeros((2,)))
bias = tf.Variable(0.0)
sgd_o = keras.optimizers.SGD(0.1)


def step_with_baseline():
    with tf.GradientTape() as tape:
        guess = tf.linalg.matvec(x_fit, coef) + bias + base_fit
        loss = tf.reduce_mean(tf.square(guess - y_fit))
    sgd_o.apply_gradients(zip(tape.gradient(loss, [coef, bias]), [coef, bias]))


for _ in range(300):
    step_with_baseline()
"""
PREDICT = """pred_new = tf.linalg.matvec(x_new, coef) + bias
gap = float(tf.reduce_mean(tf.abs(pred_new - y_new)))
"""


def offset_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "an offset" in n["text"]]


def test_prediction_without_the_offset(kernel: KernelSession) -> None:
    run(kernel, FIT)
    [text] = offset_notes(PREDICT, kernel)
    assert text.startswith(
        "`pred_new` is computed with `tf.linalg.matvec(x_new, coef) + bias`, but "
        "`step_with_baseline` fitted these parameters with "
        "`tf.linalg.matvec(x_fit, coef) + bias + base_fit`: the term `base_fit`"
    ), text
    assert value_of(kernel, "gap > 3") is True
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "pred_new = tf.linalg.matvec(x_new, coef) + bias + base_new"
    fixed = PREDICT.replace("pred_new = tf.linalg.matvec(x_new, coef) + bias", fix)
    assert offset_notes(fixed, kernel) == []
    assert value_of(kernel, "gap < 0.1") is True


def test_offsets_kept_and_models_without_one_stay_silent(kernel: KernelSession) -> None:
    run(kernel, FIT)
    plain = """slope = tf.Variable(0.0)
sgd_p = keras.optimizers.SGD(0.1)


def plain_step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x_fit[:, 0] * slope + 0.5 - y_fit))
    sgd_p.apply_gradients([(tape.gradient(loss, slope), slope)])


plain_step()
plain_pred = x_new[:, 0] * slope + 0.5
"""
    assert offset_notes(plain, kernel) == []
