"""A list of scores a Keras call returned, used as one number (issue #25).

``evaluate``, ``test_on_batch`` and ``train_on_batch`` return the loss alone for a model
compiled without metrics, and ``[loss, metric, ...]`` with them; formatting that list with
``:.3f``, multiplying it or comparing it makes Python raise a TypeError that names only a
list (``errors/families_results.py``). The entry names the call, what it returned (the
loss then the compiled metrics), each index, and the fix the line's words ask for; it runs
in the kernel. The same errors on the learner's own lists, and a model compiled without
metrics, get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

REGRESSOR = """rooms = np.random.rand(64, 3).astype("float32")
price = rooms @ np.array([2.0, -1.0, 0.5], dtype="float32")
appraiser = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
appraiser.compile(optimizer="sgd", loss="mse", metrics=["mae"])
appraiser.fit(rooms, price, epochs=1, verbose=0)
"""


def test_a_score_list_formatted_as_a_number(kernel: KernelSession) -> None:
    runs_cleanly(kernel, REGRESSOR)
    error = failing(
        kernel,
        'scores = appraiser.evaluate(rooms, price, verbose=0)\nprint(f"test mae {scores:.2f}")',
    )
    text = error["explanation"]
    assert (
        "`scores` holds what `appraiser.evaluate(rooms, price, verbose=0)` returned: a list "
        "of 2 numbers, the loss then `mae`" in text
    ), text
    assert "`scores[0]` is the loss; `scores[1]` is `mae`" in text
    assert "`loss, mae = appraiser.evaluate(rooms, price, verbose=0)`" in text
    assert "return_dict=True" in text
    fix = fix_of(text)
    assert fix == 'print(f"test mae {scores[1]:.2f}")'
    runs_cleanly(kernel, fix)
    # The call on the line itself, its result in arithmetic: the loss is named.
    error = failing(kernel, "half_loss = appraiser.test_on_batch(rooms[:8], price[:8]) / 2")
    text = error["explanation"]
    assert "`appraiser.test_on_batch(rooms[:8], price[:8])` returns: a list of 2" in text
    fix = fix_of(text)
    assert fix == "half_loss = appraiser.test_on_batch(rooms[:8], price[:8])[0] / 2"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "isinstance(half_loss, float)") is True


def test_several_metrics_and_a_comparison_without_a_named_score(kernel: KernelSession) -> None:
    cell = """votes = np.random.rand(40, 6).astype("float32")
side = (votes[:, 0] > 0.5).astype("float32")
ranker = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(1, activation="sigmoid")])
ranker.compile(optimizer="adam", loss="binary_crossentropy",
               metrics=[keras.metrics.AUC(name="auc"), "binary_accuracy"])
outcome = ranker.train_on_batch(votes, side)
"""
    runs_cleanly(kernel, cell)
    error = failing(kernel, "good = outcome > 0.8")
    text = error["explanation"]
    assert "a list of 3 numbers, the loss then `auc`, `binary_accuracy`" in text, text
    assert "`outcome[2]` is `binary_accuracy`" in text
    # No word of the line names a score: no single fix is printed.
    assert "Fix:" not in text
    runs_cleanly(kernel, "good = outcome[1] > 0.8")


def test_lists_of_the_learners_own_and_a_loss_alone_get_no_entry(kernel: KernelSession) -> None:
    cell = """marks = np.random.rand(32, 2).astype("float32")
goal = marks.sum(axis=1)
plain = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)])
plain.compile(optimizer="sgd", loss="mse")
only_loss = plain.evaluate(marks, goal, verbose=0)
print(f"loss {only_loss:.3f}")"""
    runs_cleanly(kernel, cell)
    for wrong in ('mine = [0.5, 0.9]\nprint(f"{mine:.2f}")', "mine = [0.5, 0.9]\nmine * 2.5"):
        execution = kernel.execute(wrong)
        assert execution.reply["status"] == "error", wrong
        assert execution.report["error"] is None, (wrong, execution.report["error"])
