"""Discounted returns computed walking back from the last step and appended in that
order, never put back in time order (issue #25, ``symptoms/reverse_recurrence.py``):
entry 0 is the last step's return. Told inside a ``def`` and at the top level; the
printed fix, put in place of the ``append``, gives the returns in time order and the
note is gone. Lists reversed after the loop (``[::-1]``, ``.reverse()``), built with
``insert(0, ...)`` or written by index stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


def backward_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if "never put back in time order" in n["text"]]


def spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_returns_appended_backwards_in_a_function(kernel: KernelSession) -> None:
    cell = (
        "def reward_to_go(rs, lam=0.5):\n"
        "    acc, togo = 0.0, []\n"
        "    for step_reward in rs[::-1]:\n"
        "        acc = step_reward + lam * acc\n"
        "        togo.append(acc)\n"
        "    return togo\n"
        "out = reward_to_go([2.0, 0.0, 4.0])"
    )
    [text] = backward_notes(kernel, cell)
    assert text.startswith(
        "The loop `for step_reward in rs[::-1]:` (line 3 of this cell, in `reward_to_go`)"
    ), text
    assert value_of(kernel, "out") == [4.0, 2.0, 3.0]  # last step first
    fixed, replaced = spans(text)[-2:]
    assert (fixed, replaced) == ("togo.insert(0, acc)", "togo.append(acc)")
    assert backward_notes(kernel, cell.replace(replaced, fixed)) == []
    assert value_of(kernel, "out") == [3.0, 2.0, 4.0]


def test_returns_appended_backwards_at_the_top_level(kernel: KernelSession) -> None:
    run(kernel, "episode = np.array([1.0, 1.0, 0.0, 2.0])")
    cell = (
        "discount = 0.5\n"
        "G, disc_returns = 0.0, []\n"
        "for t in range(len(episode) - 1, -1, -1):\n"
        "    G = episode[t] + discount * G\n"
        "    disc_returns.append(G)\n"
        "targets = np.array(disc_returns, dtype='float32')"
    )
    [text] = backward_notes(kernel, cell)
    fixed, replaced = spans(text)[-2:]
    assert backward_notes(kernel, cell.replace(replaced, fixed)) == []
    assert value_of(kernel, "targets.tolist()") == [1.75, 1.5, 1.0, 2.0]


def test_lists_put_back_in_order_stay_silent(kernel: KernelSession) -> None:
    cell = (
        "gamma = 0.9\n"
        "rews = [0.0, 1.0, 0.0]\n"
        "def returns_of(rs):\n"
        "    g, rets = 0.0, []\n"
        "    for r in reversed(rs):\n"
        "        g = r + gamma * g\n"
        "        rets.append(g)\n"
        "    rets.reverse()\n"
        "    return rets\n"
        "def sliced_returns(rs):\n"
        "    g, rets = 0.0, []\n"
        "    for r in reversed(rs):\n"
        "        g = r + gamma * g\n"
        "        rets.append(g)\n"
        "    return np.array(rets[::-1])\n"
        "running, returns = 0.0, [0.0] * 3\n"
        "for t in reversed(range(3)):\n"
        "    running = rews[t] + gamma * running\n"
        "    returns[t] = running\n"
        "a, b = returns_of(rews), sliced_returns(rews)"
    )
    assert backward_notes(kernel, cell) == []
    assert value_of(kernel, "[round(v, 2) for v in a]") == [0.9, 1.0, 0.0]
