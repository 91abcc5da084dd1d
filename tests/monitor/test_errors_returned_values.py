"""Plain Python errors on values Keras returned (issue #25): the traceback never enters
TensorFlow, yet the cause is what the Keras call returns (``errors/families_results.py``).
Each entry names the call, what it returns and the learner's names; its fix runs in the
kernel; the same kind of error on the learner's own lists and dicts gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

TRAINED = """pts = np.random.rand(48, 3).astype("float32")
marks = (pts.sum(axis=1) > 1.5).astype("float32")
judge = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(4, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
judge.compile(optimizer="adam", loss="binary_crossentropy", metrics=["binary_accuracy"])
record = judge.fit(pts, marks, epochs=2, verbose=0)
hidden = judge.layers[0]
"""


def test_a_history_key_the_metric_is_not_logged_under(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TRAINED)
    error = failing(kernel, 'curve = record.history["accuracy"]')
    text = error["explanation"]
    assert "`record.history` is the dict of values fit logged" in text
    assert 'its keys are "binary_accuracy", "loss"' in text
    assert "The nearest key to `'accuracy'` is `'binary_accuracy'`" in text
    fix = fix_of(text)
    assert fix == 'curve = record.history["binary_accuracy"]'
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "len(curve)") == 2
    # A name holding the very dict of the History is traced to it too.
    runs_cleanly(kernel, "logged = record.history")
    error = failing(kernel, 'acc = logged["acuracy"]')
    assert fix_of(error["explanation"]) == 'acc = logged["binary_accuracy"]'
    # val_ keys exist only with validation data: the fit that made the History gets it.
    error = failing(kernel, 'watch = record.history["val_loss"]')
    text = error["explanation"]
    assert "Keras logs `val_` values only when fit is given validation data" in text
    fix = fix_of(text)
    assert fix == "record = judge.fit(pts, marks, epochs=2, verbose=0, validation_split=0.2)"
    runs_cleanly(kernel, f'{fix}\nwatch = record.history["val_loss"]')


def test_a_callback_reading_val_loss_of_a_fit_without_validation(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, TRAINED)
    cell = """class Watcher(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        self.last = logs["val_loss"]
watcher = Watcher()
judge.fit(pts, marks, epochs=1, verbose=0, callbacks=[watcher])"""
    error = failing(kernel, cell)
    assert error["course"]["section"] == "callback-mode"
    text = error["explanation"]
    assert '`logs` is the dict of values Keras passed to the callback; its keys are "' in text
    assert "no `val_` key" in text
    fix = fix_of(text)
    assert fix == (
        "judge.fit(pts, marks, epochs=1, verbose=0, callbacks=[watcher], validation_split=0.2)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "isinstance(watcher.last, float)") is True


def test_weights_returned_as_a_list(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TRAINED)
    error = failing(kernel, "flipped = hidden.get_weights().T")
    text = error["explanation"]
    assert "`get_weights()` returns a list of NumPy arrays" in text
    assert "A list has no `.T`" in text and "`hidden` is a Keras Dense layer" in text
    fix = fix_of(text)
    assert fix == "flipped = hidden.get_weights()[0].T"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(flipped.shape)") == [4, 3]
    # A name assigned from get_weights in an earlier cell.
    runs_cleanly(kernel, "params = hidden.get_weights()")
    error = failing(kernel, "size = params.shape")
    text = error["explanation"]
    assert "(`params` was set by `params = hidden.get_weights()`)" in text
    fix = fix_of(text)
    assert fix == "size = params[0].shape"
    runs_cleanly(kernel, fix)


def test_predict_fit_and_evaluate_results(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TRAINED)
    error = failing(kernel, "scores = judge.predict(pts, verbose=0).numpy()")
    text = error["explanation"]
    assert "`predict()` returns a NumPy array" in text
    fix = fix_of(text)
    assert fix == "scores = judge.predict(pts, verbose=0)"
    runs_cleanly(kernel, fix)
    error = failing(kernel, 'losses = judge.fit(pts, marks, epochs=1, verbose=0)["loss"]')
    text = error["explanation"]
    assert "`fit()` returns a History object" in text
    fix = fix_of(text)
    assert fix == 'losses = judge.fit(pts, marks, epochs=1, verbose=0).history["loss"]'
    runs_cleanly(kernel, fix)
    error = failing(kernel, 'final = judge.evaluate(pts, marks, verbose=0)["loss"]')
    fix = fix_of(error["explanation"])
    assert fix == 'final = judge.evaluate(pts, marks, verbose=0, return_dict=True)["loss"]'
    runs_cleanly(kernel, fix)


def test_a_key_the_dict_of_evaluate_does_not_have(kernel: KernelSession) -> None:
    """``evaluate(..., return_dict=True)`` names its values as fit logs them, without
    ``val_``: a short older name or a ``val_`` key gets the key the dict has."""
    runs_cleanly(
        kernel,
        """grader = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(4)])
grader.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(
    from_logits=True), metrics=["accuracy"])
feats = np.random.rand(40, 5).astype("float32")
kinds = np.random.randint(0, 4, size=40)""",
    )
    cell = "scores = grader.evaluate(feats, kinds, verbose=0, return_dict=True)\n"
    cell += 'hit = scores["acc"]'
    text = failing(kernel, cell)["explanation"]
    assert "`scores` is the dict `evaluate(..., return_dict=True)` returned" in text
    assert 'its keys are "accuracy", "loss"' in text
    assert "Keras 3 returns `'accuracy'`" in text
    fix = fix_of(text)
    assert fix == 'hit = scores["accuracy"]'
    runs_cleanly(kernel, fix)
    assert 0.0 <= value_of(kernel, "hit") <= 1.0
    text = failing(kernel, "held_out = scores['val_loss']")["explanation"]
    assert "evaluate names its values without `val_`" in text
    fix = fix_of(text)
    assert fix == "held_out = scores['loss']"
    runs_cleanly(kernel, fix)
    # The learner's own dict with the same names, and the right key, get no entry.
    execution = kernel.execute('mine = {"loss": 0.5}\nmine["acc"]')
    assert execution.reply["status"] == "error"
    assert execution.report["error"] is None, execution.report["error"]
    runs_cleanly(kernel, 'hit = scores["accuracy"]')


def test_the_same_errors_on_the_learners_own_values_get_no_entry(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, TRAINED)
    for cell in (
        'table = {"a": 1}\ntable["accuracy"]',
        "rows = [[1, 2], [3, 4]]\nrows.T",
        "grid = np.ones((2, 2))\ngrid.numpy()",
        'logs = {"loss": 1.0}\nlogs["val_loss"]',
    ):
        execution = kernel.execute(cell)
        assert execution.reply["status"] == "error", cell
        assert execution.report["error"] is None, (cell, execution.report["error"])
    # The correct look-alikes run without an entry.
    runs_cleanly(kernel, 'curve = record.history["binary_accuracy"]')
    runs_cleanly(kernel, "kernel_t = hidden.get_weights()[0].T")
