"""A Keras 3 model whose output layer, compiled loss, metrics and labels disagree
(``training/loss_agreement.py``, issue #25): nothing raises, the model trains badly or
fit prints a wrong accuracy. Each case in a real kernel: the note in the learner's names,
its printed fix run as printed (the model then trains, or the number is right, and the
note is gone), and the correct look-alikes that stay silent."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "import warnings\n"
    "warnings.simplefilter('ignore')\n"
    "keras.utils.set_random_seed(5)\n"
    "points = np.random.rand(600, 4).astype('float32')\n"
    "kinds = points[:, :3].argmax(1).astype('int32')\n"
    "flags = (points[:, 0] > 0.5).astype('float32')\n"
    "sizes = points.sum(1)"
)

SECTIONS = {"from-logits", "labels-and-loss", "keras-validation-data"}


def report_of(kernel: KernelSession, code: str) -> dict:
    return checked_report(run(kernel, code))


def notes_in(report: dict, section: str) -> list[str]:
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == section]


def told(report: dict) -> list[str]:
    """The notes of this mechanism's sections."""
    return [t for section in sorted(SECTIONS) for t in notes_in(report, section)]


def fix_of(text: str, starts: str) -> str:
    [fix] = [s for s in re.findall(r"`([^`]+)`", text) if s.startswith(starts)]
    return fix


def model(name: str, head: str, layers: str = 'keras.layers.Dense(16, activation="relu"), ') -> str:
    return (
        "keras.utils.set_random_seed(3)\n"
        f"{name} = keras.Sequential([keras.Input((4,)), {layers}{head}])\n"
    )


def accuracy(kernel: KernelSession, name: str, labels: str, threshold: str = "0.5") -> float:
    """The model's accuracy computed from predict, not from fit's logs."""
    scores = f"{name}.predict(points, verbose=0)"
    if threshold == "argmax":
        return value_of(kernel, f"float(np.mean({scores}.argmax(1) == {labels}))")
    return value_of(kernel, f"float(np.mean(({scores}[:, 0] > {threshold}) == ({labels} > 0.5)))")


# ------------------------------------------------------------------ logits
SCORES = model("scorer", "keras.layers.Dense(3)") + (
    "scorer.compile(optimizer=keras.optimizers.Adam(0.02), "
    'loss="sparse_categorical_crossentropy", metrics=["accuracy"])\n'
    "trail = scorer.fit(points, kinds, epochs=30, verbose=0)\n"
)


def test_raw_scores_given_to_a_probability_loss(kernel: KernelSession) -> None:
    report = report_of(kernel, SCORES)
    [text] = told(report)
    assert text in notes_in(report, "from-logits")
    assert text.startswith(
        "`scorer` ends with `scorer.layers[1]`, `keras.layers.Dense(3)` (no activation): it "
        "outputs raw scores (logits), any real number, but "
        '`loss="sparse_categorical_crossentropy"` expects probabilities (from_logits=False).'
    )
    badly = accuracy(kernel, "scorer", "kinds", "argmax")
    fix = fix_of(text, "scorer.compile(")
    assert fix == (
        "scorer.compile(optimizer=keras.optimizers.Adam(0.02), "
        "loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), "
        'metrics=["accuracy"])'
    )
    # The fix as printed, then fit again: silent, and the same model trains well.
    fixed = SCORES.replace(SCORES.splitlines()[2], fix)
    assert told(report_of(kernel, fixed)) == []
    assert badly < 0.9 < accuracy(kernel, "scorer", "kinds", "argmax")
    # Look-alikes: a softmax with the default loss; a softmax with from_logits=True
    # (Keras 3 warns and takes the softmax's input as the logits: it trains the same).
    softmax = SCORES.replace("keras.layers.Dense(3)", 'keras.layers.Dense(3, activation="softmax")')
    assert told(report_of(kernel, softmax)) == []
    assert told(report_of(kernel, softmax.replace(SCORES.splitlines()[2], fix))) == []
    assert accuracy(kernel, "scorer", "kinds", "argmax") > 0.9
    # A binary head with no activation: the fix also makes "accuracy" split at 0.
    binary = model("gate", "keras.layers.Dense(1)") + (
        'gate.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])\n'
        "gate.fit(points, flags, epochs=2, verbose=0)\n"
    )
    [text] = told(report_of(kernel, binary))
    assert fix_of(text, "gate.compile(") == (
        'gate.compile(optimizer="adam", '
        "loss=keras.losses.BinaryCrossentropy(from_logits=True), "
        'metrics=[keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)])'
    )
    # A functional model: its layers list starts with the InputLayer.
    functional = (
        "entry = keras.Input((4,))\n"
        "hidden = keras.layers.Dense(8)(entry)\n"
        "graph = keras.Model(entry, keras.layers.Dense(3, name='scores')(hidden))\n"
        'graph.compile(optimizer="adam", loss="categorical_crossentropy")\n'
        "graph.fit(points, keras.utils.to_categorical(kinds, 3), epochs=1, verbose=0)\n"
    )
    [text] = told(report_of(kernel, functional))
    assert text.startswith(
        "`graph` ends with `graph.get_layer('scores')`, `keras.layers.Dense(3, name='scores')` "
        "(no activation)"
    )
    assert value_of(kernel, "graph.get_layer('scores').units") == 3


