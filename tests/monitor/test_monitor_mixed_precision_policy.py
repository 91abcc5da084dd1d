"""What a mixed global policy still does (issue #25, silent bugs,
``symptoms/mixed_precision_policy.py``): ``set_floatx("float64")`` meant to leave
``mixed_bfloat16`` leaves every new layer computing in 16 bits; a classifier whose sigmoid
output layer computes in float16. Each printed fix runs and gives full-precision layers or
a float32 output. Look-alikes stay silent: ``set_floatx`` with no mixed policy, a policy
set after it, a mixed model whose output layer is float32, a float16 feature model
without a probability head. A model's output named for the precision the model computes
in (``scores16 = net.predict(x)``, float32 by design) gets no dtype-name note
(``symptoms/dtype_names.py``)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """import numpy as np
import keras
from keras import layers

readings = np.random.default_rng(5).normal(size=(6, 10)).astype("float32")

def make_detector():
    features = keras.Input(shape=(10,))
    hidden = layers.Dense(16, activation="tanh")(features)
    alarm = layers.Dense(1, activation="sigmoid")(hidden)
    return keras.Model(features, alarm)
"""
KERNEL = KernelSetup(after_load=SETUP)


def policy_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if "changes only Keras's default float type" in n["text"] or "probabilities:" in n["text"]
    ]


def name_notes(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if "but its name says" in n["text"]]


def test_set_floatx_leaves_a_mixed_policy(kernel: KernelSession) -> None:
    run(kernel, 'keras.mixed_precision.set_global_policy("mixed_bfloat16")')
    cell = """keras.config.set_floatx("float64")
wide = layers.Dense(3)
wide.build((None, 10))
"""
    [text] = policy_notes(checked_report(run(kernel, cell)))
    assert text.startswith(
        '`keras.config.set_floatx("float64")` (line 1 of this cell) changes only Keras\'s '
        "default float type; the global dtype policy is still `mixed_bfloat16`"
    ), text
    assert "still computes in bfloat16 (`wide` does here)" in text
    fix = re.findall(r"`([^`]+)`", text.split("Fix:", 1)[1])[0]
    assert fix == 'keras.mixed_precision.set_global_policy("float64")'
    fixed = cell.replace('keras.config.set_floatx("float64")', fix)
    assert policy_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "wide.compute_dtype") == "float64"
    run(
        kernel,
        'keras.config.set_floatx("float32")\nkeras.mixed_precision.set_global_policy("float32")',
    )


def test_set_floatx_look_alikes(kernel: KernelSession) -> None:
    # No mixed policy: set_floatx is the whole story.
    plain = 'keras.config.set_floatx("float64")\nthin = layers.Dense(2)\n'
    assert policy_notes(checked_report(run(kernel, plain))) == []
    # The policy set after it, in the same cell.
    both = """keras.mixed_precision.set_global_policy("mixed_float16")
keras.config.set_floatx("float32")
keras.mixed_precision.set_global_policy("float32")
"""
    assert policy_notes(checked_report(run(kernel, both))) == []


def test_a_float16_sigmoid_head(kernel: KernelSession) -> None:
    cell = """keras.mixed_precision.set_global_policy("mixed_float16")
def make_detector():
    features = keras.Input(shape=(10,))
    hidden = layers.Dense(16, activation="tanh")(features)
    alarm = layers.Dense(1, activation="sigmoid")(hidden)
    return keras.Model(features, alarm)

detector = make_detector()
"""
    [text] = policy_notes(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`detector` (line 8 of this cell, `make_detector()`) gives float16 probabilities: "
        "its last layer applies the sigmoid in float16 (its dtype policy is `mixed_float16`"
    ), text
    fix = re.findall(r"`([^`]+)`", text.split("Fix:", 1)[1])[0]
    assert fix == 'layers.Dense(1, activation="sigmoid", dtype="float32")'
    fixed = cell.replace('layers.Dense(1, activation="sigmoid")', fix)
    assert policy_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "detector(readings).dtype.name") == "float32"
    # The hidden layer still computes in float16: mixed precision kept.
    assert value_of(kernel, "detector.layers[1].compute_dtype") == "float16"
    run(kernel, 'keras.mixed_precision.set_global_policy("float32")')


def test_head_look_alikes(kernel: KernelSession) -> None:
    cell = """keras.mixed_precision.set_global_policy("mixed_float16")
source = keras.Input(shape=(10,))
mid = layers.Dense(8, activation="relu")(source)
encoder = keras.Model(source, mid)
odds = layers.Dense(1)(mid)
chance = layers.Activation("sigmoid", dtype="float32")(odds)
detector32 = keras.Model(source, chance)
"""
    report = checked_report(run(kernel, cell))
    assert policy_notes(report) == []
    # A float32 output of a model computing in float16, named for its precision.
    named = "alarms16 = detector32.predict(readings, verbose=0)\n"
    report = checked_report(run(kernel, named))
    assert name_notes(report) == [], name_notes(report)
    assert value_of(kernel, "str(alarms16.dtype)") == "float32"
    run(kernel, 'keras.mixed_precision.set_global_policy("float32")')
