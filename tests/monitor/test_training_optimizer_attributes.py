"""A learning rate written to an attribute a Keras 3 optimizer never reads (issue #25,
``training/optimizer_attributes.py``): ``opt.lr = ...`` stores a new Python attribute and
the optimizer keeps its rate. The note names the statement, the optimizer and its rate;
the fix (``opt.learning_rate = ...``), applied, changes the rate a compiled step uses.
Look-alikes stay silent: the rate set through ``learning_rate``, an attribute of another
object named ``lr``, a hyperparameter the optimizer's class defines."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

_MADE = (
    "weight = tf.Variable(4.0)\n"
    "sgd = keras.optimizers.SGD(learning_rate=0.5)\n"
    "@tf.function\n"
    "def one_update():\n"
    "    with tf.GradientTape() as tape:\n"
    "        cost = 0.5 * weight ** 2\n"
    "    sgd.apply_gradients([(tape.gradient(cost, weight), weight)])\n"
    "one_update()\n"
)


def _attribute_notes(kernel: KernelSession, cell: str) -> list[str]:
    texts = note_texts(checked_report(run(kernel, cell)))
    return [t for t in texts if "which Keras never reads" in t]


def test_a_rate_set_on_a_stray_attribute_is_named_and_fixed(kernel: KernelSession) -> None:
    run(kernel, _MADE)
    cell = "sgd.lr = 0.01\nfor _ in range(3):\n    one_update()\n"
    told = _attribute_notes(kernel, cell)
    assert len(told) == 1
    text = told[0]
    assert "`sgd.lr = 0.01` (line 1) stores a new Python attribute `lr`" in text
    assert "the Keras optimizer `sgd`" in text
    assert "its rate is `sgd.learning_rate`, still 0.5" in text
    assert "Fix: `sgd.learning_rate = 0.01` in place of line 1" in text
    # As written: the compiled step still uses 0.5 (weight halves at every update).
    assert abs(value_of(kernel, "float(weight)") - 4.0 * 0.5**4) < 1e-5
    run(kernel, "weight.assign(4.0)")
    fixed = "sgd.learning_rate = 0.01\nfor _ in range(3):\n    one_update()\n"
    assert _attribute_notes(kernel, fixed) == []
    assert abs(value_of(kernel, "float(weight)") - 4.0 * 0.99**3) < 1e-4


def test_look_alikes_are_quiet(kernel: KernelSession) -> None:
    run(kernel, _MADE)
    assert _attribute_notes(kernel, "sgd.learning_rate = 0.2\n") == []
    # Not an optimizer.
    run(kernel, "class Settings:\n    pass\nsettings = Settings()\n")
    assert _attribute_notes(kernel, "settings.lr = 0.3\n") == []
    # A hyperparameter the optimizer's class defines (SGD's momentum is an attribute).
    assert _attribute_notes(kernel, "sgd.momentum = 0.9\n") == []
