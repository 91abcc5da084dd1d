"""The per-cell report (schema ``tfcoach.report/1``, see ``docs/report.md``): its entries'
shapes and builders, what a report means, the report's assembly, and keeping, publishing
and printing it.

Every dict a report holds is made here, by one builder per entry kind (``note``,
``retrace_reason``, ``trace_entry``, ``variable_change``, ``error_entry``) and by
``assemble_report`` for the report itself; the ``TypedDict`` classes say what each holds
(``schema/report.schema.json`` is the contract). Entries stay plain dicts, in the key order
the builders give them, because the watchers complete them as a cell's evidence comes in
(a trace entry counts its traces, a text gains a sentence) and the report goes on the wire
as JSON as it is.

What a report means is decided here too, once, and carried in it so that no client decides
it again (the JupyterLab panel, the display under a cell, ``%tfcoach``): what each reason
counts as (``counts_as``: a first trace, a retrace or a tip), whether a note coaches or only
informs about tfcoach itself (``kind``), how many retraces each function made, and for the
whole report its ``counts``, ``level`` and one-line ``summary``. The entries' own fields are
set by their builders; what depends on complete entries is computed by ``assemble_report``,
which the monitor calls once a cell's evidence is all in.
"""

from __future__ import annotations

import copy
from typing import Any, TypedDict

from jupyterlab_tfcoach.monitor.course_links import CourseSection, course_link

SCHEMA = "tfcoach.report/1"
MESSAGE_TYPE = "tfcoach_report"


# What a report's parts count as (docs/report.md, "What a report means").
COACHING = "coaching"  # a note that teaches something (it names a course section)
INFORMATION = "information"  # a note about tfcoach itself (no course section)
FIRST_TRACE = "first_trace"  # a reason: the normal cost of a tf.function, information
RETRACE = "retrace"  # a reason: a trace beyond the first, and what changed
TIP = "tip"  # a reason: advice about the traced code (not a retrace)
# Reason kinds that are not retraces; every other kind (shape, dtype, python_value, kind,
# other) is one.
# A dataset's last, smaller batch costs one extra trace (``last_batch``): normal, like a
# first trace, so it counts as one.
LAST_BATCH = "last_batch"
_REASONS_NOT_RETRACES = {
    "first_trace": FIRST_TRACE,
    LAST_BATCH: FIRST_TRACE,
    "side_effect": TIP,
    "stale_value": TIP,
}
# A report's level: an explained error, coaching (something to change), information only,
# or nothing to report.
LEVEL_ERROR, LEVEL_WARNING, LEVEL_INFO, LEVEL_NONE = "error", "warning", "info", "none"


class Note(TypedDict):
    text: str
    course: CourseSection | None  # None only for notes about tfcoach itself
    kind: str  # COACHING (it has a course section) or INFORMATION (about tfcoach itself)


class RetraceReason(TypedDict):
    """Why a function traced (or what its traced code does): ``traces[].reasons[]``."""

    kind: str
    argument: str | None
    before: Any
    after: Any
    text: str
    counts_as: str  # FIRST_TRACE, RETRACE or TIP, from ``kind``
    count: int  # the traces this reason stands for: >1 once repeats of one cause are merged


class TraceEntry(TypedDict):
    """One tf.function's traces during a cell: ``traces[]``."""

    function: str
    defined_at: str | None
    new_traces: int
    total_traces: int
    retraces: int  # of the new traces, those beyond a first one (set by assemble_report)
    reasons: list[RetraceReason]
    course: CourseSection | None


class VariableChange(TypedDict):
    """A variable that left training: ``variables[]``."""

    name: str
    change: str
    before: Any
    after: Any
    text: str
    course: CourseSection | None


class ErrorEntry(TypedDict):
    """The cell's exception, explained: ``error``."""

    type: str
    message: str
    explanation: str
    course: CourseSection | None


class ReportCounts(TypedDict):
    """What a report holds, counted as the panel's badges and the summary count it."""

    traces: int  # traces made during the cell, of every function
    retraces: int  # of those, the traces beyond a first one
    variables: int  # variables that left training
    errors: int  # 1 for an explained error, else 0
    tips: int  # advice: side effects and frozen values (reasons), coaching notes
    information: int  # notes about tfcoach itself


class Report(TypedDict):
    schema: str
    execution_count: int | None
    cell_id: str | None
    monitor_ms: float
    traces: list[TraceEntry]
    variables: list[VariableChange]
    error: ErrorEntry | None
    notes: list[Note]
    level: str  # LEVEL_ERROR, LEVEL_WARNING, LEVEL_INFO or LEVEL_NONE
    summary: str  # one line, most important first; "" when there is nothing to report
    counts: ReportCounts


