"""What fit/evaluate logged against what the learner asked (issue #25): Keras only warns
when a callback watches a key the logs never have, and when the data has no batches. The
note names the callback, the key and the keys the logs have (its fix runs and trains with
the callback working), or the data and, for timeseries windows, both lengths; the correct
look-alike gets no such note. Our own cells (``training/fit_logs.py``)."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = """pts = np.random.rand(32, 4).astype("float32")
marks = (pts.sum(axis=1) > 2).astype("float32")
judge = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
judge.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
"""


def notes_of(kernel: KernelSession, cell: str) -> list[str]:
    return note_texts(checked_report(run(kernel, cell)))


def about(notes: list[str], words: str) -> list[str]:
    return [note for note in notes if words in note]


def test_a_callback_watching_a_key_the_logs_never_had(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = """halt = keras.callbacks.EarlyStopping(monitor="val_loss", patience=1)
log = judge.fit(pts, marks, epochs=3, verbose=0, callbacks=[halt])"""
    notes = about(notes_of(kernel, cell), "a key fit's logs never had")
    assert len(notes) == 1
    note = notes[0]
    assert '`halt` (EarlyStopping) watched monitor="val_loss"' in note
    assert '(they have "accuracy", "loss")' in note and "never stops training" in note
    assert "`validation_split=0.2` for arrays" in note
    fix = note.rsplit("`", 2)[-2]
    assert fix == 'halt = keras.callbacks.EarlyStopping(monitor="loss", patience=1)'
    fixed = cell.replace(cell.splitlines()[0], fix)
    assert not about(notes_of(kernel, fixed), "a key fit's logs never had")
    # The other way out: validation data makes the key exist.
    with_validation = cell.replace("epochs=3,", "epochs=3, validation_split=0.25,")
    assert not about(notes_of(kernel, with_validation), "a key fit's logs never had")
    assert "val_loss" in value_of(kernel, "sorted(log.history)")


def test_a_checkpoint_saving_every_epoch_does_not_use_its_monitor(
    kernel: KernelSession, tmp_path: object
) -> None:
    run(kernel, SETUP)
    path = f"{tmp_path}/judge.keras"
    cell = (
        f"keep = keras.callbacks.ModelCheckpoint({path!r}, monitor='val_acc', mode='max')\n"
        "judge.fit(pts, marks, epochs=1, verbose=0, callbacks=[keep])"
    )
    assert not about(notes_of(kernel, cell), "a key fit's logs never had")
    best = cell.replace("mode='max'", "mode='max', save_best_only=True")
    notes = about(notes_of(kernel, best), "a key fit's logs never had")
    assert len(notes) == 1 and "never saves a best model" in notes[0]


def test_fit_and_evaluate_on_data_with_no_batches(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    cell = """none_left = tf.data.Dataset.from_tensor_slices((pts, marks)).batch(8).take(0)
judge.fit(none_left, epochs=2, verbose=0)
judge.evaluate(none_left, verbose=0)"""
    notes = about(notes_of(kernel, cell), "got no batch from")
    assert len(notes) == 1  # the same data once
    assert notes[0].startswith("fit got no batch from `none_left`, so it trained on nothing")
    assert "`take(0)`" in notes[0]
    full = cell.replace(".take(0)", ".take(2)")
    assert not about(notes_of(kernel, full), "got no batch from")
    # No epoch asked for: nothing ran, nothing to say.
    assert not about(notes_of(kernel, "judge.fit(pts, marks, epochs=0, verbose=0)"), "no batch")


def test_timeseries_windows_longer_than_the_series(kernel: KernelSession) -> None:
    cell = """readings = np.arange(12, dtype="float32")
windows = keras.utils.timeseries_dataset_from_array(readings, readings, 16)
forecaster = keras.Sequential([keras.Input((16,)), keras.layers.Dense(1)])
forecaster.compile(optimizer="adam", loss="mse")
forecaster.fit(windows, epochs=1, verbose=0)"""
    notes = about(notes_of(kernel, cell), "got no batch from")
    assert len(notes) == 1
    note = notes[0]
    assert "`windows` comes from `timeseries_dataset_from_array` with sequence_length=16" in note
    assert "`readings` has 12 steps" in note and "at most 12" in note
    # A series long enough for the windows: no note.
    longer = cell.replace("np.arange(12,", "np.arange(40,")
    assert not about(notes_of(kernel, longer), "got no batch from")
