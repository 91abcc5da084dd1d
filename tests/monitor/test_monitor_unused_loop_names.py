"""A loop that never reads its own name while its body reads a global of a similar name
(issue #25, silent bugs): ``for temp in temperatures: ... temperature ...`` runs every pass
with the same value. Told from the cell's code and the names' values (same type); the
printed fix (the loop's name in the body's statement) is run in the kernel and the sweep's
results differ, with no note. Look-alikes stay silent: ``for _ in range(n)``, a loop name
unused with no similar global, a loop bound read in the body."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "training-loop"

SWEEP = """logits = tf.constant([[2.0, 1.0, 0.1]])
temperature = 1.0
temperatures = [0.5, 1.0, 2.0, 4.0]
peaks = []
for temp in temperatures:
    peaks.append(float(tf.reduce_max(tf.nn.softmax(logits / temperature))))
"""
WRONG_LINE = "    peaks.append(float(tf.reduce_max(tf.nn.softmax(logits / temperature))))"


def loop_notes(report: dict[str, Any]) -> list[str]:
    return [
        n["text"]
        for n in report["notes"]
        if (n.get("course") or {}).get("section") == SECTION and "never reads" in n["text"]
    ]


def codes(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_a_sweep_reading_the_global(kernel: KernelSession) -> None:
    notes = loop_notes(checked_report(run(kernel, SWEEP)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`for temp in temperatures:` (line 5 of this cell) never reads `temp`; its body "
        "reads `temperature` (1) instead"
    ), notes[0]
    assert shown(kernel, "len(set(peaks))") == "1"
    fix = codes(notes[0])[-1]
    assert fix == WRONG_LINE.strip().replace("temperature", "temp")
    assert loop_notes(checked_report(run(kernel, SWEEP.replace(WRONG_LINE, "    " + fix)))) == []
    assert shown(kernel, "len(set(peaks))") == "4"


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cells = [
        "counter = tf.Variable(0)\nfor _ in range(3):\n    counter.assign_add(1)\n",
        "steps_done = []\nfor step in range(3):\n    steps_done.append(len(steps_done))\n",
        "epochs = 3\nfor epoch in range(epochs):\n    print('of', epochs)\n",
        # A counter of repeats reading a close name: repeating is what it is for.
        "lr = 0.1\nfor lr_step in range(3):\n    print(lr)\n",
        SWEEP.replace(WRONG_LINE, WRONG_LINE.replace("temperature", "temp")),
        # A similar global of another type: a batch loop reading the batch size.
        "batch_size = 4\nfor batch in tf.data.Dataset.range(8).batch(4):\n    print(batch_size)\n",
    ]
    for cell in cells:
        assert loop_notes(checked_report(run(kernel, cell))) == [], cell
