"""Course section ids -> titles and URLs, honouring the ``courseBaseUrl`` setting."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

from jupyterlab_tfcoach.course import UnknownSectionError, course_ref

log = logging.getLogger(__name__)


@lru_cache(maxsize=512)
def _ref(section_id: str, base_url: str | None) -> tuple[tuple[str, str], ...] | None:
    try:
        return tuple(course_ref(section_id, base_url).items())
    except UnknownSectionError:
        log.warning("unknown course section %r", section_id)
        return None


@dataclass(frozen=True)
class CourseLinks:
    base_url: str | None = None

    def ref(self, section_id: str) -> dict[str, str] | None:
        """``{"module", "section", "title", "url"}`` or None for an unknown section."""
        found = _ref(section_id, self.base_url or None)
        return dict(found) if found is not None else None

    def url(self, section_id: str) -> str | None:
        ref = self.ref(section_id)
        return ref["url"] if ref else None

    def title(self, section_id: str) -> str | None:
        ref = self.ref(section_id)
        return ref["title"] if ref else None
