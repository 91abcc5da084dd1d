"""What compile was given and what fit needs from it (issue #25): a metric not in a list,
an optimizer class, a loss called when compile was written, no loss, a callback's monitor
key the logs will not have. Each entry names the learner's model, call and values, links
its section, and prints a fix that runs in the kernel; the correct look-alike gets no
error entry. Our own cells (``errors/families_compile.py``)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

DATA = """pts = np.random.rand(32, 4).astype("float32")
marks = (pts.sum(axis=1) > 2).astype("float32")
"""
BUILD = 'judge = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])'


def test_metrics_given_one_metric_not_in_a_list(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA + BUILD)
    for metric in ('"accuracy"', "keras.metrics.BinaryAccuracy()"):
        cell = f'judge.compile(optimizer="adam", loss="binary_crossentropy", metrics={metric})'
        error = failing(kernel, cell)
        assert error["course"]["section"] == "keras-model-api"
        text = error["explanation"]
        assert f"gave it one, `{metric}`, alone" in text
        fix = fix_of(text)
        assert fix == cell.replace(f"metrics={metric}", f"metrics=[{metric}]")
        runs_cleanly(kernel, f"{fix}\njudge.fit(pts, marks, epochs=1, verbose=0)")
    assert value_of(kernel, "sorted(judge.history.history)") == ["binary_accuracy", "loss"]


def test_an_optimizer_class_not_an_optimizer(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA + BUILD)
    cell = 'judge.compile(optimizer=keras.optimizers.RMSprop, loss="binary_crossentropy")'
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`keras.optimizers.RMSprop` is the class RMSprop itself" in text
    fix = fix_of(text)
    assert fix == cell.replace("RMSprop,", "RMSprop(),")
    runs_cleanly(kernel, f"{fix}\njudge.fit(pts, marks, epochs=1, verbose=0)")
    # Keras 3 makes loss and metric classes itself: no entry.
    runs_cleanly(
        kernel,
        "judge.compile(optimizer=keras.optimizers.RMSprop(), loss=keras.losses.BinaryCrossentropy,"
        " metrics=[keras.metrics.BinaryAccuracy])\njudge.fit(pts, marks, epochs=1, verbose=0)",
    )


def test_a_loss_called_when_compile_was_written(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA + BUILD)
    # Keras 3 resolves the loss at the first fit: compile itself succeeds.
    compile_cell = (
        'judge.compile(optimizer="adam", loss=keras.losses.binary_crossentropy(marks, marks))'
    )
    runs_cleanly(kernel, compile_cell)
    train = "judge.fit(pts, marks, epochs=1, verbose=0)"
    error = failing(kernel, train)
    assert error["course"]["section"] == "keras-model-api"
    text = error["explanation"]
    assert "gave it `keras.losses.binary_crossentropy(marks, marks)`" in text
    fix = fix_of(text)
    assert fix == 'judge.compile(optimizer="adam", loss=keras.losses.binary_crossentropy)'
    runs_cleanly(kernel, f"{fix}\n{train}")


def test_a_loss_object_called_without_arguments(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA + BUILD)
    cell = """bce = keras.losses.BinaryCrossentropy(label_smoothing=0.1)
judge.compile(optimizer="adam", loss=bce())"""
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "gave it `bce()`" in text and "without labels or predictions" in text
    fix = fix_of(text)
    assert fix == 'judge.compile(optimizer="adam", loss=bce)'
    runs_cleanly(kernel, f"{fix}\njudge.fit(pts, marks, epochs=1, verbose=0)")
    # Made and called on one line: the object made is what compile needs.
    cell = 'judge.compile(optimizer="adam", loss=keras.losses.Hinge()())'
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == 'judge.compile(optimizer="adam", loss=keras.losses.Hinge())'
    runs_cleanly(kernel, f"{fix}\njudge.fit(pts, marks, epochs=1, verbose=0)")
    # A metric object made by calling its class is what compile needs: no entry.
    runs_cleanly(
        kernel,
        'judge.compile(optimizer="adam", loss=bce, metrics=[keras.metrics.AUC()])\n'
        "judge.fit(pts, marks, epochs=1, verbose=0)",
    )


def test_evaluate_a_model_compiled_without_a_loss(kernel: KernelSession) -> None:
    build = """scorer = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
scorer.compile(optimizer="sgd", metrics=["mae"])"""
    runs_cleanly(kernel, DATA + build)
    evaluate = "scorer.evaluate(pts, marks, verbose=0)"
    error = failing(kernel, evaluate)
    assert error["course"]["section"] == "labels-and-loss"
    text = error["explanation"]
    assert "`scorer` was compiled without one" in text
    assert '`scorer.compile(optimizer="sgd", metrics=["mae"])`' in text
    fix = fix_of(text)
    assert fix == 'scorer.compile(optimizer="sgd", metrics=["mae"], loss="mse")'
    runs_cleanly(kernel, f"{fix}\n{evaluate}")
    # Integer class numbers: the loss for them.
    runs_cleanly(
        kernel,
        """kinds = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
