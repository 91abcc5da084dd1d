"""A function documented or named as measuring held-out data that reads the training
arrays (issue #25, ``symptoms/split_names.py``, ``_function_notes``).

The note is told where the function is defined and rewrites each body line that reads a
training name with its held-out counterpart; the fixed function, run, measures the test
rows. Look-alikes stay silent: a function on the training data named as such, one that
reads the held-out arrays, one whose docstring names both splits."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """keras.utils.set_random_seed(5)
draw = np.random.default_rng(5)
feat_train = draw.normal(size=(60, 3)).astype("float32")
lab_train = (feat_train[:, 0] > 0).astype("int32")
feat_test = draw.normal(size=(20, 3)).astype("float32")
lab_test = (feat_test[:, 0] > 0).astype("int32")
clf = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, activation="softmax")])
"""

SCORER = '''def unseen_error_rate(net):
    """Error rate on the held out rows."""
    guesses = net.predict(feat_train, verbose=0).argmax(axis=1)
    return float(np.mean(guesses != lab_train))'''


def split_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "the training data" in n["text"]]


def test_a_held_out_scorer_reading_the_training_arrays(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = split_notes(SCORER, kernel)
    assert text.startswith(
        "`unseen_error_rate` (defined in this cell): its docstring says test data, but it "
        "measures the model on `feat_train`, `lab_train`, the training data"
    ), text
    assert "`guesses = net.predict(feat_test, verbose=0).argmax(axis=1)` (line 3)" in text
    assert text.endswith("and `return float(np.mean(guesses != lab_test))` (line 4).")
    fixed = SCORER.replace("feat_train", "feat_test").replace("lab_train", "lab_test")
    assert split_notes(fixed, kernel) == []
    expected = "float(np.mean(clf.predict(feat_test, verbose=0).argmax(axis=1) != lab_test))"
    assert value_of(kernel, f"unseen_error_rate(clf) == {expected}") is True


def test_training_scorers_and_held_out_readers_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        'def fit_error(net):\n    """Error on the training rows."""\n'
        "    return float(np.mean(net.predict(feat_train, verbose=0).argmax(1) != lab_train))",
        'def test_error(net):\n    """Error on held-out rows."""\n'
        "    return float(np.mean(net.predict(feat_test, verbose=0).argmax(1) != lab_test))",
        'def gap(net):\n    """Held-out error minus training error."""\n'
        "    return float(np.mean(net.predict(feat_train, verbose=0).argmax(1) != lab_train))",
    ):
        assert split_notes(cell, kernel) == [], cell
