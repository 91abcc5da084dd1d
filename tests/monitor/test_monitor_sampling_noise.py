"""A generative model sampled with noise unlike its training noise (issue #25, silent
bugs): a generator trained in a GradientTape step on ``tf.random.normal`` noise, then
sampled with ``tf.random.uniform``. The note names both draws and gives the normal draw;
the fix, run as printed, gives samples that follow what the generator learned. Correct
look-alikes stay quiet: a model only tried on normal noise (no training) then called on
uniform noise, and a model trained on uniform noise and sampled the same way."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="import warnings\nwarnings.simplefilter('ignore')\n",
)
SECTION = "creating-slicing-reducing"

# A generator learns to turn N(0, 1) noise into points around (2, -1) with spread 0.5.
TRAINED = """keras.utils.set_random_seed(4)
CODE_SIZE = 3
maker = keras.Sequential([keras.Input((CODE_SIZE,)), keras.layers.Dense(2)])
maker_opt = keras.optimizers.Adam(0.05)
centre = tf.constant([2.0, -1.0])

@tf.function
def maker_step():
    noise = tf.random.normal([128, CODE_SIZE])
    with tf.GradientTape() as tape:
        points = maker(noise, training=True)
        mean = tf.reduce_mean(points, axis=0)
        spread = tf.math.reduce_std(points, axis=0)
        loss = tf.reduce_sum((mean - centre) ** 2) + tf.reduce_sum((spread - 0.5) ** 2)
    grads = tape.gradient(loss, maker.trainable_variables)
    maker_opt.apply_gradients(zip(grads, maker.trainable_variables))
    return loss

for _ in range(300):
    maker_step()
"""

SAMPLED = """codes = tf.random.uniform([2000, CODE_SIZE])
made = maker(codes, training=False).numpy()
"""
OFF_CENTRE = "float(np.abs(made.mean(axis=0) - np.array([2.0, -1.0])).max())"


def notes_of(report: dict[str, Any]) -> list[str]:
    return [n["text"] for n in report["notes"] if (n.get("course") or {}).get("section") == SECTION]


def test_generator_sampled_with_uniform_noise(kernel: KernelSession) -> None:
    run(kernel, TRAINED)
    [text] = notes_of(checked_report(run(kernel, SAMPLED)))
    assert "`maker(codes, training=False)` (line 2 of this cell)" in text, text
    assert "`tf.random.uniform([2000, CODE_SIZE])`" in text
    assert "`tf.random.normal([128, CODE_SIZE])`" in text
    assert value_of(kernel, OFF_CENTRE) > 0.3  # the samples miss what was learned
    fix = re.findall(r"Draw it the same way: `([^`]+)`", text)[0]
    assert fix == "tf.random.normal([2000, CODE_SIZE])"
    fixed = SAMPLED.replace("tf.random.uniform([2000, CODE_SIZE])", fix)
    assert notes_of(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, OFF_CENTRE) < 0.1


def test_look_alikes_stay_quiet(kernel: KernelSession) -> None:
    # Tried on normal noise to see its output shape, never trained: uniform input is data.
    run(kernel, "shaper = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])")
    run(kernel, "print(shaper(tf.random.normal([2, 3])).shape)")
    report = checked_report(run(kernel, "out = shaper(tf.random.uniform([5, 3]))"))
    assert notes_of(report) == []
    # Trained on uniform noise and sampled the same way.
    trained_uniform = TRAINED.replace("maker", "umaker").replace(
        "tf.random.normal([128, CODE_SIZE])", "tf.random.uniform([128, CODE_SIZE])"
    )
    run(kernel, trained_uniform)
    cell = "ucodes = tf.random.uniform([50, CODE_SIZE])\numade = umaker(ucodes).numpy()"
    assert notes_of(checked_report(run(kernel, cell))) == []
