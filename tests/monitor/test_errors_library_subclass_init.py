"""A subclass of a Keras class that is no layer (a loss, a metric) whose ``__init__``
never calls ``super().__init__()`` (``errors/families_keras_api.py``, FORGOT_SUPER): Keras
fails later on an attribute the base's ``__init__`` sets (``name``, ``_tracker``), far from
the class. The entry names the class, its base, the attribute and the ``def __init__``
line; the printed fix, applied, makes the class work. A subclass that calls it, and a
missing attribute the base never sets, are not told so."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """rng_ = np.random.default_rng(5)
sizes = rng_.uniform(0, 2, size=(96, 2)).astype("float32")
prices = (sizes @ np.array([1.5, -0.5], dtype="float32")).astype("float32")
"""

LOSS_CLASS = """class ScaledAbsError(keras.losses.Loss):
    def __init__(self, scale):
        self.scale = scale

    def call(self, y_true, y_pred):
        return self.scale * tf.reduce_mean(tf.abs(tf.reshape(y_true, (-1, 1)) - y_pred), axis=-1)
"""

TRAIN = """pricer = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)])
pricer.compile(optimizer="sgd", loss=ScaledAbsError(2.0))
history = pricer.fit(sizes, prices, epochs=2, batch_size=32, verbose=0)
"""

METRIC_CLASS = """class WithinTolerance(keras.metrics.Metric):
    def __init__(self, tolerance=0.5):
        self.tolerance = tolerance
        self.hits = self.add_weight(name="hits", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        close = tf.abs(tf.reshape(y_true, (-1, 1)) - y_pred) <= self.tolerance
        self.hits.assign_add(tf.reduce_sum(tf.cast(close, "float32")))

    def result(self):
        return self.hits
"""


def with_fix(cell: str, class_name: str, fix: str) -> str:
    """The class with the fix as the first statement of its ``__init__``."""
    head = f"class {class_name}"
    assert head in cell
    lines = cell.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("def __init__"))
    lines.insert(at + 1, "        " + fix)
    return "\n".join(lines) + "\n"


def test_a_loss_subclass_without_super(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    text = failing(kernel, LOSS_CLASS + TRAIN)["explanation"]
    assert "`ScaledAbsError` is a subclass of Keras's `Loss`" in text, text
    assert "its `__init__` (line 2 of this cell) never calls `super().__init__()`" in text
    assert "`Loss.__init__` is where `name` is set" in text
    fix = fix_of(text)
    assert fix == "super().__init__()"
    runs_cleanly(kernel, with_fix(LOSS_CLASS, "ScaledAbsError", fix) + TRAIN)
    assert len(value_of(kernel, "history.history['loss']")) == 2


def test_a_metric_subclass_without_super(kernel: KernelSession) -> None:
    error = failing(kernel, METRIC_CLASS + "near = WithinTolerance(0.25)")
    text = error["explanation"]
    assert "`WithinTolerance` is a subclass of Keras's `Metric`" in text, text
    fix = fix_of(text)
    assert fix == "super().__init__()"
    runs_cleanly(kernel, with_fix(METRIC_CLASS, "WithinTolerance", fix))
    runs_cleanly(
        kernel,
        "near = WithinTolerance(0.25)\n"
        "near.update_state(np.array([1.0, 2.0, 3.0]), np.array([[1.1], [2.9], [3.2]]))\n"
        "hits = float(near.result())",
    )
    assert value_of(kernel, "hits") == 2.0


def test_look_alikes_are_not_told_so(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    # A subclass that calls the base's __init__ trains.
    runs_cleanly(kernel, with_fix(LOSS_CLASS, "ScaledAbsError", "super().__init__()") + TRAIN)
    # An attribute the base never sets is the learner's own typo, not a missing super().
    cell = """class Halved(keras.losses.Loss):
    def __init__(self):
        super().__init__()

    def call(self, y_true, y_pred):
        return self.weight_of_half * tf.reduce_mean(tf.square(y_pred), axis=-1)

Halved()(prices[:4], prices[:4, None])
"""
    execution = run(kernel, cell, ok=False)
    assert execution.reply["status"] == "error"
    error = next(iter(execution.reports))["error"]
    assert error is None or "super().__init__()" not in error["explanation"]