kinds.compile(optimizer="adam")
labels = np.random.randint(0, 3, 32)""",
    )
    error = failing(kernel, "kinds.fit(pts, labels, verbose=0)")
    fix = fix_of(error["explanation"])
    assert fix == 'kinds.compile(optimizer="adam", loss="sparse_categorical_crossentropy")'
    runs_cleanly(kernel, f"{fix}\nkinds.fit(pts, labels, verbose=0)")


def test_a_callback_watching_a_key_the_logs_do_not_have(kernel: KernelSession) -> None:
    setup = (
        DATA
        + BUILD
        + """
judge.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
halt = keras.callbacks.EarlyStopping(monitor="val_acc", patience=3)"""
    )
    runs_cleanly(kernel, setup)
    train = (
        "log = judge.fit(pts, marks, validation_split=0.25, epochs=2, verbose=0, callbacks=[halt])"
    )
    error = failing(kernel, train)
    assert error["course"]["section"] == "callback-mode"
    text = error["explanation"]
    assert 'watches monitor="val_acc"' in text
    assert '"loss", "accuracy", "val_loss", "val_accuracy"' in text
    fix = fix_of(text)
    assert fix == 'halt = keras.callbacks.EarlyStopping(monitor="val_accuracy", patience=3)'
    runs_cleanly(kernel, f"{fix}\n{train}")
    assert "val_accuracy" in value_of(kernel, "sorted(log.history)")
    # A callback written in the fit call itself: that statement, fixed.
    inline = (
        "judge.fit(pts, marks, validation_data=(pts, marks), epochs=2, verbose=0, "
        "callbacks=[keras.callbacks.ReduceLROnPlateau(monitor='acc')])"
    )
    error = failing(kernel, inline)
    fix = fix_of(error["explanation"])
    assert fix == inline.replace("'acc'", "'accuracy'")
    runs_cleanly(kernel, fix)
    # A key Keras can read a direction from, with the mode given: no entry.
    runs_cleanly(
        kernel,
        "judge.fit(pts, marks, epochs=1, verbose=0, callbacks=[keras.callbacks.EarlyStopping("
        'monitor="accuracy", mode="max")])',
    )


def test_a_loss_whose_def_takes_only_the_predictions(kernel: KernelSession) -> None:
    runs_cleanly(kernel, DATA + BUILD)
    define = """def mean_score(y_pred):
    return keras.ops.mean(keras.ops.square(y_pred))
"""
    compile_call = 'judge.compile(optimizer="adam", loss=mean_score)'
    runs_cleanly(kernel, define + compile_call)
    train = "judge.fit(pts, marks, epochs=1, verbose=0)"
    error = failing(kernel, train)
    assert error["course"]["section"] == "labels-and-loss"
    text = error["explanation"]
    assert "Keras calls `mean_score` with two arguments" in text
    assert "takes 1: (y_pred)" in text
    fix = fix_of(text)
    assert fix == "def mean_score(y_true, y_pred):"
    fixed = define.replace("def mean_score(y_pred):", fix)
    runs_cleanly(kernel, f"{fixed}{compile_call}\n{train}")
    # A Loss subclass whose call takes only the predictions: its call, with self.
    subclass = """class Spread(keras.losses.Loss):
    def call(self, y_pred):
        return keras.ops.var(y_pred)
"""
    runs_cleanly(kernel, subclass + 'judge.compile(optimizer="adam", loss=Spread())')
    error = failing(kernel, train)
    fix = fix_of(error["explanation"])
    assert fix == "def call(self, y_true, y_pred):"
    runs_cleanly(
        kernel,
        subclass.replace("def call(self, y_pred):", fix)
        + f'judge.compile(optimizer="adam", loss=Spread())\n{train}',
    )


def test_fit_given_inputs_without_labels(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel, DATA + BUILD + '\njudge.compile(optimizer="adam", loss="binary_crossentropy")'
    )
    cell = """inputs_only = tf.data.Dataset.from_tensor_slices(pts).batch(8)
judge.fit(inputs_only, epochs=1, verbose=0)"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "labels-and-loss"
    text = error["explanation"]
    assert "`inputs_only` yields inputs only" in text and "there are no labels" in text
    # The same data with its labels: no entry (compiled again: the failed first fit left
    # Keras's training function half-built, which another explainer tells).
    runs_cleanly(
        kernel,
        'judge.compile(optimizer="adam", loss="binary_crossentropy")\n'
        + cell.replace("from_tensor_slices(pts)", "from_tensor_slices((pts, marks))"),
    )
    error = failing(kernel, "judge.evaluate(pts, verbose=0)")
    assert "got `pts` (a (32, 4) float32 NumPy array) and no `y`" in error["explanation"]
    runs_cleanly(kernel, "judge.evaluate(pts, marks, verbose=0)")


def test_predict_on_windows_longer_than_the_series(kernel: KernelSession) -> None:
    cell = """levels = np.linspace(0.0, 1.0, 9).astype("float32")
windows = keras.utils.timeseries_dataset_from_array(levels, None, sequence_length=12)
reader = keras.Sequential([keras.Input((12,)), keras.layers.Dense(1)])
guesses = reader.predict(windows, verbose=0)"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "tf-data"
    text = error["explanation"]
    assert "`reader.predict` got no batch from `windows`" in text
    assert "sequence_length=12, and `levels` has 9 steps" in text and "at most 9" in text
    # A series long enough for one window: no entry.
    runs_cleanly(kernel, cell.replace("np.linspace(0.0, 1.0, 9)", "np.linspace(0.0, 1.0, 12)"))
