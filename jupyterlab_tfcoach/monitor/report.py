"""The per-cell report (schema ``tfcoach.report/1``, see ``docs/report.md``): build, keep,
publish, print."""

from __future__ import annotations

import copy
from typing import Any

from jupyterlab_tfcoach.monitor.course_links import course_link

SCHEMA = "tfcoach.report/1"
MESSAGE_TYPE = "tfcoach_report"

_last: dict[str, Any] | None = None


def new_report(execution_count: Any, cell_id: Any) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "execution_count": execution_count if type(execution_count) is int else None,
        "cell_id": cell_id if type(cell_id) is str else None,
        "monitor_ms": 0.0,
        "traces": [],
        "variables": [],
        "error": None,
        "notes": [],
    }


def note(text: str, section: str | None = None) -> dict[str, Any]:
    """One entry of a report's ``notes``: what to tell the learner and where the course
    teaches it (``course`` is None only for notes about tfcoach itself)."""
    return {"text": text, "course": course_link(section) if section else None}


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
