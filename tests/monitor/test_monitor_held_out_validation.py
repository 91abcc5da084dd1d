"""A fit validated on rows of its own training input, when the notebook holds a held-out
labelled pair (issue #25): the fix validates on that pair, not on ``validation_split=0.2``
(the last fifth of the training input, here pseudo-labelled rows). The fix is run: no note,
and the validation figure is measured on the held-out rows. With two held-out pairs to
choose from, the fix stays the split."""

from __future__ import annotations

import re

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "keras-validation-data"

DATA = """gen = np.random.default_rng(41)
feats_lab = gen.normal(size=(40, 4)).astype("float32")
cls_lab = (feats_lab[:, 0] > 0).astype("int64")
feats_unl = gen.normal(size=(400, 4)).astype("float32")
cls_unl = (feats_unl[:, 1] > 0).astype("int64")  # pseudo-labels from a weak guess
feats_test = gen.normal(size=(200, 4)).astype("float32")
cls_test = (feats_test[:, 0] > 0).astype("int64")
feats_all = np.concatenate([feats_lab, feats_unl])
cls_all = np.concatenate([cls_lab, cls_unl])
pupil = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
pupil.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
"""
FIT = (
    "log = pupil.fit(feats_all, cls_all, validation_data=(feats_lab, cls_lab), "
    "epochs=2, verbose=0)\n"
)


def validation_notes(report: dict) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "validates on" in n["text"]
    ]


def test_the_held_out_pair_is_the_fix(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = validation_notes(checked_report(run(kernel, FIT)))
    assert "validates on `feats_lab`: all 40 of its rows are rows of the training input" in text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == (
        "pupil.fit(feats_all, cls_all, validation_data=(feats_test, cls_test), epochs=2, verbose=0)"
    )
    assert "validation_split" not in text
    assert validation_notes(checked_report(run(kernel, f"log = {fix}"))) == []
    shown = run(kernel, "print(len(log.history['val_accuracy']))").stdout.strip()
    assert shown == "2"


def test_two_held_out_pairs_leave_the_split(kernel: KernelSession) -> None:
    run(kernel, DATA)
    run(kernel, "feats_val = feats_test[:100].copy() + 1.0\ncls_val = cls_test[:100].copy()\n")
    [text] = validation_notes(checked_report(run(kernel, FIT)))
    assert "validation_split=0.2" in text
