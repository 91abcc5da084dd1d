"""Course sections for reports: ``course`` objects naming a section (docs/report.md).

A report names the section (``{"module", "section", "title"}``) and carries no link:
the server that stores and forwards reports makes links with its own
``c.TfCoach.course_base_url``, and a path of the kernel's machine means nothing to a
browser elsewhere. Only the inline display, which runs where the kernel runs, links
to the packaged course itself (``local_course_url``).
"""

from __future__ import annotations

from typing import Any, TypedDict


class CourseSection(TypedDict):
    """The course section that teaches a report entry (the server adds ``url``)."""

    module: str
    section: str
    title: str


_CACHE: dict[str, CourseSection | None] = {}


def course_link(section_id: str) -> CourseSection | None:
    """``{"module", "section", "title"}`` for a section; None if it is unknown.

    Looked up once per section: the course is packaged data that does not change
    while a kernel runs. A copy is returned so a caller cannot alter the cache.
    """
    if section_id not in _CACHE:
        try:
            from jupyterlab_tfcoach.course import course_ref

            ref = course_ref(section_id)
            _CACHE[section_id] = CourseSection(
                module=ref["module"], section=ref["section"], title=ref["title"]
            )
        except Exception:
            _CACHE[section_id] = None
    found = _CACHE[section_id]
    return CourseSection(**found) if found is not None else None


def local_course_url(section_id: Any) -> str | None:
    """The packaged course's link for a section, for displays in this kernel only."""
    if not isinstance(section_id, str):
        return None
    try:
        from jupyterlab_tfcoach.course.links import CourseLinks  # cached per section

        return CourseLinks().url(section_id)
    except Exception:
        return None
