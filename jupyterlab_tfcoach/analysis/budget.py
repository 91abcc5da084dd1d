"""A time budget for one analysis, used by the long-running front ends.

The language server and the Jupyter server extension run the analysis inside
``with time_budget(seconds) as budget:``. The analysis checks the budget
between rules and inside its name-resolution loop; once it is spent, it stops
and returns the findings made so far, and ``budget.note`` says so. Parsing and
the model walk are not interrupted (both are linear in the input, and the parse
is one call into C), but the model walk is not started past the deadline. Without
a budget (the CLI, the library), an analysis runs to the end.

A server counts the whole request against the budget, the time it waited for a
worker included: ``time_budget(seconds, waited=...)`` starts the clock that long
ago. A request that waited past its deadline is not analysed at all (``refuse``;
its note says why), so a busy server answers late requests at once instead of
running every one of them to the end.

The budget is held in a context variable: each thread (and each task) sees its
own, so concurrent analyses in a server's worker threads never share one.

How long an analysis may take is set here, once: ``ANALYSIS_BUDGET_S``, the budget of a
language server pass (its ``TFCOACH_ANALYSIS_BUDGET_MS`` may set another) and of a ``POST
tfcoach/api/analyze`` request, counted from its arrival.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# The time budget of one analysis in the long-running front ends: past it, a user who
# waits for findings gets those made so far (and a note) rather than nothing.
ANALYSIS_BUDGET_S = 10.0


class BudgetExceeded(Exception):
    """Raised inside the analysis when its budget is spent; the API catches it."""


class TimeBudget:
    """How long one analysis may run; ``stopped_after_ms`` is set once it stopped early.

    ``waited``: seconds the request had already spent (in a server's queue) when the
    analysis began; they count against ``seconds``.
    """

    __slots__ = (
        "_ticks",
        "deadline",
        "not_started",
        "seconds",
        "started",
        "stopped_after_ms",
        "waited",
    )

    def __init__(self, seconds: float, waited: float = 0.0) -> None:
        self.seconds = seconds
        self.waited = max(waited, 0.0)
        self.started = time.monotonic() - self.waited
        self.deadline = self.started + seconds
        self.stopped_after_ms: int | None = None
        self.not_started = False
        self._ticks = 0

    @property
    def spent(self) -> bool:
        """Whether the deadline has passed."""
        return time.monotonic() >= self.deadline

    def check(self) -> None:
        """Raise ``BudgetExceeded`` once the deadline has passed."""
        if time.monotonic() > self.deadline:
            raise BudgetExceeded

    def tick(self) -> None:
        """``check`` every 256th call: for loops that run once per name read."""
        self._ticks += 1
        if not self._ticks & 255:
            self.check()

    def stop(self) -> None:
        if self.stopped_after_ms is None:
            self.stopped_after_ms = round((time.monotonic() - self.started) * 1000)

    def refuse(self) -> None:
        """Stop before any work began: the request waited past its deadline."""
        self.not_started = True
        self.stop()

    @property
    def note(self) -> str | None:
        """What the answer should say when the analysis stopped early; None when it did not."""
        if self.stopped_after_ms is None:
            return None
        budget_ms = round(self.seconds * 1000)
        if self.not_started:
            return (
                f"analysis not started: the request waited {self.stopped_after_ms} ms for the "
                f"busy server, past its time budget of {budget_ms} ms; no findings this time"
            )
        return (
            f"analysis stopped after {self.stopped_after_ms} ms (its time budget is "
            f"{budget_ms} ms): findings past that point are missing"
        )


_CURRENT: ContextVar[TimeBudget | None] = ContextVar("tfcoach_time_budget", default=None)


@contextmanager
def time_budget(seconds: float, waited: float = 0.0) -> Iterator[TimeBudget]:
    """Every analysis run inside the block shares one budget of ``seconds``, of which
    ``waited`` (the time the request already waited) is already gone."""
    budget = TimeBudget(seconds, waited)
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


def current_budget() -> TimeBudget | None:
    return _CURRENT.get()