# ------------------------------------------------- binary accuracy on scores
GATE = model("gate", "keras.layers.Dense(1)") + (
    'gate.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True), '
    'metrics=["accuracy"])\n'
    "gate.fit(points, flags, epochs=5, verbose=0)\n"
)
EVALUATED = "dict(zip(['loss', 'accuracy'], gate.evaluate(points, flags, verbose=0)))['accuracy']"


def test_accuracy_at_the_wrong_threshold_for_raw_scores(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, GATE), "from-logits")
    assert "`gate` ends with `gate.layers[1]`, `keras.layers.Dense(1)` (no activation) and" in text
    assert "Keras made the metric 'accuracy' a BinaryAccuracy with threshold 0.5" in text
    assert value_of(kernel, EVALUATED) != pytest.approx(accuracy(kernel, "gate", "flags", "0"))
    fix = fix_of(text, "gate.compile(")
    assert 'metrics=[keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)]' in fix
    run(kernel, fix)
    # The accuracy Keras reports is now the model's (split at 0), and nothing is told.
    assert value_of(kernel, EVALUATED) == pytest.approx(accuracy(kernel, "gate", "flags", "0"))
    assert told(report_of(kernel, GATE.replace(GATE.splitlines()[2], fix))) == []
    # Look-alike: a sigmoid unit with binary cross-entropy and "accuracy".
    sigmoid = GATE.replace("keras.layers.Dense(1)", 'keras.layers.Dense(1, activation="sigmoid")')
    sigmoid = sigmoid.replace(
        "keras.losses.BinaryCrossentropy(from_logits=True)", '"binary_crossentropy"'
    )
    assert told(report_of(kernel, sigmoid)) == []


def test_accuracy_on_a_regression(kernel: KernelSession) -> None:
    code = model("gauge", "keras.layers.Dense(1)") + (
        'gauge.compile(optimizer="adam", loss="mse", metrics=["accuracy"])\n'
        "history = gauge.fit(points, sizes, epochs=3, verbose=0)\n"
    )
    [text] = notes_in(report_of(kernel, code), "labels-and-loss")
    assert text.startswith(
        "`gauge` is compiled with `loss=\"mse\"`, a regression loss, and the metric 'accuracy'"
    )
    assert value_of(kernel, "history.history['accuracy'][-1]") == 0.0
    fix = fix_of(text, "gauge.compile(")
    assert fix == 'gauge.compile(optimizer="adam", loss="mse", metrics=["mae"])'
    report = report_of(kernel, code.replace(code.splitlines()[2], fix))
    assert told(report) == []
    assert value_of(kernel, "history.history['mae'][-1] < history.history['mae'][0]") is True


# ------------------------------------------------------------ one unit, CCE
ONE = model("yesno", 'keras.layers.Dense(1, activation="sigmoid")') + (
    "yesno.compile(optimizer=keras.optimizers.Adam(0.02), "
    'loss="categorical_crossentropy", metrics=["accuracy"])\n'
    "run_ = yesno.fit(points, flags, epochs=20, verbose=0)\n"
)


