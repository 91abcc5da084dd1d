"""A reshuffling dataset read twice in one cell, once by predict and once for the labels
(``symptoms/reshuffled_passes.py``, issue #25 part 2): the predictions and the labels
come in different orders, and an accuracy computed from them is near chance. The note
names the dataset and both passes; its one-pass fix, run as printed, gives the accuracy
``evaluate`` gives, and the fixed cell gets no note. Look-alikes stay silent: the same
cell over an unshuffled dataset, over a shuffle with reshuffle_each_iteration=False, and
a shuffled training set only predicted on."""

from __future__ import annotations

import re

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    after_load=f"{IMPORTS}\n"
    "import warnings\n"
    "warnings.simplefilter('ignore')\n"
    "keras.utils.set_random_seed(7)\n"
    "feats = np.random.normal(size=(400, 4)).astype('float32')\n"
    "labels = (feats[:, 0] - feats[:, 1] > 0).astype('float32')\n"
    "clf = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation='sigmoid')])\n"
    "clf.compile(optimizer='adam', loss='binary_crossentropy', metrics=['accuracy'])\n"
    "clf.layers[0].set_weights([np.array([[3.0], [-3.0], [0.0], [0.0]], 'float32'), "
    "np.zeros(1, 'float32')])\n"
)

CELL = """test_ds = tf.data.Dataset.from_tensor_slices((feats, labels)).shuffle(400).batch(32)
preds = clf.predict(test_ds, verbose=0)[:, 0]
truth = np.concatenate([y for x, y in test_ds])
hit_rate = float(np.mean((preds > 0.5) == truth))
"""
EVALUATED = "float(clf.evaluate(test_ds, verbose=0, return_dict=True)['accuracy'])"


def order_notes(report: dict) -> list[str]:
    return [n["text"] for n in report["notes"] if "reshuffles on every pass" in n["text"]]


def test_predictions_and_labels_in_two_passes(kernel: KernelSession) -> None:
    [text] = order_notes(checked_report(run(kernel, CELL)))
    assert text.startswith("`test_ds` reshuffles on every pass"), text
    assert "`clf.predict(test_ds, verbose=0)` (line 2)" in text
    assert "`[y for x, y in test_ds]` (line 3)" in text
    evaluated = value_of(kernel, EVALUATED)
    assert evaluated > 0.95 and value_of(kernel, "hit_rate") < 0.75
    fix = re.findall(r"`([^`]+)`", text.split("in one pass:", 1)[1])[0]
    assert fix == (
        "pairs = [(clf.predict_on_batch(x), y) for x, y in test_ds]; "
        "preds = np.concatenate([p for p, _ in pairs]); "
        "truth = np.concatenate([y for _, y in pairs])"
    )
    lines = CELL.splitlines()
    fixed = "\n".join([lines[0], fix, "preds = preds[:, 0]", lines[3]]) + "\n"
    assert order_notes(checked_report(run(kernel, fixed))) == []
    assert abs(value_of(kernel, "hit_rate") - evaluated) < 1e-6


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    plain = CELL.replace(".shuffle(400)", "")
    assert order_notes(checked_report(run(kernel, plain))) == []
    assert value_of(kernel, "hit_rate") > 0.95
    fixed_order = CELL.replace(".shuffle(400)", ".shuffle(400, reshuffle_each_iteration=False)")
    assert order_notes(checked_report(run(kernel, fixed_order))) == []
    assert value_of(kernel, "hit_rate") > 0.95
    train_only = CELL.replace("truth = np.concatenate([y for x, y in test_ds])", "truth = labels")
    train_only = train_only.replace("hit_rate = float(np.mean((preds > 0.5) == truth))", "")
    assert order_notes(checked_report(run(kernel, train_only))) == []


def test_labels_collected_through_map(kernel: KernelSession) -> None:
    """``list(ds.map(lambda x, y: y))`` is a second pass too."""
    cell = CELL.replace(
        "truth = np.concatenate([y for x, y in test_ds])",
        "truth = np.concatenate(list(test_ds.map(lambda x, y: y)))",
    )
    [text] = order_notes(checked_report(run(kernel, cell)))
    assert "`list(test_ds.map(lambda x, y: y))` (line 3)" in text, text
    assert value_of(kernel, "hit_rate") < 0.75


def test_a_loop_that_keeps_no_labels_stays_silent(kernel: KernelSession) -> None:
    """A second pass that only looks at the inputs, or counts batches, pairs nothing."""
    cell = CELL.replace(
        "truth = np.concatenate([y for x, y in test_ds])",
        "widths = [int(x.shape[0]) for x, y in test_ds]",
    ).replace("hit_rate = float(np.mean((preds > 0.5) == truth))", "")
    assert order_notes(checked_report(run(kernel, cell))) == []
    looped = CELL.replace(
        "truth = np.concatenate([y for x, y in test_ds])",
        "kept = []\nfor x, y in test_ds:\n    kept.append(y)\ntruth = np.concatenate(kept)",
    )
    [text] = order_notes(checked_report(run(kernel, looped)))
    # No statement to print for a loop: the one-pass fix is told in words.
    assert "Predict and collect the labels in one pass over the dataset, or" in text
