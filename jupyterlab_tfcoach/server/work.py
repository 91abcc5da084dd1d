"""What the analyze and hover routes run off the event loop, in a lane (``lanes.py``).

These functions run in a worker thread of the server, or in a worker process for large
requests, so they take and return only plain data (the code, a ``Config``, numbers) and
this module imports nothing of jupyter_server or tornado: a worker process starts by
importing the analysis alone (~0.2 s).

Budgets count from the request's arrival: the caller passes ``arrived``, the wall-clock
time (``time.time()``) the request arrived, because a worker process cannot share the
server's monotonic clock (its reference point is undefined across processes). A clock
step between arrival and work only shifts the budget (never below no wait at all).
"""

from __future__ import annotations

import json
import time
from typing import Any

from jupyterlab_tfcoach.analysis import Config, check_cells, check_source
from jupyterlab_tfcoach.analysis.budget import ANALYSIS_BUDGET_S, TimeBudget, time_budget
from jupyterlab_tfcoach.analysis.engine import Analysis, gc_paused
from jupyterlab_tfcoach.course import get_course
from jupyterlab_tfcoach.hover import CardText, index_cells

# How long a request may take from its arrival to its answer, queueing included: the
# core's analysis budget, as the language server's.
ANALYZE_BUDGET_S = ANALYSIS_BUDGET_S
# How long past its budget the route still waits for an analysis that is running: it
# stops at its next check, but not within a parse (up to ~1 s for 1 MiB, unloaded).
ANALYZE_GRACE_S = 1.0
# A hover card shown seconds after the pointer stopped is on a name the user has left:
# past this, the answer is "no card" (an index still being built is kept for the next).
HOVER_BUDGET_S = 2.0


def waited_since(arrived: float | None) -> float:
    """Seconds since ``arrived`` (wall clock); 0 when None or after a clock step back."""
    if arrived is None:
        return 0.0
    return max(time.time() - arrived, 0.0)


def analysis_answer(
    code: dict[str, Any],
    base_url: str | None,
    config: Config | None = None,
    budget_seconds: float = ANALYZE_BUDGET_S,
    arrived: float | None = None,
) -> dict[str, Any]:
    """The analyze route's answer for ``code`` (``{"source": str}`` or ``{"cells": [...]}``).

    The analysis has ``budget_seconds`` from ``arrived`` (now when None). Past it, the
    findings made so far are returned with ``"notes": ["analysis stopped after N ms
    ..."]``; a request that waited past it is not analysed: no findings, ``"notes":
    ["analysis not started: ..."]``. ``notes`` is absent otherwise.
    """
    with time_budget(budget_seconds, waited_since(arrived)) as budget:
        if arrived is not None and budget.spent:
            # The parse of a large source is one call into C that cannot be stopped
            # midway: do not start it past the deadline.
            budget.refuse()
            result = Analysis([], ())
        elif "source" in code:
            result = check_source(code["source"], config)
        else:
            result = check_cells(code["cells"], config)
    return _answer(result, budget, base_url)


def _answer(result: Analysis, budget: TimeBudget, base_url: str | None) -> dict[str, Any]:
    course = get_course()
    answer: dict[str, Any] = {
        "findings": [f.to_json(course.ref(f.section_id, base_url)) for f in result.findings],
        "syntax_errors": [problem.to_json() for problem in result.syntax_errors],
    }
    if budget.note is not None:
        answer["notes"] = [budget.note]
    return answer


def analysis_json(
    code: dict[str, Any],
    base_url: str | None,
    config: Config,
    problems: list[str],
    budget_seconds: float,
    arrived: float,
) -> str:
    """``analysis_answer`` with the configuration's problems, as the JSON text the route
    sends: encoded here, in the lane, so the event loop only writes it out (and a worker
    process hands back one string, not thousands of objects to unpickle)."""
    answer = analysis_answer(code, base_url, config, budget_seconds, arrived)
    if problems:
        answer["config_error"] = "\n".join(problems)
    return json.dumps(answer)


def late_json(started: bool, problems: list[str], budget_seconds: float, arrived: float) -> str:
    """The answer for a request whose analysis did not finish in time (see
    ``lanes.Lane.run``): never ``started`` (it waited past its budget: the "not started"
    note), or still running past the grace (the "stopped" note, without its findings)."""
    budget = TimeBudget(budget_seconds, waited_since(arrived))
    if started:
        budget.stop()
    else:
        budget.refuse()
    answer = _answer(Analysis([], ()), budget, None)
    if problems:
        answer["config_error"] = "\n".join(problems)
    return json.dumps(answer)


def hover_card(
    cells: tuple[str, ...],
    cell: int,
    line: int,
    column: int,
    budget_seconds: float = HOVER_BUDGET_S,
    arrived: float | None = None,
) -> tuple[CardText, int, int] | None:
    """The card at ``cell``/``line``/``column`` (code points), with the name's span; None
    for no card, and when the request waited past its budget (the index is not built
    for a hover nobody waits for any more)."""
    if arrived is not None and time.time() - arrived > budget_seconds:
        return None
    # One parse per notebook version (the hovers between two edits share it): cached in
    # the process that runs it. The collector pauses while it is built only in a worker
    # process (its main thread, see ``gc_paused``), never in the server's threads.
    with gc_paused():
        index = index_cells(cells)
    return index.card_at(cell, line, column)
