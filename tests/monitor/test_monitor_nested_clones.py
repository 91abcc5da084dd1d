"""A clone_model copy used with its random weights inside another model (issue #25, dev3:
``check = Sequential([Input, base_copy, head])``): the evaluate of the model holding it is
told, naming the clone, the model holding it and the fix, which, applied, gives the
source's results and no entry."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

SETUP = """rng = np.random.default_rng(3)
grid = rng.normal(size=(64, 5)).astype("float32")
side = (grid[:, 1] > 0).astype("int32")
body = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu")])
top = keras.layers.Dense(2, activation="softmax")
full = keras.Sequential([keras.Input((5,)), body, top])
full.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
full.fit(grid, side, epochs=5, verbose=0)
"""

CELL = """body_copy = keras.models.clone_model(body)
probe = keras.Sequential([keras.Input((5,)), body_copy, top])
probe.compile(loss="sparse_categorical_crossentropy")
probe_loss = probe.evaluate(grid, side, verbose=0)
"""


def clone_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "clone-model"
    ]


def test_clone_inside_another_model(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = clone_notes(checked_report(run(kernel, CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith("`body_copy` was made by clone_model"), text
    assert "before this evaluate of `probe`, which holds it," in text
    fix = "body_copy.set_weights(body.get_weights())"
    assert f"`{fix}`" in text
    trained_loss = value_of(kernel, "full.evaluate(grid, side, verbose=0)")
    assert abs(value_of(kernel, "probe_loss") - trained_loss) > 1e-3
    fixed = CELL.replace("probe = ", f"{fix}\nprobe = ")
    assert clone_notes(checked_report(run(kernel, fixed))) == []
    assert abs(value_of(kernel, "probe_loss") - trained_loss) < 1e-5


def test_clone_of_one_model_of_a_list(kernel: KernelSession) -> None:
    """The source is an item of a list (an ensemble's member): the fix names it so."""
    run(kernel, SETUP)
    members_cell = """members = []
for width in (6, 4):
    member = keras.Sequential([keras.Input((5,)), keras.layers.Dense(width, activation="relu"),
                               keras.layers.Dense(2, activation="softmax")])
    member.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    member.fit(grid, side, epochs=5, verbose=0)
    members.append(member)
del member
"""
    run(kernel, members_cell)
    cell = """spare = keras.models.clone_model(members[0])
spare.compile(loss="sparse_categorical_crossentropy")
spare_loss = spare.evaluate(grid, side, verbose=0)
"""
    [text] = clone_notes(checked_report(run(kernel, cell)))
    fix = "spare.set_weights(members[0].get_weights())"
    assert f"`{fix}`" in text, text
    trained_loss = value_of(kernel, "members[0].evaluate(grid, side, verbose=0)")
    fixed = cell.replace("spare.compile", f"{fix}\nspare.compile")
    assert clone_notes(checked_report(run(kernel, fixed))) == []
    assert abs(value_of(kernel, "spare_loss") - trained_loss) < 1e-5
