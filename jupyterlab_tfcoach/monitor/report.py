"""The per-cell report (schema ``tfcoach.report/1``, see ``docs/report.md``): its entries'
shapes and builders, the report's assembly, and keeping, publishing and printing it.

Every dict a report holds is made here, by one builder per entry kind (``note``,
``retrace_reason``, ``trace_entry``, ``variable_change``, ``error_entry``) and by
``assemble_report`` for the report itself; the ``TypedDict`` classes say what each holds
(``schema/report.schema.json`` is the contract). Entries stay plain dicts, in the key order
the builders give them, because the watchers complete them as a cell's evidence comes in
(a trace entry counts its traces, a text gains a sentence) and the report goes on the wire
as JSON as it is.
"""

from __future__ import annotations

import copy
from typing import Any, TypedDict

from jupyterlab_tfcoach.monitor.course_links import CourseSection, course_link

SCHEMA = "tfcoach.report/1"
MESSAGE_TYPE = "tfcoach_report"


class Note(TypedDict):
    text: str
    course: CourseSection | None  # None only for notes about tfcoach itself


class RetraceReason(TypedDict):
    """Why a function traced (or what its traced code does): ``traces[].reasons[]``."""

    kind: str
    argument: str | None
    before: Any
    after: Any
    text: str


class TraceEntry(TypedDict):
    """One tf.function's traces during a cell: ``traces[]``."""

    function: str
    defined_at: str | None
    new_traces: int
    total_traces: int
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


class Report(TypedDict):
    schema: str
    execution_count: int | None
    cell_id: str | None
    monitor_ms: float
    traces: list[TraceEntry]
    variables: list[VariableChange]
    error: ErrorEntry | None
    notes: list[Note]


_last: dict[str, Any] | None = None


# ----------------------------------------------------------------- entries
def note(text: str, section: str | None = None) -> Note:
    """One entry of a report's ``notes``: what to tell the learner and where the course
    teaches it (``course`` is None only for notes about tfcoach itself)."""
    return {"text": text, "course": course_link(section) if section else None}


def retrace_reason(
    kind: str, argument: str | None, before: Any, after: Any, text: str
) -> RetraceReason:
    return {"kind": kind, "argument": argument, "before": before, "after": after, "text": text}


def trace_entry(function: str, defined_at: str | None) -> TraceEntry:
    """A function's entry before its traces are counted and its reasons added."""
    return {
        "function": function,
        "defined_at": defined_at,
        "new_traces": 0,
        "total_traces": 0,
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
    """The report of one cell, from what the watchers found (the one place a report's
    top level is written: a field computed from the entries belongs here)."""
    return {
        "schema": SCHEMA,
        "execution_count": execution_count if type(execution_count) is int else None,
        "cell_id": cell_id if type(cell_id) is str else None,
        "monitor_ms": monitor_ms,
        "traces": traces if traces is not None else [],
        "variables": variables if variables is not None else [],
        "error": error,
        "notes": notes if notes is not None else [],
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
