"""Pseudo-labels kept where the model is least sure (issue #25, silent bugs): ``conf <
t`` selects the uncertain rows, and taking their predicted labels as labels trains the next
model on the likeliest mistakes. Told from the cell's comparison, the probability array
the confidences are the row maxima of, and the predicted labels (its argmax) the selection
indexes; the printed fix (``>=``) is run and the kept labels are more often right, with no
note. Look-alikes stay silent: uncertain inputs picked for review, the confident rows kept."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "labels-and-loss"

SETUP = """rng = np.random.default_rng(11)
true_class = rng.integers(0, 4, 400)
sure = rng.uniform(0.3, 1.0, 400)
right = rng.uniform(size=400) < sure
guess = np.where(right, true_class, (true_class + 1) % 4)
teacher_probs = np.full((400, 4), 0.0)
teacher_probs[np.arange(400), guess] = 0.25 + 0.75 * sure
others = (1.0 - teacher_probs.sum(axis=1)) / 3.0
teacher_probs = teacher_probs + (teacher_probs == 0.0) * others[:, None]
certainty = teacher_probs.max(axis=1)
guessed = teacher_probs.argmax(axis=1)
cutoff = 0.8
pool_x = rng.normal(size=(400, 6)).astype("float32")
"""

NAMED = """keep = certainty <= cutoff
new_targets = guessed[keep]
kept_right = float((new_targets == true_class[keep]).mean())
"""

INLINE = """extra_y = tf.argmax(teacher_probs, axis=1)
extra_labels = extra_y[0.8 > certainty].numpy()
"""


def selection_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "least sure" in n["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_a_named_selection_of_uncertain_pseudo_labels(kernel: KernelSession) -> None:
    assert selection_notes(checked_report(run(kernel, SETUP))) == []
    notes = selection_notes(checked_report(run(kernel, NAMED)))
    assert len(notes) == 1, notes
    assert notes[0].startswith("`keep = certainty <= cutoff` (line 1 of this cell)")
    assert "`certainty` under `cutoff`: 0.8; " in notes[0]
    assert "`guessed[...]`" in notes[0]
    before = float(shown(kernel, "kept_right"))
    fix = codes(notes[0])[-1]
    assert fix == "keep = certainty > cutoff"
    assert (
        selection_notes(
            checked_report(run(kernel, NAMED.replace("keep = certainty <= cutoff", fix)))
        )
        == []
    )
    assert float(shown(kernel, "kept_right")) > before + 0.2


def test_an_inline_selection_against_a_tensor_of_labels(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = selection_notes(checked_report(run(kernel, INLINE)))
    assert len(notes) == 1, notes
    assert "`extra_y[...]`" in notes[0]
    fix = codes(notes[0])[-1]
    assert fix == "certainty >= 0.8"
    fixed = INLINE.replace("0.8 > certainty", fix)
    fixed += f"share = float((extra_labels == true_class[{fix}]).mean())\n"
    assert selection_notes(checked_report(run(kernel, fixed))) == []
    assert float(shown(kernel, "share")) > 0.8


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    report = checked_report(
        run(
            kernel,
            """to_review = pool_x[certainty < cutoff]
confident = certainty >= cutoff
kept_labels = guessed[confident]
""",
        )
    )
    assert selection_notes(report) == []
