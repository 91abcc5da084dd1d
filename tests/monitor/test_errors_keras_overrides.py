"""A learner's class overriding a Keras method with another signature than Keras calls
it with (issue #25): the TypeError is raised inside Keras, so the entry names the class,
the method, Keras's signature (read from the base class) and the ``def`` line to write.
Our own cells (``errors/families_overrides.py``)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, run
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

MODEL = """pm = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
pm.compile(loss="mse")
feats, marks = np.zeros((8, 2), "float32"), np.zeros((8, 1), "float32")
"""


def test_a_callback_hook_without_keras_arguments(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODEL)
    define = """class Printer(keras.callbacks.Callback):
    def on_epoch_end(self):
        self.seen = True
"""
    train = "pm.fit(feats, marks, epochs=1, verbose=0, callbacks=[Printer()])"
    error = failing(kernel, define + train)
    assert error["course"]["section"] == "callback-mode"
    text = error["explanation"]
    assert "`Printer.on_epoch_end` overrides `Callback.on_epoch_end`" in text
    assert "`on_epoch_end(self, epoch, logs=None)`" in text
    fix = fix_of(text)
    assert fix == "def on_epoch_end(self, epoch, logs=None):"
    runs_cleanly(kernel, define.replace("def on_epoch_end(self):", fix) + train)
    # A look-alike: the learner calling the hook wrongly in the cell is not Keras's call.
    quiet = checked_report(run(kernel, define + "Printer().on_epoch_end(1)", ok=False))
    assert quiet["error"] is None or "overrides" not in quiet["error"]["explanation"]


def test_a_metric_update_state_without_sample_weight(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODEL)
    define = """class Batches(keras.metrics.Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.n = self.add_weight(shape=(), initializer="zeros")
    def update_state(self, y_true, y_pred):
        self.n.assign_add(1.0)
    def result(self):
        return self.n
"""
    train = 'pm.compile(loss="mse", metrics=[Batches()])\npm.fit(feats, marks, epochs=1, verbose=0)'
    error = failing(kernel, define + train)
    text = error["explanation"]
    assert "`Batches.update_state` overrides `Metric.update_state`" in text
    assert "`update_state(self, y_true, y_pred, sample_weight=None)`" in text
    fix = fix_of(text)
    assert fix == "def update_state(self, y_true, y_pred, sample_weight=None):"
    runs_cleanly(kernel, define.replace("def update_state(self, y_true, y_pred):", fix) + train)


def test_a_layer_call_and_a_get_config_with_other_parameters(kernel: KernelSession) -> None:
    define = """class Ident(keras.layers.Layer):
    def call(self):
        return 1.0
"""
    use = "out = Ident()(np.zeros((2, 2), 'float32'))"
    error = failing(kernel, define + use)
    assert error["course"]["section"] == "keras-weights-in-build"
    text = error["explanation"]
    assert "`Ident.call` overrides `Layer.call`" in text
    fix = fix_of(text)
    assert fix == "def call(self, inputs):"
    runs_cleanly(kernel, define.replace("def call(self):", fix) + use)

    config = """class Tagged(keras.layers.Layer):
    def get_config(self, extra):
        return super().get_config()
tm = keras.Sequential([keras.Input((2,)), Tagged()])
"""
    save = f"tm.save({str(kernel_tmp(kernel))!r})"
    error = failing(kernel, config + save)
    assert error["course"]["section"] == "keras-saving"
    fix = fix_of(error["explanation"])
    assert fix == "def get_config(self):"
    runs_cleanly(kernel, config.replace("def get_config(self, extra):", fix) + save)


def test_a_train_step_without_data(kernel: KernelSession) -> None:
    define = """class Stepper(keras.Model):
    def train_step(self):
        return {"seen": tf.constant(1.0)}
si = keras.Input((2,))
st = Stepper(si, keras.layers.Dense(1)(si))
st.compile(loss="mse")
"""
    runs_cleanly(kernel, MODEL)
    train = "st.fit(feats, marks, epochs=1, verbose=0)"
    error = failing(kernel, define + train)
    assert error["course"]["section"] == "custom-train-step"
    text = error["explanation"]
    assert "`Stepper.train_step` overrides `" in text and "`train_step(self, data)`" in text
    assert fix_of(text) == "def train_step(self, data):"
    runs_cleanly(kernel, define.replace("def train_step(self):", fix_of(text)) + train)


def kernel_tmp(kernel: KernelSession) -> str:
    """A fresh .keras path in a temporary directory of the kernel's machine."""
    import tempfile

    return tempfile.mkdtemp(prefix="tfcoach-overrides-") + "/tagged.keras"


def test_a_loss_call_taking_only_the_labels_gets_both_parameters(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODEL)
    define = """class Spread(keras.losses.Loss):
    def call(self, y_true):
        return keras.ops.var(y_true)
"""
    train = "pm.compile(loss=Spread())\npm.fit(feats, marks, epochs=1, verbose=0)"
    error = failing(kernel, define + train)
    text = error["explanation"]
    fix = fix_of(text)
    # The one parameter was the labels' name already: not written twice, and the body is
    # told to read the predictions under their own name.
    assert fix == "def call(self, y_true, y_pred):"
    assert "read `y_pred` in the body" in text
    fixed = define.replace("def call(self, y_true):", fix).replace("var(y_true)", "var(y_pred)")
    runs_cleanly(kernel, fixed + train)
