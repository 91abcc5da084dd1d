"""``trainable = False`` set on a model's layer that holds no weights (issue #25, a freeze
that freezes nothing): ``layers[0]`` of a functional model is its InputLayer. The entry
names the statement, the layer picked and the layer holding the weights by the learner's
name; the fix applied keeps the base's weights unchanged through fit and gets no entry.
Freezing the base itself stays silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)

SETUP = """trunk = keras.Sequential([keras.Input((6,)), keras.layers.Dense(5, activation="relu")])
pixels = np.random.default_rng(2).normal(size=(48, 6)).astype("float32")
tags = (pixels[:, 0] > 0).astype("int32")
"""

CELL = """entry = keras.Input((6,))
head = keras.layers.Dense(2, activation="softmax")(trunk(entry))
tuned = keras.Model(entry, head)
tuned.layers[0].trainable = False
tuned.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
before = trunk.layers[0].kernel.numpy().copy()
tuned.fit(pixels, tags, epochs=2, verbose=0)
moved = not np.allclose(before, trunk.layers[0].kernel.numpy())
"""


def freeze_notes(report: dict[str, Any]) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == "trainable-weights"
        and "holds no weights" in note["text"]
    ]


def test_input_layer_frozen_instead_of_the_base(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    notes = freeze_notes(checked_report(run(kernel, CELL)))
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`tuned.layers[0].trainable = False` (line 4 of this cell) sets `trainable` on "
        "`tuned.layers[0]` (`InputLayer`), which holds no weights: nothing is frozen"
    ), text
    assert "(`trunk`, `tuned.layers[1]`, holds 2 trainable weights)" in text
    fix = "trunk.trainable = False"
    assert f"Freeze the layer itself, before compile: `{fix}`." in text
    assert value_of(kernel, "moved") is True
    fixed = CELL.replace("tuned.layers[0].trainable = False", fix)
    assert freeze_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "moved") is False


def test_freezing_the_base_by_index_stays_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    silent = CELL.replace("tuned.layers[0].trainable", "tuned.layers[1].trainable")
    assert freeze_notes(checked_report(run(kernel, silent))) == []
    assert value_of(kernel, "moved") is False


COUNTED_LAYER = """class CountedDense(keras.layers.Dense):
    reads = 0

    @property
    def weights(self):
        CountedDense.reads += 1
        return super().weights

    @property
    def trainable_weights(self):
        CountedDense.reads += 1
        return super().trainable_weights


counted_trunk = keras.Sequential([keras.Input((6,)), CountedDense(5)])
"""

COUNTED_CELL = """entry = keras.Input((6,))
counted = keras.Model(entry, keras.layers.Dense(2)(counted_trunk(entry)))
CountedDense.reads = 0
counted.layers[0].trainable = False
reads_in_cell = CountedDense.reads
"""


def test_weights_counted_without_the_learners_properties(kernel: KernelSession) -> None:
    """The weights are counted from what Keras stores: a sublayer of the learner's class
    that overrides ``weights`` and ``trainable_weights`` is never asked (before, Keras's
    own ``weights`` of the enclosing Sequential called the override)."""
    run(kernel, COUNTED_LAYER)
    notes = freeze_notes(checked_report(run(kernel, COUNTED_CELL)))
    assert len(notes) == 1, notes
    assert "(`counted_trunk`, `counted.layers[1]`, holds 2 trainable weights)" in notes[0]
    assert value_of(kernel, "[reads_in_cell, CountedDense.reads]") == [0, 0]
