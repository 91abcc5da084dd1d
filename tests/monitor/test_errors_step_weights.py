"""A custom ``train_step``/``test_step`` that unpacks two items from a batch Keras gave
three (issue #25): ``fit(..., class_weight=...)`` or ``evaluate(..., sample_weight=...)``
adds one weight per example, so ``feats, target = data`` fails. The entry says which
argument added it and names ``keras.utils.unpack_x_y_sample_weight``; the printed line,
put in the class, makes the call run. The call without weights stays quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

_TRAIN = """class Scorer(keras.Model):
    def __init__(self):
        super().__init__()
        self.head = keras.layers.Dense(1, activation="sigmoid")
        self.bce = keras.losses.BinaryCrossentropy()

    def call(self, x):
        return self.head(x)

    def train_step(self, data):
        feats, target = data
        with tf.GradientTape() as tape:
            loss = self.bce(target, self(feats, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
"""

_DATA = (
    "feats_all = np.random.rand(40, 3).astype('float32')\n"
    "target_all = (feats_all[:, :1] > 0.5).astype('float32')\n"
)


def test_class_weight_gives_train_step_a_third_item(kernel: KernelSession) -> None:
    runs_cleanly(kernel, _DATA + _TRAIN)
    call = (
        "scorer = Scorer()\nscorer.compile(optimizer='sgd')\n"
        "log = scorer.fit(feats_all, target_all, class_weight={0: 1.0, 1: 3.0}, "
        "epochs=1, verbose=0)"
    )
    text = failing(kernel, call)["explanation"]
    assert "`fit` was given `class_weight=`" in text
    fix = fix_of(text)
    assert fix == "feats, target, sample_weight = keras.utils.unpack_x_y_sample_weight(data)"
    runs_cleanly(kernel, _TRAIN.replace("feats, target = data", fix))
    runs_cleanly(kernel, call)
    assert value_of(kernel, "len(log.history['loss'])") == 1
    # The look-alike: the same step, fit without weights.
    runs_cleanly(kernel, _TRAIN)
    runs_cleanly(kernel, call.replace("class_weight={0: 1.0, 1: 3.0}, ", ""))


_TEST = """class Judge(keras.Model):
    def __init__(self):
        super().__init__()
        self.out = keras.layers.Dense(1)

    def call(self, x):
        return self.out(x)

    def test_step(self, batch):
        inputs, labels = batch
        gap = tf.reduce_mean(tf.abs(self(inputs) - labels))
        return {"gap": gap}
"""


def test_sample_weight_gives_test_step_a_third_item(kernel: KernelSession) -> None:
    runs_cleanly(kernel, _DATA + _TEST)
    call = (
        "judge = Judge()\njudge.compile(optimizer='adam', loss='mae')\n"
        "score = judge.evaluate(feats_all, target_all, sample_weight=np.ones(40), verbose=0)"
    )
    text = failing(kernel, call)["explanation"]
    assert "`evaluate` was given `sample_weight=`" in text
    assert "keras.utils.unpack_x_y_sample_weight" in text
    fix = fix_of(text)
    assert fix == "inputs, labels, sample_weight = keras.utils.unpack_x_y_sample_weight(batch)"
    runs_cleanly(kernel, _TEST.replace("inputs, labels = batch", fix))
    runs_cleanly(kernel, call)
    runs_cleanly(kernel, _TEST)
    runs_cleanly(kernel, call.replace("sample_weight=np.ones(40), ", ""))
