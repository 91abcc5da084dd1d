"""A function named as a copy of a model that returns ``clone_model`` without the weights
(issue #25, ``training/clone_copies.py``).

``clone_model`` builds new, random weights; a helper named ``duplicate_...``/``..._snapshot``
that returns it hands out random models. The note is told where the function is defined;
the fix, applied, makes the copy predict as the source does. Look-alikes stay silent: the
weights copied, a function named for a fresh model, a copy helper whose comment says the
weights are new on purpose."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, fix_in, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = """keras.utils.set_random_seed(2)
pixels = np.random.default_rng(2).normal(size=(16, 7)).astype("float32")
teacher = keras.Sequential([keras.Input((7,)), keras.layers.Dense(3)])
teacher.compile(optimizer="adam", loss="mse")
teacher.fit(pixels, pixels[:, :3], epochs=2, verbose=0)
"""

HELPER = """def duplicate_teacher(net):
    twin = keras.models.clone_model(net)
    twin.compile(optimizer="adam", loss="mse")
    return twin"""


def clone_notes(code: str, kernel: KernelSession) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "clone_model" in n["text"]]


def test_a_copy_helper_that_returns_random_weights(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = clone_notes(HELPER, kernel)
    assert text.startswith(
        "`duplicate_teacher` (defined in this cell) returns `keras.models.clone_model(net)` "
        "as `twin`: `clone_model` builds the same layers with new, randomly initialised weights"
    ), text
    fix = fix_in(text)
    assert fix == "twin.set_weights(net.get_weights())"
    assert "Fix: before line 4 of this cell (`return twin`), add" in text
    fixed = HELPER.replace("    return twin", f"    {fix}\n    return twin")
    assert clone_notes(fixed, kernel) == []
    run(kernel, "student = duplicate_teacher(teacher)")
    same = (
        "bool(np.allclose(student.predict(pixels, verbose=0), teacher.predict(pixels, verbose=0)))"
    )
    assert value_of(kernel, same) is True
    # Returned directly from the call.
    [text] = clone_notes("def snapshot_of(m):\n    return keras.models.clone_model(m)", kernel)
    assert "`copied = keras.models.clone_model(m)`" in text


def test_fresh_models_and_copied_weights_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    for cell in (
        "def fresh_like(net):\n    return keras.models.clone_model(net)",
        "def copy_arch(net):\n    # same layers, re-initialised on purpose\n"
        "    return keras.models.clone_model(net)",
        "def copy_net(net):\n    c = keras.models.clone_model(net)\n"
        "    c.set_weights(net.get_weights())\n    return c",
        "def copy_layers(net):\n    c = keras.models.clone_model(net)\n"
        "    for mine, theirs in zip(c.weights, net.weights):\n        mine.assign(theirs)\n"
        "    return c",
    ):
        assert clone_notes(cell, kernel) == [], cell
