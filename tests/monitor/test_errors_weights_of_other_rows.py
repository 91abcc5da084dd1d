"""Per-example weights built from another split's rows (issue #25, ``_built_from_other_rows``
in ``errors/families_data.py``): ``sw = table[y_val]`` given to ``fit(x_train, y_train,
sample_weight=sw)``. The weights have as many entries as another of the learner's arrays;
the entry names it, never calls the weights one per class, and rebuilds them from fit's
own labels when the two are one data's splits (the printed fix runs and trains). Weights
whose source is not known to match fit's labels get the cause without a fix."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """feats_train = np.random.rand(90, 6).astype("float32")
kinds_train = np.arange(90) % 3
kinds_val = np.arange(30) % 3
scores_val = np.random.rand(30).astype("float32")
targets = np.random.rand(90).astype("float32")
per_kind = np.array([1.0, 4.0, 2.0])
picker = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(3, activation="softmax")])
picker.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
reg = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(1)])
reg.compile(optimizer="sgd", loss="mse")
"""

FIT = "history = picker.fit(feats_train, kinds_train, sample_weight=row_w, epochs=1, verbose=0)"


def test_class_weights_looked_up_by_validation_labels(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    text = failing(kernel, f"row_w = per_kind[kinds_val]\n{FIT}")["explanation"]
    assert "`row_w` has 30 entries, as many as `kinds_val`" in text
    assert "one per class" not in text
    fix = fix_of(text)
    assert fix == "row_w = per_kind[kinds_train]"
    runs_cleanly(kernel, f"{fix}\n{FIT}")
    assert value_of(kernel, "len(history.history['loss'])") == 1


def test_weights_from_another_split_without_a_sure_source(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    cell = (
        "conf = np.abs(scores_val) + 0.5\n"
        "reg.fit(feats_train, targets, sample_weight=conf, epochs=1, verbose=0)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`conf` has 30 entries, as many as `scores_val`" in text
    assert "build `conf` from the training rows" in text and "Fix:" not in text


def test_per_example_weights_train_without_an_entry(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA)
    runs_cleanly(kernel, f"row_w = per_kind[kinds_train]\n{FIT}")
