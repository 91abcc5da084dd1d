"""An AUC computed from predictions already cut at a threshold (issue #25,
``symptoms/ranking_scores.py``): every example is 0 or 1, the curve has one operating
point and the number is not the model's ranking quality. Told for a Keras AUC's
``update_state`` given a name assigned from a cut, and for a PR AUC called on a round of
the probabilities; each fix, applied, gives the AUC of the scores with no note. An AUC of
the scores and a precision of the cut predictions stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

DATA = """keras.utils.set_random_seed(7)
rng = np.random.default_rng(7)
truth = (rng.random(200) < 0.3).astype("float32")
probs = np.clip(truth * 0.35 + rng.random(200) * 0.65, 0, 1).astype("float32")
"""


def auc_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "AUC" in n["text"]]


def test_roc_auc_given_a_name_cut_at_a_threshold(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = (
        "hard = tf.cast(probs > 0.5, tf.float32)\n"
        "roc = keras.metrics.AUC()\n"
        "roc.update_state(truth, hard)\n"
        "cut_auc = float(roc.result())"
    )
    [text] = auc_notes(cell, kernel)
    assert text.startswith(
        "`roc.update_state(truth, hard)` (line 3 of this cell) gives the AUC predictions "
        "already cut at a threshold (`hard`)"
    )
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "roc.update_state(truth, probs)"
    fixed = "roc = keras.metrics.AUC()\n" + fix + "\nscore_auc = float(roc.result())"
    assert auc_notes(fixed, kernel) == []
    assert value_of(kernel, "score_auc > cut_auc") is True


def test_pr_auc_called_on_rounded_probabilities(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "pr = keras.metrics.AUC(curve='PR')\npr_value = float(pr(truth, tf.round(probs)))"
    [text] = auc_notes(cell, kernel)
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "pr(truth, probs)"
    assert auc_notes(f"pr = keras.metrics.AUC(curve='PR')\nv = float({fix})", kernel) == []
    # Look-alikes: an AUC of the scores; a precision of the cut predictions (a threshold
    # metric takes 0/1 predictions by design).
    fine = "ok = keras.metrics.AUC()\nok.update_state(truth, probs)"
    assert auc_notes(fine, kernel) == []
    prec = "pm = keras.metrics.Precision()\npm.update_state(truth, tf.round(probs))"
    assert auc_notes(prec, kernel) == []
