"""Class scores given to Keras's plain Accuracy metric (issue #25,
``errors/families_metric_kind.py``): the metric counts equal elements, so integer labels
against (N, C) scores meet shapes that cannot broadcast; the entry names the metric's kind
and its fix, the metric made as SparseCategoricalAccuracy, runs and scores the
predictions. Plain Accuracy given predicted labels is quiet."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SCORES = """rng = np.random.default_rng(2)
votes = rng.random((50, 4)).astype("float32")
answers = np.argmax(votes, axis=1).astype("int64")
answers[:10] = (answers[:10] + 1) % 4
"""


def test_integer_labels_against_scores_take_the_sparse_accuracy(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SCORES)
    made = "hit_rate = keras.metrics.Accuracy()"
    cell = f"{made}\nhit_rate.update_state(answers, votes)\nscore = float(hit_rate.result())"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "labels-and-loss"
    assert (
        "`hit_rate` was made by `hit_rate = keras.metrics.Accuracy()` (line 1 of this cell): "
        "`hit_rate` is Keras's plain `Accuracy`" in text
    )
    assert "`votes` holds 4 class scores per example" in text
    fix = fix_of(text)
    assert fix == "hit_rate = keras.metrics.SparseCategoricalAccuracy()"
    runs_cleanly(kernel, cell.replace(made, fix))
    assert value_of(kernel, "score") == pytest.approx(0.8)


def test_other_label_shapes_are_not_claimed(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SCORES)
    # Labels of another length than the scores: not this family's reading.
    text = failing_text(kernel, "matcher = keras.metrics.Accuracy()\nmatcher(answers[:20], votes)")
    assert "plain `Accuracy`" not in text


def test_accuracy_of_predicted_labels_is_quiet(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SCORES)
    runs_cleanly(
        kernel,
        "plain = keras.metrics.Accuracy()\nplain.update_state(answers, np.argmax(votes, axis=1))",
    )
    assert value_of(kernel, "float(plain.result())") == pytest.approx(0.8)


def failing_text(kernel: KernelSession, cell: str) -> str:
    from tests.harness import checked_report, run

    execution = run(kernel, cell, ok=False)
    if execution.reply["status"] != "error":
        return ""
    error = checked_report(execution)["error"]
    return error["explanation"] if error else ""
