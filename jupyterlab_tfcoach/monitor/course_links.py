"""Course links for reports: ``course`` objects as in the CLI (see docs/report.md)."""

from __future__ import annotations

from typing import Any

_CACHE: dict[str, dict[str, str] | None] = {}


def course_link(section_id: str) -> dict[str, Any] | None:
    """``{"module", "section", "title", "url"}`` for a section; None if it is unknown.

    Looked up once per section: the course is packaged data that does not change
    while a kernel runs. A copy is returned so a caller cannot alter the cache.
    """
    if section_id not in _CACHE:
        try:
            from jupyterlab_tfcoach.course import course_ref

            _CACHE[section_id] = course_ref(section_id)
        except Exception:
            _CACHE[section_id] = None
    found = _CACHE[section_id]
    return dict(found) if found is not None else None