def test_categorical_crossentropy_over_one_unit(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, ONE), "labels-and-loss")
    assert text.startswith(
        '`yesno` ends with `yesno.layers[1]`, `keras.layers.Dense(1, activation="sigmoid")` and '
        'is compiled with `loss="categorical_crossentropy"`'
    )
    assert "(fit's loss was 0 every epoch) and nothing is learned" in text
    assert value_of(kernel, "sorted(set(run_.history['loss']))") == [0.0]
    assert accuracy(kernel, "yesno", "flags") < 0.8
    fix = fix_of(text, "yesno.compile(")
    assert 'loss="binary_crossentropy"' in fix
    assert told(report_of(kernel, ONE.replace(ONE.splitlines()[2], fix))) == []
    assert accuracy(kernel, "yesno", "flags") > 0.9
    # One unit with no activation: one note (binary cross-entropy on raw scores), not a
    # second one about from_logits for the categorical loss it should not use.
    raw = ONE.replace('keras.layers.Dense(1, activation="sigmoid")', "keras.layers.Dense(1)")
    [text] = told(report_of(kernel, raw))
    fix = fix_of(text, "yesno.compile(")
    assert "loss=keras.losses.BinaryCrossentropy(from_logits=True)" in fix
    assert 'metrics=[keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)]' in fix
    assert told(report_of(kernel, raw.replace(ONE.splitlines()[2], fix))) == []
    assert accuracy(kernel, "yesno", "flags", "0") > 0.9
    # A softmax over the one unit: fit_symptoms tells it (output-activation), this not again.
    softmax = ONE.replace('activation="sigmoid")', 'activation="softmax")')
    report = report_of(kernel, softmax)
    assert told(report) == []
    assert notes_in(report, "output-activation")


# ------------------------------------------------------ class numbers, mse
CLASSES_MSE = model("picker", 'keras.layers.Dense(3, activation="softmax")') + (
    'picker.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse", metrics=["accuracy"])\n'
    "picker.fit(points, kinds[:, None], epochs=30, verbose=0)\n"
)


def test_class_numbers_given_to_a_regression_loss(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, CLASSES_MSE), "labels-and-loss")
    assert (
        '`loss="mse"` is a regression loss and the labels are class numbers shaped (600, 1)' in text
    )
    assert accuracy(kernel, "picker", "kinds", "argmax") < 0.8
    fix = fix_of(text, "picker.compile(")
    assert 'loss="sparse_categorical_crossentropy"' in fix
    fixed = CLASSES_MSE.replace(CLASSES_MSE.splitlines()[2], fix)
    assert told(report_of(kernel, fixed)) == []
    assert accuracy(kernel, "picker", "kinds", "argmax") > 0.9
    # Look-alikes: mse on one-hot rows; sparse labels with the sparse loss.
    one_hot = CLASSES_MSE.replace("kinds[:, None]", "keras.utils.to_categorical(kinds, 3)")
    assert told(report_of(kernel, one_hot)) == []
    assert told(report_of(kernel, fixed.replace("kinds[:, None]", "kinds"))) == []
    # binary_crossentropy over the softmax with one-hot rows: it trains, and Keras 3 makes
    # "accuracy" a categorical accuracy (not a binary one that would count every unit).
    binary = one_hot.replace('loss="mse"', 'loss="binary_crossentropy"')
    assert told(report_of(kernel, binary)) == []
    assert accuracy(kernel, "picker", "kinds", "argmax") > 0.9
    chosen = "type(picker._compile_metrics._flat_metrics[0].metrics[0]).__name__"
    assert value_of(kernel, chosen) == "CategoricalAccuracy"


# ------------------------------------------------------------- labels 1/2
GRADES = (
    "grades = np.where(flags > 0, 2, 1)\n"
    + model("judge", 'keras.layers.Dense(1, activation="sigmoid")')
    + (
        'judge.compile(optimizer=keras.optimizers.Adam(0.02), loss="binary_crossentropy", '
        'metrics=["accuracy"])\n'
        "judge.fit(points, grades, epochs=20, verbose=0)\n"
    )
)


