"""A cell's ``traces`` entries and notes, from the trace events the registry recorded.

``registry.py`` records one ``TraceEvent`` per trace (and per call that reused a trace with
a stale value) as it happens; after the cell they become one entry per function: its new
and total traces, its reasons (side effects and frozen values once per name, the retraces for
new Python values of one argument as ONE reason that lists the values and counts them, other
similar retraces condensed), the course section that teaches the most important of them. A cell
that traced more functions than a report should list gets the rest in a note, and
functions recreated inside the cell get a note each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.course_links import course_link
from jupyterlab_tfcoach.monitor.report import (
    CourseSection,
    Note,
    RetraceReason,
    TraceEntry,
    note,
    trace_entry,
)
from jupyterlab_tfcoach.monitor.traces.identity import KERAS, FunctionIdentity
from jupyterlab_tfcoach.monitor.traces.reason_condensing import condense

MAX_REASONS_PER_ENTRY = 20
# A cell that calls 100 functions gets 100 entries otherwise; the rest go in a note.
MAX_ENTRIES_PER_REPORT = 30
_PYTHON_KINDS = ("side_effect", "stale_value")


@dataclass
class TraceEvent:
    """One trace seen during the current cell, as plain data."""

    group: tuple[Any, ...]  # the entry it belongs to (``registry.py`` groups them)
    identity: FunctionIdentity
    counted: bool
    reasons: list[RetraceReason]
    total_after: int
    recreated_in_cell: bool = False


def entry_course(reasons: list[RetraceReason]) -> CourseSection | None:
    """The course section for an entry: what changes results first, then retracing."""
    kinds = {reason["kind"] for reason in reasons}
    sections = []
    if "side_effect" in kinds:
        sections.append("side-effects")
    if "stale_value" in kinds:
        sections.append("frozen-python-values")
    if kinds - {"first_trace", "last_batch", "side_effect", "stale_value"}:
        sections.append("retracing")
    if "last_batch" in kinds:
        sections.append("tf-data")  # where a dataset's short last batch is taught
    sections.append("tracing")
    for section in sections:
        link = course_link(section)
        if link is not None:
            return link
    return None


def _ordered_reasons(reasons: list[RetraceReason]) -> list[RetraceReason]:
    """The first retrace reason, then side effects and frozen values (once per entry and
    name, however many traces), then the other retrace reasons: one per argument that
    took new Python values, the rest condensed, all capped."""
    seen: set[tuple[Any, ...]] = set()
    python: list[RetraceReason] = []
    for reason in reasons:
        if reason["kind"] in _PYTHON_KINDS:
            key = (reason["kind"], reason["argument"], reason["after"])
            if key not in seen:
                seen.add(key)
                python.append(reason)
    others = condense(
        _merge_shapes(_merge_python_values([r for r in reasons if r["kind"] not in _PYTHON_KINDS]))
    )
    return (others[:1] + python + others[1:])[:MAX_REASONS_PER_ENTRY]


MAX_LISTED_VALUES = 12


def _merge_python_values(reasons: list[RetraceReason]) -> list[RetraceReason]:
    """One reason per argument that took new Python values in the cell: one cause, one
    fix. The first such reason (the one that explains the cause and the fix, in the
    argument as written at the call) stands for all of them: it lists every value the
    argument took (bounded) and counts the retraces in ``count``; the later ones go."""
    values: dict[Any, list[str]] = {}
    first: dict[Any, RetraceReason] = {}
    merged: list[RetraceReason] = []
    for reason in reasons:
        key = reason["argument"]
        if reason["kind"] != "python_value" or key is None:
            merged.append(reason)
            continue
        seen = values.setdefault(key, [])
        if key not in first:
            first[key] = reason
            merged.append(reason)
            if reason["before"] is not None:
                seen.append(str(reason["before"]))
        else:
            kept = first[key]
            kept["count"] = kept.get("count", 1) + reason.get("count", 1)
            kept["after"] = reason["after"]
        if reason["after"] is not None:
            seen.append(str(reason["after"]))
    for key, reason in first.items():
        taken = values[key]
        if len(taken) < 3:
            continue
        shown = ", ".join(taken[:MAX_LISTED_VALUES])
        more = (
            f" and {len(taken) - MAX_LISTED_VALUES} more" if len(taken) > MAX_LISTED_VALUES else ""
        )
        retraced = reason.get("count", 1)
        reason["text"] = (
            f"{reason['text']} Values of `{key}` in this cell: {shown}{more}. "
            f"One cause and one fix for these {retraced} retraces."
        )
    return merged


_FIX = " Fix: "
_CALL_SITE = re.compile(r"\(call at ([^()]*)\)")


def _is_relaxed(reason: RetraceReason) -> bool:
    """TensorFlow relaxed a shape to None itself (reduce_retracing): news, not a cause."""
    before, after = reason["before"] or "", reason["after"] or ""
    return "None" in after and "None" not in before


def _merge_shapes(reasons: list[RetraceReason]) -> list[RetraceReason]:
    """One reason for a function's shape retraces in the cell: one cause, one fix.

    Each trace that changed shapes has one reason with the fix (its first shape change)
    and a "too" reason per other argument. When two or more traces did, the first reason
    stands for all of them: it lists every shape each argument took, counts the retraces
    and ends with the fix of the last one, which the registry wrote against every earlier
    trace of the function, so it declares None in every dimension that varied."""
    leads = [
        r for r in reasons if r["kind"] == "shape" and _FIX in r["text"] and not _is_relaxed(r)
    ]
    if len(leads) < 2:
        return reasons
    lead = leads[0]
    shapes: dict[str, list[str]] = {}
    merged: list[RetraceReason] = []
    for reason in reasons:
        if reason["kind"] != "shape" or _is_relaxed(reason) or reason["argument"] is None:
            merged.append(reason)
            continue
        taken = shapes.setdefault(reason["argument"], [])
        for shape in (reason["before"], reason["after"]):
            if shape is not None and (not taken or taken[-1] != shape):
                taken.append(shape)
        if reason is lead:
            merged.append(reason)
            continue
        lead["count"] = lead.get("count", 1) + reason.get("count", 1)
        if reason["argument"] == lead["argument"]:
            lead["after"] = reason["after"]
    retraced = lead["count"]
    listed = "; ".join(
        f"`{argument}` "
        + ", ".join(taken[:MAX_LISTED_VALUES])
        + (f" and {len(taken) - MAX_LISTED_VALUES} more" if len(taken) > MAX_LISTED_VALUES else "")
        for argument, taken in shapes.items()
    )
    head = lead["text"].split(_FIX, 1)[0]
    sites = list(
        dict.fromkeys(m.group(1) for r in leads for m in [_CALL_SITE.search(r["text"])] if m)
    )
    if len(sites) > 1:  # where the traces came from, every line once
        head = _CALL_SITE.sub(f"(calls at {', '.join(sites)})", head, count=1)
    fix = leads[-1]["text"].split(_FIX, 1)[1]
    lead["text"] = (
        f"{head} Shapes in this cell: {listed}. One cause and one fix for these {retraced} "
        f"retraces.{_FIX}{fix}"
    )
    return merged


def trace_entries(events: list[TraceEvent]) -> tuple[list[TraceEntry], list[Note]]:
    """The ``traces`` entries for a cell's events, and a note for those left out."""
    entries: dict[tuple[Any, ...], TraceEntry] = {}
    origins: dict[tuple[Any, ...], str] = {}
    for event in events:
        entry = entries.get(event.group)
        if entry is None:
            entry = trace_entry(event.identity.name, event.identity.defined_at)
            entries[event.group] = entry
            origins[event.group] = event.identity.origin
        if event.counted:
            entry["new_traces"] += 1
        entry["total_traces"] = max(entry["total_traces"], event.total_after)
        for reason in event.reasons:
            # The first trace of a step function Keras builds is what every fit()
            # does: not worth a line. Its retraces and side effects are.
            if event.identity.origin == KERAS and reason["kind"] == "first_trace":
                continue
            entry["reasons"].append(reason)
    for entry in entries.values():
        entry["reasons"] = _ordered_reasons(entry["reasons"])
        entry["course"] = entry_course(entry["reasons"])
    listed = [
        entry
        for group, entry in entries.items()
        if entry["reasons"] or (entry["new_traces"] and origins[group] != KERAS)
    ]
    notes: list[Note] = []
    if len(listed) > MAX_ENTRIES_PER_REPORT:
        rest = listed[MAX_ENTRIES_PER_REPORT:]
        names = ", ".join(entry["function"] for entry in rest[:10])
        more = f" and {len(rest) - 10} more" if len(rest) > 10 else ""
        notes.append(
            note(
                f"{len(rest)} more tf.functions traced in this cell and are not listed "
                f"({sum(entry['new_traces'] for entry in rest)} traces): {names}{more}.",
                "tracing",
            )
        )
        listed = listed[:MAX_ENTRIES_PER_REPORT]
    return listed, notes


def recreation_notes(events: list[TraceEvent]) -> list[Note]:
    """One note per function recreated (a new tf.function object) within the cell."""
    counts: dict[str, int] = {}
    for event in events:
        if event.recreated_in_cell:
            counts[event.identity.name] = counts.get(event.identity.name, 0) + 1
    return [
        note(
            f"{name} was recreated {count} time{'s' if count > 1 else ''} in this cell: "
            "each tf.function(...) call makes a new function object that traces again. "
            "These are recreations, not retraces; create the tf.function once and reuse it.",
            "retracing",
        )
        for name, count in counts.items()
    ]
