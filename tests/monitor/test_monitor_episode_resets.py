"""An episode loop that never resets its environment (issue #25,
``symptoms/episode_resets.py``): the reset runs once before the loop while each pass
sets its done flag and steps until it is set. Told at the top level and inside a
``def``; the fix (the reset moved to the loop's first line) makes every episode start
from the beginning and the note goes. Resets inside the loop, on ``done`` only, or by a
helper given the environment stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

COUNTER = (
    "class CountDown:\n"
    "    def __init__(self, start=4):\n"
    "        self.start = start\n"
    "    def reset(self):\n"
    "        self.left = self.start\n"
    "        return self.left\n"
    "    def step(self, move):\n"
    "        self.left -= 1\n"
    "        return self.left, 1.0, self.left <= 0\n"
    "game = CountDown()"
)


def reset_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "the environment is never reset" in n["text"]]


def moved_in(cell: str, reset: str) -> str:
    """The cell with the line ``reset`` moved to the first line of the ``for`` body."""
    lines = cell.split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip() == reset)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    del lines[at]
    loop = next(i for i, line in enumerate(lines) if line.lstrip().startswith("for "))
    lines.insert(loop + 1, indent + "    " + reset)
    return "\n".join(lines)


def test_a_reset_before_the_episode_loop(kernel: KernelSession) -> None:
    run(kernel, COUNTER)
    cell = (
        "lengths = []\n"
        "obs = game.reset()\n"
        "for ep in range(3):\n"
        "    finished, n = False, 0\n"
        "    while not finished:\n"
        "        obs, gain, finished = game.step(0)\n"
        "        n += 1\n"
        "    lengths.append(n)"
    )
    [text] = reset_notes(kernel, cell)
    assert text.startswith(
        "`obs = game.reset()` (line 2 of this cell) runs once, before the loop "
        "`for ep in range(3):` (line 3)."
    ), text
    assert value_of(kernel, "lengths") == [4, 1, 1]
    assert text.endswith("move `obs = game.reset()` to the first line of the loop's body.")
    fixed = moved_in(cell, "obs = game.reset()")
    assert reset_notes(kernel, fixed) == []
    assert value_of(kernel, "lengths") == [4, 4, 4]


def test_inside_a_function_and_look_alikes(kernel: KernelSession) -> None:
    run(kernel, COUNTER)
    cell = (
        "def play(world, episodes):\n"
        "    totals = []\n"
        "    world.reset()\n"
        "    for _ in range(episodes):\n"
        "        over, total = False, 0.0\n"
        "        while not over:\n"
        "            _, gain, over = world.step(1)\n"
        "            total += gain\n"
        "        totals.append(total)\n"
        "    return totals\n"
        "scores = play(game, 2)"
    )
    [text] = reset_notes(kernel, cell)
    assert "`world.reset()` (line 3 of this cell)" in text
    # Look-alikes: a reset in the loop, a reset when done, a helper given the env.
    silent = (
        "def fresh(world, episodes):\n"
        "    out = []\n"
        "    world.reset()\n"
        "    for _ in range(episodes):\n"
        "        world.reset()\n"
        "        over = False\n"
        "        while not over:\n"
        "            _, gain, over = world.step(1)\n"
        "        out.append(gain)\n"
        "    return out\n"
        "def restart(world):\n"
        "    return world.reset()\n"
        "def helper_reset(world, episodes):\n"
        "    world.reset()\n"
        "    for _ in range(episodes):\n"
        "        restart(world)\n"
        "        over = False\n"
        "        while not over:\n"
        "            _, gain, over = world.step(1)\n"
        "    return gain\n"
        "a, b = fresh(game, 2), helper_reset(game, 2)"
    )
    assert reset_notes(kernel, silent) == []
