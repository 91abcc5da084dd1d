"""Course links, the one resolver every front end uses: a section id and a course base
URL -> the ``course`` object of findings, reports and hover cards.

The base URL is whatever the front end was configured with (``[tool.tfcoach]``
``course-base-url``, ``c.TfCoach.course_base_url``, the editor's ``courseBaseUrl``),
already checked by ``checked_base_url``; ``None`` means the packaged course files.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from jupyterlab_tfcoach.course import UnknownSectionError, course_ref

_EXTERNAL_SCHEMES = ("http://", "https://")


def is_external_url(url: str) -> bool:
    """Whether a course link leaves this machine's files (a configured web course)."""
    return url.lower().startswith(_EXTERNAL_SCHEMES)


@lru_cache(maxsize=1024)
def _ref(section_id: str, base_url: str | None) -> tuple[tuple[str, str], ...] | None:
    # Resolving a packaged link reads the install path each time: many findings and
    # reports share a few sections, so each (section, base) is resolved once.
    try:
        return tuple(course_ref(section_id, base_url).items())
    except UnknownSectionError:
        return None


@dataclass(frozen=True)
class CourseLinks:
    """The links of one front end's configuration."""

    base_url: str | None = None

    def ref(self, section_id: str) -> dict[str, str] | None:
        """``{"module", "section", "title", "url"}``, or None for an unknown section."""
        found = _ref(section_id, self.base_url or None)
        return dict(found) if found is not None else None  # a copy the caller may change

    def url(self, section_id: str) -> str | None:
        ref = self.ref(section_id)
        return ref["url"] if ref else None

    def title(self, section_id: str) -> str | None:
        ref = self.ref(section_id)
        return ref["title"] if ref else None