_last: dict[str, Any] | None = None


# ----------------------------------------------------------------- entries
def note(text: str, section: str | None = None) -> Note:
    """One entry of a report's ``notes``: what to tell the learner and where the course
    teaches it (``course`` is None only for notes about tfcoach itself). A note with a
    course section coaches; one without informs about tfcoach itself."""
    course = course_link(section) if section else None
    return {"text": text, "course": course, "kind": note_kind(course)}


def note_kind(course: Any) -> str:
    """``coaching`` for a note that names a course section, else ``information``."""
    return COACHING if course is not None else INFORMATION


def reason_counts_as(kind: str) -> str:
    """What a reason of ``kind`` counts as: ``first_trace``, ``retrace`` or ``tip``."""
    return _REASONS_NOT_RETRACES.get(kind, RETRACE)


def retrace_reason(
    kind: str, argument: str | None, before: Any, after: Any, text: str
) -> RetraceReason:
    return {
        "kind": kind,
        "argument": argument,
        "before": before,
        "after": after,
        "text": text,
        "counts_as": reason_counts_as(kind),
        "count": 1,
    }


def trace_entry(function: str, defined_at: str | None) -> TraceEntry:
    """A function's entry before its traces are counted and its reasons added."""
    return {
        "function": function,
        "defined_at": defined_at,
        "new_traces": 0,
        "total_traces": 0,
        "retraces": 0,
        "reasons": [],
        "course": None,
    }


def variable_change(
    name: str, change: str, before: Any, after: Any, text: str, section: str
) -> VariableChange:
    return {
        "name": name,
        "change": change,
        "before": before,
        "after": after,
        "text": text,
        "course": course_link(section),
    }


def error_entry(type_name: str, message: str, explanation: str, section: str) -> ErrorEntry:
    return {
        "type": type_name,
        "message": message,
        "explanation": explanation,
        "course": course_link(section),
    }


# --------------------------------------------------------- what it means
def retraces_of(trace: TraceEntry) -> int:
    """How many of a function's traces in this cell were retraces: the ``count`` of every
    reason that counts as a retrace (a reason stands for all the retraces of one cause);
    for an entry without reasons, every new trace but a first one."""
    reasons = trace["reasons"]
    if reasons:
        return sum(reason.get("count", 1) for reason in reasons if reason["counts_as"] == RETRACE)
    new, total = trace["new_traces"], trace["total_traces"]
    first_here = total > 0 and total == new
    return max(0, new - (1 if first_here else 0))


def report_counts(
    traces: list[TraceEntry],
    variables: list[VariableChange],
    error: ErrorEntry | None,
    notes: list[Note],
) -> ReportCounts:
    """The counts of a report whose traces carry their ``retraces`` already."""
    tip_reasons = sum(
        1 for trace in traces for reason in trace["reasons"] if reason["counts_as"] == TIP
    )
    coaching = sum(1 for entry in notes if entry["kind"] == COACHING)
    return {
        "traces": sum(max(0, trace["new_traces"]) for trace in traces),
        "retraces": sum(trace["retraces"] for trace in traces),
        "variables": len(variables),
        "errors": 1 if error is not None else 0,
        "tips": tip_reasons + coaching,
        "information": len(notes) - coaching,
    }


def report_level(counts: ReportCounts) -> str:
    """``error`` (an explained error), ``warning`` (coaching: a retrace, a variable that
    left training, a tip), ``info`` (only first traces or notes about tfcoach itself) or
    ``none`` (nothing to report)."""
    if counts["errors"]:
        return LEVEL_ERROR
    if counts["retraces"] or counts["variables"] or counts["tips"]:
        return LEVEL_WARNING
    if counts["traces"] or counts["information"]:
        return LEVEL_INFO
    return LEVEL_NONE


def _counted(count: int, word: str) -> str:
    """``1 retrace``, ``2 retraces``: every word counted here takes an s."""
    return f"{count} {word if count == 1 else word + 's'}"


def report_summary(counts: ReportCounts, error: ErrorEntry | None) -> str:
    """One line, most important first: the error's type, retraces, variables, tips; a
    report with none of these says how many traces (else notes) it has; "" for nothing."""
    parts = [str(error.get("type") or "error")] if error is not None else []
    if counts["retraces"]:
        parts.append(_counted(counts["retraces"], "retrace"))
    if counts["variables"]:
        parts.append(_counted(counts["variables"], "variable"))
    if counts["tips"]:
        parts.append(_counted(counts["tips"], "tip"))
    if not parts and counts["traces"]:
        parts.append(_counted(counts["traces"], "trace"))
    if not parts and counts["information"]:
        parts.append(_counted(counts["information"], "note"))
    return " \u00b7 ".join(parts)


