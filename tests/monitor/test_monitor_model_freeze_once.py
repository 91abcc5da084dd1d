"""Freezing a whole fitted model is one cause (issue #25, one cause, one entry):
``model.trainable = False`` flips the flag of every layer under it, and the report gives
one entry, on the model, not one per layer. The entry's fix (compile again before the next
fit) is run and the frozen weights then stay as they are. A layer frozen on its own is still
told on that layer."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, changes_of, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

BUILD = """gen = np.random.default_rng(5)
pts = gen.normal(size=(64, 6)).astype("float32")
kinds = (pts[:, 0] > 0).astype("int64")
ranker = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
                           keras.layers.Dense(2)])
ranker.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
ranker.fit(pts, kinds, epochs=1, verbose=0)
"""


def test_a_frozen_model_is_one_entry(kernel: KernelSession) -> None:
    run(kernel, BUILD)
    report = checked_report(run(kernel, "ranker.trainable = False\n"))
    flags = changes_of(report, "trainable_flag")
    assert len(flags) == 1, [f["text"] for f in flags]
    assert flags[0]["text"].startswith("`ranker.trainable` changed from True to False")
    assert "Call `ranker.compile(...)` again, with the same arguments" in flags[0]["text"]
    assert (flags[0]["course"] or {}).get("section") == "trainable-weights"
    # The fix: compile again, then fit: the frozen weights stay as they are.
    fixed = (
        "before = [w.copy() for w in ranker.get_weights()]\n"
        "ranker.compile(optimizer='sgd', "
        "loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))\n"
        "ranker.fit(pts, kinds, epochs=1, verbose=0)\n"
        "print(all(np.array_equal(a, b) for a, b in zip(before, ranker.get_weights())))\n"
    )
    execution = run(kernel, fixed)
    assert execution.stdout.strip() == "True"
    assert changes_of(checked_report(execution), "trainable_flag") == []


def test_one_layer_frozen_is_told_on_that_layer(kernel: KernelSession) -> None:
    run(kernel, BUILD)
    report = checked_report(run(kernel, "ranker.layers[0].trainable = False\n"))
    flags = changes_of(report, "trainable_flag")
    assert len(flags) == 1, [f["text"] for f in flags]
    assert flags[0]["text"].startswith("`ranker.get_layer('dense")
