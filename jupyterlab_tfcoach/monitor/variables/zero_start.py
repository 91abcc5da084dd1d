"""Weights that started all zeros and never moved while others trained: one test for
``fit`` (``training/fit_symptoms.py``) and custom loops (``training_symptoms.py``).

With every weight matrix of a network at zero, every hidden unit computes the same
zeros and every gradient that reaches a matrix is zero too: the matrices never move,
and only the biases after them learn. Zeros are fine for biases and for a single
linear layer, so the symptom is told only when at least one weight that never moved is
a matrix (two or more dimensions) and some other weight did move.

Zeros are the cause only where a gradient would otherwise flow: a layer whose weights
that started at random values did not move either received no gradient at all (a
causal mask that hides its tokens from the output, attention over a single key, a
branch multiplied by zero), so its zero-started weights (often just the default zero
biases) say nothing about their initializer and are left out (``layer_of``).
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
    outcomes: Sequence[Outcome],
    told: Callable[[Outcome], bool] = lambda outcome: False,
    layer_of: Callable[[Outcome], str | None] = lambda outcome: None,
) -> list[Outcome]:
    """The weights that started all zeros and never changed (less those ``told``
    already, and those of a layer whose random-started weights did not change either:
    no gradient reached it), when some other weight changed and one of them is a matrix;
    else []."""
    if not any(outcome.changed for outcome in outcomes):
        return []
    no_gradient = {
        layer
        for o in outcomes
        if not o.changed and not o.started_zero and (layer := layer_of(o)) is not None
    }
    stuck = [
        o
        for o in outcomes
        if not o.changed and o.started_zero and not told(o) and layer_of(o) not in no_gradient
    ]
    return stuck if any(len(o.shape) >= 2 for o in stuck) else []


def zero_symmetry(matrices: str, sentence: bool = False) -> str:
    """Why zero-started matrices never move (``matrices``: "kernel", "weight matrix");
    ``sentence``: capitalised, to start a sentence."""
    return (
        f"{'W' if sentence else 'w'}ith every {matrices} at zero the hidden units all "
        f"output the same zeros and every {matrices} gradient is 0, so they never move"
    )
