"""A layer shared by two Keras models, its ``trainable`` flag flipped in a later cell than
their ``fit`` (issue #25, "no wrong fix"): the entry asks to compile again exactly the
models whose train step was traced with the other setting, all of them when several
were, and not a model whose step already has the new setting. Each printed fix is run:
after it, ``fit`` leaves a frozen layer's weights alone (and trains an unfrozen one).
A freeze with the compile in the same cell stays silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, changes_of, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

MODELS = """stem = keras.layers.Dense(5, activation="tanh", name="stem")
left_in = keras.Input((4,))
left_net = keras.Model(left_in, keras.layers.Dense(1, name="left_head")(stem(left_in)))
right_in = keras.Input((4,))
right_net = keras.Model(right_in, keras.layers.Dense(3, name="right_head")(stem(right_in)))
left_net.compile(optimizer="sgd", loss="mse")
right_net.compile(optimizer="sgd", loss="mae")
feats = np.random.default_rng(3).normal(size=(16, 4)).astype("float32")
"""
FIT_LEFT = "left_net.fit(feats, np.ones((16, 1)), epochs=2, verbose=0)\n"
FIT_RIGHT = "right_net.fit(feats, np.ones((16, 3)), epochs=2, verbose=0)\n"
COMPILE = {
    "left_net": 'left_net.compile(optimizer="sgd", loss="mse")',
    "right_net": 'right_net.compile(optimizer="sgd", loss="mae")',
}


def flag_entries(report: dict[str, Any]) -> list[str]:
    return [change["text"] for change in changes_of(report, "trainable_flag")]


def compiled_models(text: str) -> list[str]:
    return re.findall(r"`(\w+)\.compile\(\.\.\.\)`", text)


def stem_moves(kernel: KernelSession, fit: str) -> bool:
    cell = (
        f"before = stem.kernel.numpy().copy()\n{fit}"
        "print(not np.allclose(before, stem.kernel.numpy()))\n"
    )
    return run(kernel, cell).stdout.strip() == "True"


def test_both_models_fit_before_the_freeze_are_named(kernel: KernelSession) -> None:
    run(kernel, MODELS + FIT_LEFT + FIT_RIGHT)
    entries = flag_entries(checked_report(run(kernel, "stem.trainable = False")))
    assert len(entries) == 1, entries
    assert compiled_models(entries[0]) == ["left_net", "right_net"], entries[0]
    # The printed fix, each call with the model's own arguments: no fit trains `stem` then.
    report = checked_report(
        run(kernel, "\n".join(COMPILE[name] for name in ["left_net", "right_net"]))
    )
    assert flag_entries(report) == []
    assert not stem_moves(kernel, FIT_LEFT)
    assert not stem_moves(kernel, FIT_RIGHT)


def test_only_the_model_traced_with_the_other_setting_is_named(kernel: KernelSession) -> None:
    """``left_net`` was fit while ``stem`` trained, ``right_net`` after it was frozen:
    unfreezing it makes only ``right_net``'s step stale."""
    run(kernel, MODELS + FIT_LEFT)
    first = flag_entries(checked_report(run(kernel, "stem.trainable = False")))
    assert [compiled_models(text) for text in first] == [["left_net"]], first
    run(kernel, COMPILE["right_net"] + "\n" + FIT_RIGHT)
    entries = flag_entries(checked_report(run(kernel, "stem.trainable = True")))
    assert len(entries) == 1, entries
    assert compiled_models(entries[0]) == ["right_net"], entries[0]
    assert "left_net" not in entries[0]
    # Without the fix right_net's old step keeps `stem` frozen; with it, fit trains it.
    assert not stem_moves(kernel, FIT_RIGHT)
    run(kernel, COMPILE["right_net"])
    assert stem_moves(kernel, FIT_RIGHT)
    # left_net's step was traced with `stem` trainable: it trains it without a compile.
    assert stem_moves(kernel, FIT_LEFT)


def test_freezing_with_compile_in_the_same_cell_is_silent(kernel: KernelSession) -> None:
    run(kernel, MODELS + FIT_LEFT + FIT_RIGHT)
    cell = "stem.trainable = False\n" + "\n".join(COMPILE.values())
    assert flag_entries(checked_report(run(kernel, cell))) == []
    assert not stem_moves(kernel, FIT_LEFT)
