"""``training=True`` given to predict (issue #25, ``errors/families_arguments.py``): predict
always runs in inference mode and has no such keyword. The entry says so and its fix calls
the model itself with ``training=``, kept a NumPy array with ``.numpy()`` so that the rest
of the line (an array method, a NumPy function) still works; the fixed cell runs with
Dropout on (the samples differ), and the Monte Carlo sampling it writes is not told as a
model evaluated in training mode (``symptoms/training_mode.py``), while one prediction in
training mode, or a model with BatchNormalization sampled so, still is. predict without the
keyword is quiet."""

from __future__ import annotations

import re

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


# A model whose nested block holds BatchNormalization: calling it whole with
# training=True would also move the block's moving statistics with the data sampled, so
# the fix samples only through the dropout, the block run once in inference mode.
STACKED = """keras.utils.set_random_seed(9)
encoder = keras.Sequential(
    [keras.Input((5,)), keras.layers.Dense(7), keras.layers.BatchNormalization(name="enc_norm"),
     keras.layers.Activation("tanh")], name="encoder")
scorer = keras.Sequential([keras.Input((5,)), encoder, keras.layers.Dropout(0.4),
                           keras.layers.Dense(1, name="score")])
scorer.compile(optimizer="adam", loss="mse")
shifted = np.random.default_rng(2).normal(6.0, 2.0, size=(30, 5)).astype("float32")
scorer.fit(shifted, shifted[:, 0], epochs=2, verbose=0)
learned = encoder.get_layer("enc_norm").moving_variance.numpy().copy()
probe_x = np.random.default_rng(1).normal(size=(12, 5)).astype("float32")
"""


def test_predict_sampling_of_a_model_with_batch_normalization(kernel: KernelSession) -> None:
    runs_cleanly(kernel, STACKED)
    cell = "votes = [scorer.predict(probe_x, training=True, verbose=0) for _ in range(6)]"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`predict` always runs the model in inference mode" in text
    assert "BatchNormalization layer `enc_norm` (in `encoder`)" in text
    assert "scorer(probe_x, training=True)" not in text  # the whole model: not offered
    setup = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert setup == [
        "features = scorer.layers[0](probe_x, training=False)",
        "sampler = keras.Sequential(scorer.layers[1:])",
        "votes = [sampler(features, training=True).numpy() for _ in range(6)]",
    ]
    report = checked_report(run(kernel, "\n".join(setup)))
    assert report["error"] is None
    assert not [text for text in note_texts(report) if "training mode" in text]
    # The learned statistics are kept, the passes differ (dropout on), and they are
    # NumPy arrays of predict's shape.
    kept = "bool(np.array_equal(encoder.get_layer('enc_norm').moving_variance.numpy(), learned))"
    assert value_of(kernel, kept) is True
    assert value_of(kernel, "float(np.std(np.stack(votes), axis=0).mean()) > 0") is True
    assert value_of(kernel, "[type(votes[0]).__name__, list(votes[0].shape)]") == [
        "ndarray",
        [12, 1],
    ]
