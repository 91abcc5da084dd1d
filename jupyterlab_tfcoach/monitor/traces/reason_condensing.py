"""Keeping a report short: the first few reasons of each kind and argument, the rest
summed up in one line."""

from __future__ import annotations

from typing import Any

from jupyterlab_tfcoach.monitor.report import RetraceReason, retrace_reason

# Reasons of one kind for one argument (a loop over Python floats, a loop that
# recreates a function) after which the rest are summed up in one line.
MAX_SIMILAR_REASONS = 3


def _similar_key(reason: RetraceReason) -> tuple[Any, ...]:
    # "Recreated ..." and "Retraced ... (reason unknown)" are both kind "other" with
    # no argument: the first word keeps them apart.
    text = str(reason.get("text") or "")
    return (reason["kind"], reason["argument"], text.split(" ", 1)[0])


def condense(reasons: list[RetraceReason]) -> list[RetraceReason]:
    """Keep the first few reasons of each kind and argument; sum up the rest in one line.

    A loop over 50 Python floats retraces 50 times for the same reason: the
    first ones show the pattern, 47 more copies of the same advice are noise.
    """
    counts: dict[tuple[Any, ...], int] = {}
    omitted: dict[tuple[Any, ...], list[RetraceReason]] = {}
    kept: list[RetraceReason] = []
    for reason in reasons:
        key = _similar_key(reason)
        counts[key] = counts.get(key, 0) + 1
        if counts[key] <= MAX_SIMILAR_REASONS:
            kept.append(reason)
        else:
            omitted.setdefault(key, []).append(reason)
    for key, rest in omitted.items():
        kind, argument, first_word = key
        last = rest[-1]
        if first_word == "Recreated":
            what = "recreations of the same function, as above"
        elif argument is not None and last["after"] is not None:
            what = (
                f"retraces for the same reason: `{argument}` changed again (last: {last['after']})"
            )
        else:
            what = "retraces for the same reason, as above"
        summary = retrace_reason(
            kind, argument, rest[0]["before"], last["after"], f"... and {len(rest)} more {what}."
        )
        # The line stands for every reason it sums up: the retraces stay counted.
        summary["count"] = sum(reason.get("count", 1) for reason in rest)
        kept.append(summary)
    return kept
