"""``training=True`` given to predict (issue #25, ``errors/families_arguments.py``): predict
always runs in inference mode and has no such keyword. The entry says so and its fix calls
the model itself with ``training=``, kept a NumPy array with ``.numpy()`` so that the rest
of the line (an array method, a NumPy function) still works; the fixed cell runs with
Dropout on (the samples differ), and the Monte Carlo sampling it writes is not told as a
model evaluated in training mode (``symptoms/training_mode.py``), while one prediction in
training mode, or a model with BatchNormalization sampled so, still is. predict without the
keyword is quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, note_texts, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

MODEL = """keras.utils.set_random_seed(6)
dropper = keras.Sequential(
    [keras.Input((5,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dropout(0.5),
     keras.layers.Dense(2)]
)
probe_x = np.random.default_rng(1).normal(size=(12, 5)).astype("float32")
"""


def test_training_given_to_predict_calls_the_model(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODEL)
    cell = (
        "draws = np.stack([dropper.predict(probe_x, verbose=0, training=True)[:, 0] "
        "for _ in range(8)])"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "training-argument"
    assert "`predict` always runs the model in inference mode" in text
    fix = fix_of(text)
    assert fix == (
        "draws = np.stack([dropper(probe_x, training=True).numpy()[:, 0] for _ in range(8)])"
    )
    # Sampling the same input again and again in training mode is Monte Carlo dropout,
    # on purpose: the fixed cell runs and no note calls its training mode a mistake.
    report = checked_report(run(kernel, fix))
    assert report["error"] is None
    assert not [text for text in note_texts(report) if "training mode" in text]
    assert value_of(kernel, "list(draws.shape)") == [8, 12]
    assert value_of(kernel, "float(draws.std(axis=0).mean()) > 0")


def test_predict_without_training_is_quiet(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODEL)
    runs_cleanly(kernel, "plain = dropper.predict(probe_x, verbose=0).ravel()")


def test_one_prediction_in_training_mode_is_still_told(kernel: KernelSession) -> None:
    runs_cleanly(kernel, MODEL)
    report = checked_report(run(kernel, "once = dropper(probe_x, training=True).numpy()"))
    assert [text for text in note_texts(report) if "training mode" in text]
    # A model with BatchNormalization sampled repeatedly moves its moving statistics: told.
    runs_cleanly(
        kernel,
        "normed = keras.Sequential([keras.Input((5,)), keras.layers.BatchNormalization(), "
        "keras.layers.Dropout(0.5), keras.layers.Dense(1)])",
    )
    report = checked_report(
        run(kernel, "many = [normed(probe_x, training=True).numpy() for _ in range(3)]")
    )
    assert [text for text in note_texts(report) if "training mode" in text]
