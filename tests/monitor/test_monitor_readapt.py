"""A preprocessing layer adapted again after a model was trained with it (issue #25,
silent bugs): ``norm.adapt(new_batch)`` or ``vectorize.adapt(review_texts)`` after fit
replaces the statistics or vocabulary under the trained weights. Told after the cell
that re-adapts a layer a fit of an earlier cell used, through the model's layers or the
map of its dataset; the note names the layer, the model, the data and gives the adapt on
the training data again (read from the cell history). The fix is run in the kernel: the
layer gives the same numbers as during fit. Look-alikes stay silent: adapt before fit,
a fresh layer, a layer no fit used."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "preprocessing-adapt"

DATA = """rng = np.random.default_rng(2)
feats = rng.normal(5, 3, size=(120, 3)).astype("float32")
new_batch = rng.normal(0, 1, size=(10, 3)).astype("float32")
norm = keras.layers.Normalization()
norm.adapt(feats)
reg = keras.Sequential([keras.Input((3,)), norm, keras.layers.Dense(1)])
reg.compile(optimizer="adam", loss="mse")
"""
FIT = "hist = reg.fit(feats, feats[:, :1], epochs=1, verbose=0)\n"

TEXT = """reviews = np.array(["good movie", "bad movie", "great film", "awful plot"] * 20)
stars = np.array([1, 0, 1, 0] * 20, dtype="float32")
fresh_reviews = np.array(["terrible acting", "wonderful cast", "boring story"] * 4)
vectorize = keras.layers.TextVectorization(max_tokens=50, output_sequence_length=4)
vectorize.adapt(reviews)
review_ds = tf.data.Dataset.from_tensor_slices((reviews, stars)).batch(8)
review_ds = review_ds.map(lambda x, y: (vectorize(x), y))
clf = keras.Sequential([
    keras.Input((4,), dtype="int64"), keras.layers.Embedding(50, 4),
    keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1, activation="sigmoid"),
])
clf.compile(optimizer="adam", loss="binary_crossentropy")
"""


def readapt_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "again after" in note["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_normalization_of_a_fitted_model_adapted_again(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, FIT)
    run(kernel, "before = reg(feats[:5]).numpy()\n")
    notes = readapt_notes(checked_report(run(kernel, "norm.adapt(new_batch)\n")))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`norm.adapt(new_batch)` (line 1) adapts `norm` again after `reg` was trained with "
        "it (by a fit before this adapt): it replaces the mean and variance `norm` had during "
        "fit with that of `new_batch`"
    ), notes[0]
    assert shown(kernel, "np.allclose(reg(feats[:5]).numpy(), before)") == "False"
    fix = codes(notes[0])[-1]
    assert fix == "norm.adapt(feats)"
    assert readapt_notes(checked_report(run(kernel, fix + "\n"))) == []
    assert shown(kernel, "np.allclose(reg(feats[:5]).numpy(), before, atol=1e-5)") == "True"


def test_vocabulary_of_a_dataset_map_adapted_again(kernel: KernelSession) -> None:
    run(kernel, TEXT)
    run(kernel, "hist = clf.fit(review_ds, epochs=1, verbose=0)\n")
    run(kernel, "ids_before = vectorize(reviews[:4]).numpy()\n")
    notes = readapt_notes(checked_report(run(kernel, "vectorize.adapt(fresh_reviews)\n")))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`vectorize.adapt(fresh_reviews)` (line 1) adapts `vectorize` again after `clf` was "
        "trained with its dataset's `map` (by a fit before this adapt): it replaces the "
        "vocabulary"
    ), notes[0]
    fix = codes(notes[0])[-1]
    assert fix == "vectorize.adapt(reviews)"
    run(kernel, fix + "\n")
    assert shown(kernel, "np.array_equal(vectorize(reviews[:4]).numpy(), ids_before)") == "True"


def test_adapted_again_after_a_fit_in_the_same_cell(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = FIT + "norm.adapt(new_batch)\n"
    notes = readapt_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`norm.adapt(new_batch)` (line 2) adapts `norm` again after")


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # Adapted before the fit, in the same cell or an earlier one.
    assert readapt_notes(checked_report(run(kernel, "norm.adapt(feats)\n" + FIT))) == []
    assert (
        readapt_notes(checked_report(run(kernel, "other = keras.layers.Normalization()\n"))) == []
    )
    # A fresh layer, and a layer no fit used, adapted after the fit.
    assert readapt_notes(checked_report(run(kernel, "other.adapt(new_batch)\n"))) == []
    cell = "fresh = keras.layers.Normalization()\nfresh.adapt(feats)\n"
    assert readapt_notes(checked_report(run(kernel, cell))) == []
    # Adapted again on the very data it had during fit: nothing changed under the weights.
    assert readapt_notes(checked_report(run(kernel, "norm.adapt(feats)\n"))) == []
