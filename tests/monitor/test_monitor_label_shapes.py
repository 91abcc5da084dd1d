"""Labels whose shape or format the model's output and loss take without an error
(``training/loss_agreement.py``, issue #25 part 2), each in a real kernel: multi-hot
labels (several 1s per row) given to a softmax and categorical cross-entropy, and to the
sparse loss (an error, whose entry must not call them one-hot); a one-unit output fitted
on several targets per example (or several units on one), which mse broadcasts. Each
note names the learner's model, layer and labels, its printed fix is run as printed (the
model then learns, the note is gone), and correct look-alikes stay silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import (
    IMPORTS,
    KernelSession,
    KernelSetup,
    checked_report,
    error_of_failing_cell,
    run,
    value_of,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "import warnings\n"
    "warnings.simplefilter('ignore')\n"
    "rng = np.random.default_rng(4)\n"
    "feats = rng.normal(size=(600, 8)).astype('float32')\n"
    # Several tags per example: tag j is on when feature j is positive.
    "tags = (feats[:, :4] > 0).astype('float32')\n"
    "single = np.eye(4, dtype='float32')[feats[:, :4].argmax(1)]\n"
    "targets = np.stack([feats[:, 0], feats[:, 1] * 2, feats[:, 2] - feats[:, 3]], 1)\n"
    "price = (feats[:, 0] * 3 + 1)[:, None]\n"
)


def notes_of(report: dict, start: str) -> list[str]:
    return [n["text"] for n in report["notes"] if start in n["text"]]


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


TAGGER = """keras.utils.set_random_seed(1)
hidden = keras.layers.Dense(16, activation="relu")
tagger = keras.Sequential([keras.Input((8,)), hidden, keras.layers.Dense(4, activation="softmax")])
tagger.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
tagger.fit(feats, tags, epochs=40, verbose=0)
"""
# Each tag right or wrong at 0.5, measured from predict.
PER_TAG = "float(np.mean((tagger.predict(feats, verbose=0) > 0.5) == tags))"


def test_multi_hot_labels_with_softmax_and_categorical_loss(kernel: KernelSession) -> None:
    report = checked_report(run(kernel, TAGGER))
    [text] = notes_of(report, "multi-hot")
    assert text.startswith("`tags` (made in cell In["), text
    assert "are multi-hot, not one-hot" in text
    rows = value_of(kernel, "int((tags.sum(1) > 1).sum())")
    assert f"{rows} of 600 rows hold more than one 1" in text
    assert "`tagger` ends with `tagger.layers[1]`" in text
    assert "one-hot labels" not in text and "use categorical" not in text
    broken = value_of(kernel, PER_TAG)
    spans = code_spans(text)
    layer = [s for s in spans if s.startswith("keras.layers.Dense(")][-1]
    compile_call = next(s for s in spans if s.startswith("tagger.compile("))
    assert layer == 'keras.layers.Dense(4, activation="sigmoid")'
    assert compile_call == (
        'tagger.compile(optimizer="adam", loss="binary_crossentropy", '
        "metrics=[keras.metrics.BinaryAccuracy(threshold=0.5)])"
    )
    fixed = TAGGER.replace('keras.layers.Dense(4, activation="softmax")', layer)
    fixed = fixed.replace(
        'tagger.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])',
        compile_call,
    )
    assert notes_of(checked_report(run(kernel, fixed)), "multi-hot") == []
    learned = value_of(kernel, PER_TAG)
    assert learned > 0.9 > broken + 0.1, (broken, learned)
    several = "int(((tagger.predict(feats, verbose=0) > 0.5).sum(1) > 1).sum())"
    assert value_of(kernel, several) > 100  # several tags said yes to at once


def test_one_hot_labels_stay_silent(kernel: KernelSession) -> None:
    cell = TAGGER.replace("tags, epochs=40", "single, epochs=2")
    assert notes_of(checked_report(run(kernel, cell)), "multi-hot") == []
    sigmoid = TAGGER.replace('"softmax"', '"sigmoid"').replace("epochs=40", "epochs=2")
    sigmoid = sigmoid.replace('"categorical_crossentropy"', '"binary_crossentropy"')
    assert notes_of(checked_report(run(kernel, sigmoid)), "multi-hot") == []


def test_multi_hot_labels_with_the_sparse_loss(kernel: KernelSession) -> None:
    """The sparse loss raises on (n, 4) labels; the entry says multi-hot and never sends
    the learner to categorical_crossentropy; its fix trains."""
    cell = TAGGER.replace('"categorical_crossentropy"', '"sparse_categorical_crossentropy"')
    explanation = error_of_failing_cell(kernel, cell)["explanation"]
    assert "`tags` are multi-hot, not one-hot" in explanation, explanation
    assert "categorical_crossentropy'" not in explanation.replace("sparse_categorical", "")
    assert "look one-hot" not in explanation
    fix = explanation.split("Fix: ", 1)[1]
    assert "activation='sigmoid'" in fix and "loss='binary_crossentropy'" in fix
    metric = re.search(r"`metrics=([^`]+)`", fix)
    assert metric is not None
    fixed = cell.replace('"softmax"', '"sigmoid"').replace(
        'loss="sparse_categorical_crossentropy", metrics=["accuracy"]',
        f"loss='binary_crossentropy', metrics={metric.group(1)}",
    )
    report = checked_report(run(kernel, fixed))
    assert report["error"] is None and notes_of(report, "multi-hot") == []
    assert value_of(kernel, PER_TAG) > 0.9


REGRESSOR = """keras.utils.set_random_seed(2)
hidden = keras.layers.Dense(16, activation="relu")
reg = keras.Sequential([keras.Input((8,)), hidden, keras.layers.Dense(1)])
reg.compile(optimizer="adam", loss="mse")
reg.fit(feats, targets, epochs=30, verbose=0)
"""
ERROR = "float(np.mean((reg.predict(feats, verbose=0) - targets) ** 2))"


def test_one_output_fitted_on_three_targets(kernel: KernelSession) -> None:
    report = checked_report(run(kernel, REGRESSOR))
    [text] = notes_of(report, "broadcasts the (None, 1) output")
    # The course shows target shapes under "Labels, outputs and the loss", not the output
    # activation.
    [section] = [n["course"]["section"] for n in report["notes"] if n["text"] == text]
    assert section == "labels-and-loss", section
    assert text.startswith("`reg` ends with `reg.layers[1]`, `keras.layers.Dense(1)`"), text
    assert "its output is shaped (None, 1)" in text
    assert "`targets` (made in cell In[" in text and "are shaped (600, 3)" in text
    assert '`loss="mse"`' in text
    broken = value_of(kernel, ERROR)
    layer = next(s for s in code_spans(text) if s.startswith("keras.layers.Dense(3"))
    assert layer == "keras.layers.Dense(3)"
    fixed = REGRESSOR.replace("keras.layers.Dense(1)", layer)
    assert notes_of(checked_report(run(kernel, fixed)), "broadcasts the") == []
    assert value_of(kernel, ERROR) < broken / 3, broken


def test_three_outputs_fitted_on_one_target(kernel: KernelSession) -> None:
    cell = REGRESSOR.replace("keras.layers.Dense(1)", "keras.layers.Dense(3)")
    cell = cell.replace("targets, epochs", "price, epochs")
    [text] = notes_of(checked_report(run(kernel, cell)), "broadcasts the (None, 3) output")
    assert "`price` (made in cell In[" in text and "are shaped (600, 1)" in text
    layer = next(s for s in code_spans(text) if s.startswith("keras.layers.Dense(1"))
    assert layer == "keras.layers.Dense(1)"
    fixed = cell.replace("keras.layers.Dense(3)", layer)
    assert notes_of(checked_report(run(kernel, fixed)), "broadcasts the") == []
    assert value_of(kernel, "list(reg.predict(feats[:2], verbose=0).shape)") == [2, 1]


def test_matching_outputs_and_targets_stay_silent(kernel: KernelSession) -> None:
    matched = REGRESSOR.replace("keras.layers.Dense(1)", "keras.layers.Dense(3)")
    matched = matched.replace("epochs=30", "epochs=1")
    assert notes_of(checked_report(run(kernel, matched)), "broadcasts the") == []
    column = REGRESSOR.replace("targets, epochs=30", "targets[:, :1], epochs=1")
    assert notes_of(checked_report(run(kernel, column)), "broadcasts the") == []
    flat = REGRESSOR.replace("targets, epochs=30", "price[:, 0], epochs=1")
    assert notes_of(checked_report(run(kernel, flat)), "broadcasts the") == []


RATER = """keras.utils.set_random_seed(4)
scores_ds = tf.data.Dataset.from_tensor_slices((feats, ratings)).shuffle(600).batch(32)
rater = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1, activation=tf.nn.sigmoid)])
rater.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
rater.fit(scores_ds, epochs=40, verbose=0)
"""
RATER_ERROR = "float(rater.evaluate(scores_ds, verbose=0))"


def test_ratings_in_a_dataset_beyond_a_sigmoid(kernel: KernelSession) -> None:
    """Ratings 1 to 5 in a tf.data dataset (read from its from_tensor_slices source, no
    element produced) for a sigmoid output: the note names the dataset and the layer as
    written (``tf.nn.sigmoid``), and the linear layer it prints fits the ratings."""
    run(kernel, "ratings = np.clip(np.round(feats[:, :1] + 3), 1, 5).astype('float32')")
    report = checked_report(run(kernel, RATER))
    [text] = notes_of(report, "only outputs values in (0, 1)")
    assert "`rater.layers[0]`, `keras.layers.Dense(1, activation=tf.nn.sigmoid)`" in text
    assert "but the targets in `scores_ds` run from 1 to 5" in text
    broken = value_of(kernel, RATER_ERROR)
    layer = [s for s in code_spans(text) if s.startswith("keras.layers.Dense(")][-1]
    assert layer == "keras.layers.Dense(1, activation=None)"
    fixed = RATER.replace("keras.layers.Dense(1, activation=tf.nn.sigmoid)", layer)
    assert notes_of(checked_report(run(kernel, fixed)), "only outputs values in") == []
    assert value_of(kernel, RATER_ERROR) < broken / 3, broken
    scaled = RATER.replace("(feats, ratings)", "(feats, (ratings - 1) / 4)")
    scaled = scaled.replace("epochs=40", "epochs=1")
    assert notes_of(checked_report(run(kernel, scaled)), "only outputs values in") == []
