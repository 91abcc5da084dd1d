"""Integer draws whose upper bound is one above the lower (issue #25,
``symptoms/exclusive_bounds.py``): NumPy's ``randint``, a Generator's ``integers`` and
TensorFlow's integer ``uniform`` exclude their upper bound, so the draw always returns
the lower one. Told inside a function and at the top level; each printed fix, put in
the cell, draws both numbers and the note is gone. Python's ``random.randint(0, 1)``
(inclusive), ``endpoint=True``, a float uniform and wider bounds stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


def bound_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "always returns" in n["text"]]


def last_span(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_a_coin_flip_in_a_function_that_never_flips(kernel: KernelSession) -> None:
    cell = (
        "def flip_images(batch):\n"
        "    out = []\n"
        "    for img in batch:\n"
        "        if np.random.randint(0, 1) == 1:\n"
        "            img = img[:, ::-1]\n"
        "        out.append(img)\n"
        "    return np.stack(out)\n"
        "pics = np.arange(2 * 3 * 4).reshape(2, 3, 4)\n"
        "np.random.seed(4)\n"
        "flipped = [bool((flip_images(pics) != pics).any()) for _ in range(20)]"
    )
    [text] = bound_notes(kernel, cell)
    assert text.startswith(
        "`np.random.randint(0, 1)` (line 4 of this cell, in `flip_images`) always returns 0"
    ), text
    assert value_of(kernel, "any(flipped)") is False
    fixed = last_span(text)
    assert fixed == "np.random.randint(0, 2)"
    assert bound_notes(kernel, cell.replace("np.random.randint(0, 1)", fixed)) == []
    assert value_of(kernel, "any(flipped)") is True


def test_generator_and_tensorflow_draws_one_apart(kernel: KernelSession) -> None:
    run(kernel, "gen = np.random.default_rng(11)\nlevel = 3")
    cell = "picks = gen.integers(level, level + 1, size=50)"
    [text] = bound_notes(kernel, cell)
    assert "always returns `level`" in text
    fixed = last_span(text)
    assert fixed == "gen.integers(level, level + 2, size=50)"
    assert bound_notes(kernel, f"picks = {fixed}") == []
    assert value_of(kernel, "sorted(set(picks.tolist()))") == [3, 4]
    cell = "tokens = tf.random.uniform((40,), maxval=1, dtype=tf.int32)"
    [text] = bound_notes(kernel, cell)
    assert "always returns 0" in text
    fixed = last_span(text)
    assert fixed == "tf.random.uniform((40,), maxval=2, dtype=tf.int32)"
    assert bound_notes(kernel, f"tokens = {fixed}") == []
    assert value_of(kernel, "sorted(set(tokens.numpy().tolist()))") == [0, 1]


def test_inclusive_and_wider_draws_stay_silent(kernel: KernelSession) -> None:
    cell = (
        "import random\n"
        "coin = random.randint(0, 1)\n"
        "die = np.random.randint(1, 7)\n"
        "both = np.random.default_rng(2).integers(0, 1, endpoint=True, size=8)\n"
        "noise = tf.random.uniform((3,), 0, 1)\n"
        "idx = np.random.randint(0, 10, size=4)"
    )
    assert bound_notes(kernel, cell) == []