def test_binary_crossentropy_given_labels_outside_zero_one(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, GRADES), "labels-and-loss")
    assert '`judge` is compiled with `loss="binary_crossentropy"`' in text
    assert "but `grades` run from 1 to 2" in text
    fix = fix_of(text, "grades = ")
    assert fix == "grades = (grades == 2).astype(np.float32)"
    # evaluate is read too.
    [again] = notes_in(
        report_of(kernel, "judge.evaluate(points, grades, verbose=0)"), "labels-and-loss"
    )
    assert "then evaluate again" in again
    # Labels in a tensor: read as well; the NumPy fix is not offered for it.
    tensor = "judge.evaluate(points, tf.constant(grades), verbose=0)"
    [text] = notes_in(report_of(kernel, tensor), "labels-and-loss")
    assert "but the labels given run from 1 to 2" in text
    assert "make them 0 and 1 (1 for 2)." in text
    fixed = GRADES.replace("judge.fit(", fix + "\njudge.fit(")
    assert told(report_of(kernel, fixed)) == []
    assert accuracy(kernel, "judge", "grades") > 0.9
    # Look-alike: labels already 0 and 1.
    assert (
        told(
            report_of(kernel, GRADES.replace("judge.fit(points, grades", "judge.fit(points, flags"))
        )
        == []
    )


# ----------------------------------------------------------- sorted split
SORTED = (
    ("order = np.argsort(kinds, kind='stable')\nrows, labels = points[order], kinds[order]\n")
    + model("sorter", 'keras.layers.Dense(3, activation="softmax")')
    + (
        "sorter.compile(optimizer=keras.optimizers.Adam(0.02), "
        'loss="sparse_categorical_crossentropy", metrics=["accuracy"])\n'
    )
)
SPLIT_FIT = "log = sorter.fit(rows, labels, validation_split=0.2, epochs=10, verbose=0)\n"


def test_validation_split_of_labels_sorted_by_class(kernel: KernelSession) -> None:
    [text] = notes_in(report_of(kernel, SORTED + SPLIT_FIT), "keras-validation-data")
    held = value_of(kernel, "int(len(labels) - int(len(labels) * 0.8))")
    assert text.startswith(
        f"`labels` come grouped by class (3 classes, each in one block), and "
        f"validation_split=0.2 makes fit keep the last {held} examples for validation"
    )
    assert "the validation part holds only class 2" in text
    fix = fix_of(text, "order = ")
    assert fix == (
        "order = np.random.permutation(len(labels)); rows, labels = rows[order], labels[order]"
    )
    assert told(report_of(kernel, SORTED + fix + "\n" + SPLIT_FIT)) == []
    assert value_of(kernel, "sorted(set(labels[-len(labels) // 5:].tolist()))") == [0, 1, 2]
    # Look-alikes: a shuffled split; validation_data given; a dataset (no split).
    assert (
        told(report_of(kernel, SORTED + SPLIT_FIT.replace("rows, labels", "points, kinds"))) == []
    )
    given = SPLIT_FIT.replace("validation_split=0.2", "validation_data=(points, kinds)")
    assert told(report_of(kernel, SORTED + given)) == []
    dataset = (
        "pairs = tf.data.Dataset.from_tensor_slices((rows, labels)).batch(32)\n"
        "sorter.fit(pairs, epochs=1, verbose=0)\n"
    )
    assert told(report_of(kernel, SORTED + dataset)) == []
    # A model whose loss is the learner's own function (not read for the other checks)
    # still has its split checked.
    own = SORTED.replace('loss="sparse_categorical_crossentropy"', "loss=own_loss").replace(
        "sorter.compile(",
        "def own_loss(y_true, y_pred):\n"
        "    return keras.losses.sparse_categorical_crossentropy(y_true, y_pred)\n"
        "sorter.compile(",
    )
    [text] = notes_in(report_of(kernel, own + SPLIT_FIT), "keras-validation-data")
    assert "the validation part holds only class 2" in text
