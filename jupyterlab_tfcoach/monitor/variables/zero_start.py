"""Weights that started all zeros and never moved while others trained: one test for
``fit`` (``training/fit_symptoms.py``) and custom loops (``training_symptoms.py``).

With every weight matrix of a network at zero, every hidden unit computes the same
zeros and every gradient that reaches a matrix is zero too: the matrices never move,
and only the biases after them learn. Zeros are fine for biases and for a single
linear layer, so the symptom is told only when at least one weight that never moved is
a matrix (two or more dimensions) and some other weight did move.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

SECTION = "zero-initialization"


class WeightOutcome(Protocol):
    """What a run did to one weight: whether it changed, whether it started all zeros."""

    @property
    def changed(self) -> bool: ...

    @property
    def started_zero(self) -> bool: ...

    @property
    def shape(self) -> tuple[int, ...]: ...


Outcome = TypeVar("Outcome", bound=WeightOutcome)


def stuck_at_zero(
    outcomes: Sequence[Outcome], told: Callable[[Outcome], bool] = lambda outcome: False
) -> list[Outcome]:
    """The weights that started all zeros and never changed (less those ``told``
    already), when some other weight changed and one of them is a matrix; else []."""
    if not any(outcome.changed for outcome in outcomes):
        return []
    stuck = [o for o in outcomes if not o.changed and o.started_zero and not told(o)]
    return stuck if any(len(o.shape) >= 2 for o in stuck) else []


def zero_symmetry(matrices: str, sentence: bool = False) -> str:
    """Why zero-started matrices never move (``matrices``: "kernel", "weight matrix");
    ``sentence``: capitalised, to start a sentence."""
    return (
        f"{'W' if sentence else 'w'}ith every {matrices} at zero the hidden units all "
        f"output the same zeros and every {matrices} gradient is 0, so they never move"
    )
