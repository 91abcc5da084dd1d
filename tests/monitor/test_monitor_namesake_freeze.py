"""A layer frozen through one object while the cell builds with another of the same
Keras name (issue #25): a name rebound to a reloaded model's layer still reaches the
unfrozen copy. The entry follows what the cell's name holds now: it names that object and
freezes it; the printed fix, run, leaves the new model with only its head trainable. The
right freeze (through the name the cell uses) stays silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

SETUP = """import os, tempfile
import numpy as np
import tensorflow as tf
import keras
from keras import layers
keras.utils.set_random_seed(4)
feats = np.random.default_rng(1).normal(size=(128, 6)).astype("float32")
marks = (feats[:, 0] > 0).astype("int32")
folder = tempfile.mkdtemp()
"""
KERNEL = KernelSetup(after_load=SETUP)


def changes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [c["text"] for c in report["variables"] if c["change"] == "trainable_flag"]


def prepare(kernel: KernelSession, holder: str, inner: str) -> None:
    run(
        kernel,
        f'{inner} = keras.Sequential([keras.Input((6,)), layers.Dense(8, activation="relu")], '
        f'name="{inner}")\n'
        f"{holder} = keras.Sequential([{inner}, layers.Dense(2)])\n"
        f"{holder}.compile(optimizer='adam', "
        "loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))\n"
        f"{holder}.fit(feats, marks, epochs=1, verbose=0)\n"
        f"{holder}.save(os.path.join(folder, '{holder}.keras'))\n"
        f"copy_of = keras.models.load_model(os.path.join(folder, '{holder}.keras'))\n"
        f"{inner} = copy_of.get_layer('{inner}')\n",
    )


def test_freeze_through_the_old_model_while_building_with_the_reloaded_layer(
    kernel: KernelSession,
) -> None:
    prepare(kernel, "teacher", "trunk")
    cell = """teacher.get_layer("trunk").trainable = False
entry = keras.Input((6,))
student = keras.Model(entry, layers.Dense(3)(trunk(entry, training=False)))
"""
    [text] = changes(kernel, cell)
    assert "`trunk`, which this cell uses, is another object also named 'trunk'" in text, text
    assert "compile(" not in text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "trunk.trainable = False"
    run(kernel, fix)
    # Only the new head trains now (kernel and bias).
    assert value_of(kernel, "len(student.trainable_weights)") == 2


def test_namesake_unfrozen_layer_and_the_right_freeze(kernel: KernelSession) -> None:
    prepare(kernel, "pretrained", "encoder")
    cell = """pretrained.layers[0].trainable = False
probe = keras.Sequential([encoder, layers.Dense(1)])
probe.build((None, 6))
"""
    [text] = changes(kernel, cell)
    assert "`encoder`, which this cell uses, is another object also named 'encoder'" in text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "encoder.trainable = False"
    run(kernel, fix)
    assert value_of(kernel, "len(probe.trainable_weights)") == 2
    # The right freeze, through the name the cell uses, on a fresh pair: silent.
    prepare(kernel, "pretrained2", "encoder2")
    right = """encoder2.trainable = False
head_in = keras.Input((6,))
probe3 = keras.Model(head_in, layers.Dense(1)(encoder2(head_in)))
"""
    assert changes(kernel, right) == []
    assert value_of(kernel, "len(probe3.trainable_weights)") == 2
