"""Data already in [0, 1] divided by 255 again (issue #25, ``symptoms/rescaled_again.py``).

Images that ``tf.image.convert_image_dtype`` already scaled, multiplied by ``1 / 255``,
and a NumPy array in [0, 1] divided in place (``/=``) are told in one note naming both
lines; the fix (the lines deleted), applied, leaves the data in [0, 1] and no note. Raw
8-bit pixels divided once, pixels mapped to [-1, 1] from raw values, and a small array of
probabilities divided for a plot stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """gen4 = np.random.default_rng(4)
raw_frames = gen4.integers(0, 256, size=(40, 6, 6, 3)).astype("uint8")
frames = tf.image.convert_image_dtype(raw_frames, tf.float32)
heat = gen4.random((30, 10)).astype("float32")
"""

WORDS = "already on the"


def notes_about(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if WORDS in n["text"]]


def test_scaled_data_divided_again(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "frames_in = frames * (1.0 / 255)\nheat /= 255.0\nprint(float(tf.reduce_max(frames_in)))"
    [text] = notes_about(cell, kernel)
    assert text.startswith(
        "Lines 1 and 2 of this cell divide by 255 data that were already on the [0, 1] scale: "
        "`frames_in` now reaches 0.00392 at most (before the division, 1); `heat` now "
        "reaches"
    )
    assert "Nothing raises." in text
    assert fix_in(text) == "heat /= 255.0"
    assert "Fix: delete `frames_in = frames * (1.0 / 255)` and `heat /= 255.0`." in text
    # The fix: the data remade (this cell ran once already), the divisions deleted.
    run(kernel, DATA)
    fixed = "frames_in = frames\nprint(float(tf.reduce_max(frames_in)))"
    assert notes_about(fixed, kernel) == []
    assert value_of(kernel, "float(tf.reduce_max(frames_in)) > 0.9") is True
    assert value_of(kernel, "float(heat.max()) > 0.9") is True


def test_divisions_that_are_right_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # Raw pixels divided once.
    assert notes_about("pix = raw_frames.astype('float32') / 255.0", kernel) == []
    # Raw pixels to [-1, 1].
    assert notes_about("centred = raw_frames / 127.5 - 1.0", kernel) == []
    # A handful of numbers, not data.
    assert notes_about("shares = np.array([0.2, 0.5, 0.3]) / 100", kernel) == []


TRAINING = """gen9 = np.random.default_rng(9)
shots = gen9.random((96, 5, 5, 1)).astype("float32")
kinds = (shots.mean(axis=(1, 2, 3)) > 0.5).astype("int64")
probe = gen9.random((16, 5, 5, 1)).astype("float32")
reader = keras.Sequential([
    keras.Input((5, 5, 1)), keras.layers.Flatten(), keras.layers.Dense(2),
])
reader.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
"""


def test_predict_after_training_on_data_scaled_twice_blames_the_training_data(
    kernel: KernelSession,
) -> None:
    run(kernel, TRAINING)
    run(kernel, "shots_s = shots / 255.0")
    run(kernel, "reader.fit(shots_s, kinds, epochs=1, verbose=0)")
    report: dict[str, Any] = checked_report(run(kernel, "out = reader.predict(probe, verbose=0)"))
    [text] = [n["text"] for n in report["notes"] if "fit trained" in n["text"]]
    assert "Here the training data are the odd ones, not these inputs" in text
    assert "`shots_s` exceeds about 1/255" in text
    assert "(`shots_s = shots / 255.0`, cell In[" in text
    assert "Apply the" not in text and "Apply" not in text
    # The fix: the training data not divided, the model trained again; predict is quiet.
    run(kernel, "shots_s = shots\nreader.fit(shots_s, kinds, epochs=1, verbose=0)")
    report = checked_report(run(kernel, "out = reader.predict(probe, verbose=0)"))
    assert [n["text"] for n in report["notes"] if "fit trained" in n["text"]] == []
