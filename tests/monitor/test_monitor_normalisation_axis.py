"""Data normalised over the wrong axis (issue #25, silent bugs): rows are examples, yet
``feats / tf.reduce_sum(feats, axis=0)`` makes each column sum to 1, and
``(feats - feats.mean(axis=1, keepdims=True)) / feats.std(axis=1, keepdims=True)``
standardises each example over its own features. Found after the cell from shapes: the
value is (N, F) and the cell gives it to a model as N examples (a model call, ``fit``).
The model may be fed in a later cell (the result's name still holding it). The note
names the expression, the shape and that call, and gives the other axis. Each
fix is run in the kernel: rows sum to 1 / each feature has mean 0, and no note.
Look-alikes stay silent: the right axes, and a column sum not given to a model."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "class-axis"

DATA = """rng = np.random.default_rng(5)
counts = rng.uniform(1, 9, size=(30, 4)).astype("float32")
net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
net.compile(optimizer="sgd", loss="mse")
"""


def axis_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == SECTION and "normalises" in note["text"]
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def shown(kernel: KernelSession, expression: str) -> str:
    return run(kernel, f"print({expression})").stdout.strip()


def test_rows_divided_by_the_column_sums(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "shares = counts / tf.reduce_sum(counts, axis=0)\nout = net(shares)\n"
    notes = axis_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`counts / tf.reduce_sum(counts, axis=0)` (line 1 of this cell) normalises `counts`, "
        "a (30, 4) value whose rows are examples (`net(shares)` on line 2 of this cell gives "
        "it to the model as 30 examples of 4 features)"
    )
    assert "each column (feature) now sums to 1, not each row" in text
    fix = last_code(text)
    assert fix == "counts / tf.reduce_sum(counts, axis=1, keepdims=True)"
    fixed = cell.replace("counts / tf.reduce_sum(counts, axis=0)", fix)
    assert axis_notes(checked_report(run(kernel, fixed))) == []
    assert shown(kernel, "np.allclose(tf.reduce_sum(shares, axis=1).numpy(), 1.0)") == "True"


def test_features_standardised_within_each_example(kernel: KernelSession) -> None:
    run(kernel, DATA)
    wrong = "(counts - counts.mean(axis=1, keepdims=True)) / counts.std(axis=1, keepdims=True)"
    cell = f"z = {wrong}\nh = net.fit(z, counts[:, 0], epochs=1, verbose=0)\n"
    notes = axis_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "it subtracts the mean over axis 1" in notes[0]
    assert "`net.fit(z, counts[:, 0], epochs=1, verbose=0)` on line 2 of this cell" in notes[0]
    fix = last_code(notes[0])
    assert fix == wrong.replace("axis=1", "axis=0")
    assert axis_notes(checked_report(run(kernel, cell.replace(wrong, fix)))) == []
    assert shown(kernel, "np.allclose(z.mean(axis=0), 0.0, atol=1e-5)") == "True"


def test_normalised_in_one_cell_fed_to_fit_in_a_later_one(kernel: KernelSession) -> None:
    run(kernel, DATA)
    first = "portions = counts / counts.sum(axis=0)\n"
    assert axis_notes(checked_report(run(kernel, first))) == []  # no model seen yet
    run(kernel, "unrelated = 1 + 1\n")
    second = "h = net.fit(portions, counts[:, :1], epochs=1, verbose=0)\n"
    notes = axis_notes(checked_report(run(kernel, second)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        "`counts / counts.sum(axis=0)` (line 1 of an earlier cell) normalises `counts`, a "
        "(30, 4) value whose rows are examples (`net.fit(portions, counts[:, :1], epochs=1, "
        "verbose=0)` on line 1 of this cell gives it to the model as 30 examples of 4 "
        "features)"
    )
    fix = last_code(notes[0])
    assert fix == "counts / counts.sum(axis=1, keepdims=True)"
    assert axis_notes(checked_report(run(kernel, f"portions = {fix}\n" + second))) == []
    assert shown(kernel, "np.allclose(portions.sum(axis=1), 1.0)") == "True"
    # Told once: the same fit again says nothing more.
    assert axis_notes(checked_report(run(kernel, second))) == []


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    for cell in (
        "fractions = counts / np.sum(counts, axis=0)\n",  # not given to a model
        "scaled = counts / counts.max(axis=0)\nout = net(scaled)\n",  # feature scaling
        "zz = (counts - counts.mean(axis=0)) / counts.std(axis=0)\nout = net(zz)\n",
    ):
        assert axis_notes(checked_report(run(kernel, cell))) == [], cell