# ------------------------------------------------------------------ report
def assemble_report(
    execution_count: Any,
    cell_id: Any,
    monitor_ms: float = 0.0,
    traces: list[TraceEntry] | None = None,
    variables: list[VariableChange] | None = None,
    error: ErrorEntry | None = None,
    notes: list[Note] | None = None,
) -> Report:
    """The report of one cell, from what the watchers found, complete (the one place a
    report's top level is written: a field computed from the entries belongs here). Each
    trace entry gets its ``retraces``; the report its ``level``, ``summary`` and ``counts``."""
    traces = traces if traces is not None else []
    variables = variables if variables is not None else []
    notes = notes if notes is not None else []
    for trace in traces:
        trace["retraces"] = retraces_of(trace)
    counts = report_counts(traces, variables, error, notes)
    return {
        "schema": SCHEMA,
        "execution_count": execution_count if type(execution_count) is int else None,
        "cell_id": cell_id if type(cell_id) is str else None,
        "monitor_ms": monitor_ms,
        "traces": traces,
        "variables": variables,
        "error": error,
        "notes": notes,
        "level": report_level(counts),
        "summary": report_summary(counts, error),
        "counts": counts,
    }


def new_report(execution_count: Any, cell_id: Any) -> Report:
    """An empty report: nothing traced, changed or explained."""
    return assemble_report(execution_count, cell_id)


def note_text(value: Any) -> str:
    """The text of a note (reports kept from older monitors hold plain strings)."""
    if isinstance(value, dict):
        return str(value.get("text", ""))
    return str(value)


def keep(report: dict[str, Any]) -> None:
    global _last
    _last = report


def last_report() -> dict[str, Any] | None:
    """The report of the last cell that ran with the monitor loaded (a copy), or None."""
    return copy.deepcopy(_last)


def publish(shell: Any, report: dict[str, Any]) -> bool:
    """Send the report on iopub, parented to the running cell's execute_request.

    A shell without a kernel (terminal IPython) or a kernel without these
    ipykernel attributes simply gets no message.
    """
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return False
    try:
        session = kernel.session
        socket = kernel.iopub_socket
        parent = kernel.get_parent()
    except Exception:
        return False
    if session is None or socket is None:
        return False
    try:
        session.send(socket, MESSAGE_TYPE, report, parent=parent)
    except Exception:
        return False
    return True


def _course_suffix(course: Any) -> str:
    if isinstance(course, dict) and course.get("title"):
        return f"  [course: {course['title']}]"
    return ""


def format_report(report: dict[str, Any] | None) -> str:
    """A readable summary for ``%tfcoach``."""
    if report is None:
        return "tfcoach: no cell has run since the monitor was loaded."
    count = report.get("execution_count")
    lines = [f"tfcoach report for cell [{count if count is not None else '?'}]"]
    lines[0] += f" (monitor {report.get('monitor_ms', 0):.2f} ms)"
    summary = report.get("summary")
    if isinstance(summary, str) and summary:
        lines[0] += f": {summary}"
    traces = report.get("traces") or []
    variables = report.get("variables") or []
    error = report.get("error")
    notes = report.get("notes") or []
    if not (traces or variables or error or notes):
        lines.append("  nothing to report: no traces, no variable changes, no explained error.")
    if traces:
        lines.append("Traces:")
        for trace in traces:
            where = f" (defined at {trace['defined_at']})" if trace.get("defined_at") else ""
            lines.append(
                f"  {trace['function']}{where}: {trace['new_traces']} new, "
                f"{trace['total_traces']} in total{_course_suffix(trace.get('course'))}"
            )
            for reason in trace.get("reasons") or []:
                lines.append(f"    - {reason['kind']}: {reason['text']}")
    if variables:
        lines.append("Variables:")
        for change in variables:
            lines.append(
                f"  {change['name']} ({change['change']}: {change['before']} -> "
                f"{change['after']}){_course_suffix(change.get('course'))}"
            )
            lines.append(f"    {change['text']}")
    if error:
        lines.append(f"Error: {error['type']}: {error['message'].splitlines()[0][:200]}")
        lines.append(f"  {error['explanation']}{_course_suffix(error.get('course'))}")
    if notes:
        lines.append("Notes:")
        for entry in notes:
            lines.append(f"  - {note_text(entry)}")
            if isinstance(entry, dict):
                suffix = _course_suffix(entry.get("course"))
                if suffix:
                    lines[-1] += suffix
    return "\n".join(lines)
