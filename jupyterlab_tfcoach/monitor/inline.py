"""The report shown under a cell's output, for kernels no tfcoach panel listens to.

VS Code's notebook editor, hosted notebooks where only ``%load_ext`` is possible,
``jupyter console`` and nbclient/papermill runs have no side panel: there the monitor
displays a compact report as a rich output of the cell, but only for a cell that has
something to say. The bundle carries ``text/plain`` (terminals, VS Code), ``text/html``
(every string from the kernel escaped; links only to ``http``, ``https`` and ``file``
URLs) and the report itself under ``REPORT_MIME`` for tools.

What the report means is the core's (``report.py``), read here from the report as the
panel reads it: its one-line ``summary`` heads the display, its ``level`` colours it, and
each reason says what it ``counts_as``. The one choice this display makes is to leave out
first traces, the normal cost of a tf.function (the panel's timeline lists them).
"""

from __future__ import annotations

import html
from typing import Any

from jupyterlab_tfcoach.monitor.course_links import local_course_url
from jupyterlab_tfcoach.monitor.report import (
    FIRST_TRACE,
    LEVEL_ERROR,
    LEVEL_INFO,
    LEVEL_NONE,
    note_text,
)

REPORT_MIME = "application/vnd.tfcoach.report+json"
_LINK_SCHEMES = ("http://", "https://", "file://")
_MAX_TEXT = 2_000  # characters of one entry; reports are already short
_MAX_SUMMARY = 200  # characters of the one-line summary
# The display's border, by the report's level (as the panel marks its entries): an error
# red, information only grey, coaching (the rest) orange.
_LEVEL_COLOURS = {LEVEL_ERROR: "#d32f2f", LEVEL_INFO: "#9e9e9e"}
_COACHING_COLOUR = "#ff8f00"


def _reasons_worth_telling(trace: dict[str, Any]) -> list[dict[str, Any]]:
    # A first trace is the normal cost of a tf.function: the panel's timeline lists it,
    # but a line under every cell that calls a new function would drown the rest.
    return [r for r in trace.get("reasons") or [] if r.get("counts_as") != FIRST_TRACE]


def _entry(heading: Any, text: Any, course: Any) -> tuple[str, str, dict[str, Any] | None]:
    if isinstance(course, dict):
        # The report names the section; this display, shown where the kernel runs,
        # links it to the packaged course here.
        course = {**course, "url": local_course_url(course.get("section"))}
    else:
        course = None
    return str(heading), str(text)[:_MAX_TEXT], course


def _entries(report: dict[str, Any]) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(heading, text, course) for everything the report has to say."""
    entries = []
    for trace in report.get("traces") or []:
        for reason in _reasons_worth_telling(trace):
            heading = f"tf.function {trace.get('function', '?')}"
            entries.append(_entry(heading, reason.get("text", ""), trace.get("course")))
    for change in report.get("variables") or []:
        name, text = change.get("name", "?"), change.get("text", "")
        entries.append(_entry(name, text, change.get("course")))
    error = report.get("error")
    if isinstance(error, dict):
        explanation = error.get("explanation", "")
        entries.append(_entry(error.get("type", "Error"), explanation, error.get("course")))
    for note in report.get("notes") or []:
        course = note.get("course") if isinstance(note, dict) else None
        entries.append(_entry("note", note_text(note), course))
    return [entry for entry in entries if entry[1]]


def _course_title(course: dict[str, Any] | None) -> str | None:
    if isinstance(course, dict) and isinstance(course.get("title"), str):
        return course["title"]
    return None


def _summary(report: dict[str, Any]) -> str:
    summary = report.get("summary")
    return " ".join(summary.split())[:_MAX_SUMMARY] if isinstance(summary, str) else ""


def _plain(summary: str, entries: list[tuple[str, str, dict[str, Any] | None]]) -> str:
    lines = [f"tfcoach: {summary}" if summary else "tfcoach:"]
    for heading, text, course in entries:
        lines.append(f"- {heading}: {text}")
        title = _course_title(course)
        if title:
            url = course.get("url") if isinstance(course, dict) else None
            lines.append(f"  course: {title}" + (f" <{url}>" if isinstance(url, str) else ""))
    return "\n".join(lines)


def _html(summary: str, level: str, entries: list[tuple[str, str, dict[str, Any] | None]]) -> str:
    items = []
    for heading, text, course in entries:
        item = f"<b>{html.escape(heading)}</b>: {html.escape(text)}"
        title = _course_title(course)
        if title:
            url = course.get("url") if isinstance(course, dict) else None
            if isinstance(url, str) and url.startswith(_LINK_SCHEMES):
                item += (
                    f' <a href="{html.escape(url, quote=True)}" target="_blank" '
                    f'rel="noopener noreferrer">Course: {html.escape(title)}</a>'
                )
            else:
                item += f" (course: {html.escape(title)})"
        items.append(f"<li>{item}</li>")
    colour = _LEVEL_COLOURS.get(level, _COACHING_COLOUR)
    heading = "<b>tfcoach</b>" + (f": {html.escape(summary)}" if summary else "")
    return (
        f'<div class="tfcoach-inline-report" style="border-left: 3px solid {colour}; '
        f'padding: 2px 8px; margin: 4px 0;">{heading}<ul style="margin: 2px 0;">'
        + "".join(items)
        + "</ul></div>"
    )


def render(report: dict[str, Any]) -> dict[str, Any] | None:
    """The MIME bundle for ``report``; None when the cell has nothing to say."""
    if report.get("level") == LEVEL_NONE:
        return None
    entries = _entries(report)
    if not entries:
        return None
    level = report.get("level")
    summary = _summary(report)
    return {
        "text/plain": _plain(summary, entries),
        "text/html": _html(summary, level if isinstance(level, str) else "", entries),
        REPORT_MIME: report,
    }


def show(report: dict[str, Any]) -> bool:
    """Display ``report`` under the running cell's output, if it has something to say."""
    bundle = render(report)
    if bundle is None:
        return False
    from IPython.display import display

    display(bundle, raw=True)
    return True
