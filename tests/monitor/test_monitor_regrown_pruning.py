"""Weights pruned to zero before ``fit`` that ``fit`` moved away from zero
(``training/regrown_pruning.py``): the note counts the zeros before and after, names the
statement that pruned them, and prints the fit call with a callback that applies the
masks again after every batch; with it the pruned weights stay zero. A fit that keeps its
pruned weights at zero stays quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, note_texts, run, run_quiet, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

SETUP = """gen = np.random.default_rng(4)
rows = gen.normal(size=(500, 10)).astype("float32")
labels = (rows[:, 1] - rows[:, 7] > 0).astype("int32")
keras.utils.set_random_seed(9)
clf = keras.Sequential([keras.Input((10,)), keras.layers.Dense(24, activation="relu"),
                        keras.layers.Dense(2)])
clf.compile(optimizer=keras.optimizers.SGD(0.05),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
keep = {}
for dense in clf.layers:
    cut = np.quantile(np.abs(dense.kernel.numpy()), 0.6)
    keep[dense.name] = (np.abs(dense.kernel.numpy()) > cut).astype("float32")
"""

PRUNE_THEN_FIT = """for dense in clf.layers:
    dense.kernel.assign(dense.kernel * keep[dense.name])
log = clf.fit(rows, labels, epochs=2, batch_size=50, verbose=0)
"""


def test_pruned_weights_that_fit_filled_in_are_named_with_a_callback(
    kernel: KernelSession,
) -> None:
    run(kernel, SETUP)
    report = run_quiet(kernel, PRUNE_THEN_FIT)
    notes = [t for t in note_texts(report) if "were exactly zero before `fit`" in t]
    assert len(notes) == 1, note_texts(report)
    text = notes[0]
    assert text.startswith("of the 288 values of 2 of `clf`'s weights", text.index(" ") + 1)
    assert (
        "(pruned by line 2 of this cell: `dense.kernel.assign(dense.kernel * keep[dense.name])`)"
        in text
    )
    fix = text.split("Fix: `", 1)[1].rsplit("`", 1)[0]
    assert fix == (
        "log = clf.fit(rows, labels, epochs=2, batch_size=50, verbose=0, "
        "callbacks=[keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: "
        "[dense.kernel.assign(dense.kernel * keep[dense.name]) for dense in clf.layers])])"
    )
    run(kernel, SETUP)
    fixed = run_quiet(kernel, PRUNE_THEN_FIT.replace(PRUNE_THEN_FIT.splitlines()[2], fix))
    assert not [t for t in note_texts(fixed) if "were exactly zero before `fit`" in t]
    # Every weight the masks cut is still zero, and training moved the others.
    assert value_of(
        kernel,
        "all(bool(np.all(d.kernel.numpy()[keep[d.name] == 0] == 0)) for d in clf.layers)",
    )
    assert value_of(kernel, "len(log.history['loss'])") == 2


def test_a_fit_that_keeps_its_pruned_weights_zero_is_quiet(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    report = run_quiet(
        kernel,
        """class HoldZeros(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        for dense in clf.layers:
            dense.kernel.assign(dense.kernel * keep[dense.name])

for dense in clf.layers:
    dense.kernel.assign(dense.kernel * keep[dense.name])
clf.fit(rows, labels, epochs=2, batch_size=50, verbose=0, callbacks=[HoldZeros()])
""",
    )
    assert not [t for t in note_texts(report) if "exactly zero" in t], note_texts(report)
