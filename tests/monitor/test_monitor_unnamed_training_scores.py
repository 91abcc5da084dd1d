"""A model scored on the very arrays it was fitted on, under names that do not say
training, while the notebook keeps a held-out pair apart (issue #25,
``symptoms/trained_test_rows.py``, ``_unnamed_training``): the note names the model, the
arrays, the fit and the unused held-out pair; its fix (the cell's lines with the held-out
names), applied, scores the held-out rows and is silent. Look-alikes stay silent: a
training figure said as such, a cell that also scores the held-out pair, arrays the model
was not fitted on."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")

_DATA = (
    "gen = np.random.default_rng(5)\n"
    "pool = gen.normal(size=(260, 6)).astype('float32')\n"
    "kinds = (pool[:, 0] + 0.3 * gen.normal(size=260) > 0).astype('int64')\n"
    "feats, tags = pool[:60], kinds[:60]\n"
    "feats_test, tags_test = pool[60:], kinds[60:]\n"
    "clf = keras.Sequential([keras.Input((6,)), keras.layers.Dense(64, activation='relu'),\n"
    "                        keras.layers.Dense(2)])\n"
    "clf.compile('adam', keras.losses.SparseCategoricalCrossentropy(from_logits=True),\n"
    "            metrics=['accuracy'])\n"
    "clf.fit(feats, tags, epochs=200, verbose=0)\n"
)

_SCORED = (
    "guesses = np.argmax(clf.predict(feats, verbose=0), axis=1)\n"
    "score = np.mean(guesses == tags)\n"
    "print('classifier accuracy:', score)\n"
)


def _score_notes(kernel: KernelSession, cell: str) -> list[str]:
    texts = note_texts(checked_report(run(kernel, cell)))
    return [t for t in texts if "the figure is a training score" in t]


def test_a_score_of_the_fitted_arrays_is_named_and_fixed(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    told = _score_notes(kernel, _SCORED)
    assert len(told) == 1
    text = told[0]
    assert "Line 1 scores `clf` on `feats` and `tags`" in text
    assert "`clf.fit(feats, tags, epochs=200, verbose=0)` (an earlier cell)" in text
    assert "the held-out `feats_test`/`tags_test`" in text
    line_1 = "guesses = np.argmax(clf.predict(feats_test, verbose=0), axis=1)"
    line_2 = "score = np.mean(guesses == tags_test)"
    assert f"Fix: line 1: `{line_1}`; line 2: `{line_2}`." in text
    seen = value_of(kernel, "float(score)")
    fixed = f"{line_1}\n{line_2}\nprint('classifier accuracy:', score)\n"
    assert _score_notes(kernel, fixed) == []
    unseen = value_of(kernel, "float(score)")
    assert value_of(kernel, "len(guesses)") == 200
    # The training figure is the higher one: 60 rows and 200 epochs, remembered.
    assert seen > unseen


def test_evaluate_on_the_fitted_arrays_is_named(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    told = _score_notes(kernel, "loss_now, acc_now = clf.evaluate(feats, tags, verbose=0)\n")
    assert len(told) == 1
    fixed = "loss_now, acc_now = clf.evaluate(feats_test, tags_test, verbose=0)"
    assert f"Fix: line 1: `{fixed}`." in told[0]
    assert _score_notes(kernel, fixed + "\n") == []


def test_look_alikes_are_quiet(kernel: KernelSession) -> None:
    run(kernel, _DATA)
    said = _SCORED.replace("classifier accuracy", "training accuracy")
    assert _score_notes(kernel, said) == []
    both = _SCORED + "print(np.mean(np.argmax(clf.predict(feats_test), 1) == tags_test))\n"
    assert _score_notes(kernel, both) == []
    others = "extra = pool[:60].copy()\nprint(np.mean(np.argmax(clf.predict(extra), 1) == tags))\n"
    assert _score_notes(kernel, others) == []


def test_a_fit_in_a_cell_that_raised_afterwards_is_known(kernel: KernelSession) -> None:
    run(kernel, _DATA.replace("clf.fit(feats, tags, epochs=200, verbose=0)\n", ""))
    raised = "log = clf.fit(feats, tags, epochs=3, verbose=0)\nprint(log.history['acc'][-1])\n"
    run(kernel, raised, ok=False)
    told = _score_notes(kernel, _SCORED)
    assert len(told) == 1
    assert "`clf.fit(feats, tags, epochs=3, verbose=0)` (an earlier cell)" in told[0]
    # A fit that never ran (the cell raised before it) is not remembered.
    run(kernel, _DATA.replace("clf.fit(feats, tags, epochs=200, verbose=0)\n", ""))
    before = "print(missing_name)\nclf.fit(feats, tags, epochs=3, verbose=0)\n"
    run(kernel, before, ok=False)
    assert _score_notes(kernel, _SCORED) == []
