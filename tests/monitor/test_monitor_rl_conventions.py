"""Two reinforcement-learning conventions written the wrong way round (issue #25, silent
bugs): a bootstrapped target multiplied by the done flag itself
(``training/bootstrap_masks.py``) and an epsilon-greedy choice exploring when the draw is
above epsilon (``training/epsilon_greedy.py``). Each is told in the cell that defines it,
with the learner's names; the printed fix is run and behaves (the bootstrap kept at
ordinary steps, exploration at rate epsilon), with no note. Look-alikes stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

TARGETS = """discount = 0.95

def td_targets(rew, nxt_vals, terminal_b):
    best_next = tf.reduce_max(nxt_vals, axis=1)
    return rew + discount * best_next * terminal_b
"""
CHECK_TARGETS = (
    "[round(float(v), 3) for v in td_targets(tf.constant([1.0, 2.0]), "
    "tf.constant([[0.0, 4.0], [3.0, 1.0]]), tf.constant([0.0, 1.0])).numpy()]"
)

CHOOSER = """def choose(obs, explore_eps):
    if np.random.rand() > explore_eps:
        return int(np.random.randint(1, 4))
    return 0  # the greedy action in this test

rand_share = np.mean([choose(None, 0.9) != 0 for _ in range(2000)])
"""


def texts(report: dict[str, Any], start: str) -> list[str]:
    return [n["text"] for n in report["notes"] if n["text"].startswith(start)]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_a_target_masked_by_the_done_flag(kernel: KernelSession) -> None:
    notes = texts(checked_report(run(kernel, TARGETS)), "The done mask is the wrong way round")
    assert len(notes) == 1, notes
    assert "`rew + discount * best_next * terminal_b` in `td_targets`" in notes[0]
    assert value_of(kernel, CHECK_TARGETS) == [1.0, 4.85]  # bootstrap only at the end
    fix = last_code(notes[0])
    assert fix == "rew + discount * best_next * (1.0 - terminal_b)"
    fixed = TARGETS.replace("rew + discount * best_next * terminal_b", fix)
    assert texts(checked_report(run(kernel, fixed)), "The done mask") == []
    assert value_of(kernel, CHECK_TARGETS) == [4.8, 2.0]


def test_exploration_when_the_draw_is_above_epsilon(kernel: KernelSession) -> None:
    notes = texts(checked_report(run(kernel, CHOOSER)), "Exploration the wrong way round")
    assert len(notes) == 1, notes
    assert "`if np.random.rand() > explore_eps:` in `choose`" in notes[0]
    assert value_of(kernel, "float(rand_share) < 0.2") is True
    fix = last_code(notes[0])
    assert fix == "if np.random.rand() < explore_eps:"
    fixed = CHOOSER.replace("if np.random.rand() > explore_eps:", fix)
    assert texts(checked_report(run(kernel, fixed)), "Exploration") == []
    assert value_of(kernel, "float(rand_share) > 0.8") is True


LOOK_ALIKES = [
    TARGETS.replace("* terminal_b", "* (1.0 - terminal_b)"),
    TARGETS.replace("terminal_b", "not_done"),
    TARGETS.replace("    best_next =", "    terminal_b = 1.0 - terminal_b\n    best_next ="),
    CHOOSER.replace(">", "<"),
    """def greedy_first(obs, epsilon_now):
    if np.random.rand() > epsilon_now:
        return int(np.argmax(obs))
    return int(np.random.randint(3))
""",
    """def soft_pick(probs, eps):
    if np.random.rand() > eps:
        return int(np.random.choice(len(probs), p=probs))
    return int(np.random.randint(len(probs)))
""",
]


@pytest.mark.parametrize(
    "cell",
    LOOK_ALIKES,
    ids=["one-minus", "not-done", "complemented", "below", "greedy-branch", "policy-sample"],
)
def test_look_alikes_stay_silent(kernel: KernelSession, cell: str) -> None:
    report = checked_report(run(kernel, cell))
    assert texts(report, "The done mask") == []
    assert texts(report, "Exploration") == []
