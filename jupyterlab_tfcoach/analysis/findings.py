"""The one shape every adapter (CLI, language server, HTTP) consumes.

Positions are 1-based lines and 1-based *character* columns (code points, not
UTF-8 bytes). ``end_column`` points one past the last character, so a finding
on ``print(x)`` at the start of line 3 is ``line=3, column=1, end_column=9``.
Adapters convert: LSP uses 0-based UTF-16 units, SARIF 1-based code points.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions (same convention as Finding)."""

    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "new_text": self.new_text,
        }


@dataclass(frozen=True)
class Fix:
    description: str
    edits: tuple[Edit, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "edits": [e.to_json() for e in self.edits],
        }


@dataclass(frozen=True)
class RelatedLocation:
    """Another place that belongs to the same finding (same file, same position convention).

    TFC005 reports a function called with several Python values once, at the first
    call site; the other call sites come along as related locations, each with a
    short message saying what happens there.
    """

    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    cell: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "cell": self.cell,
            "message": self.message,
        }


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    line: int
    column: int
    end_line: int
    end_column: int
    section_id: str
    fix: Fix | None = None
    cell: int | None = None
    path: str | None = None
    related: tuple[RelatedLocation, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def with_location(self, **changes: Any) -> Finding:
        return replace(self, **changes)

    def to_json(self, course_ref: dict[str, str]) -> dict[str, Any]:
        """The CLI/HTTP JSON object of docs/findings.md; ``course_ref`` comes from
        ``jupyterlab_tfcoach.course.course_ref(section_id, base_url)``."""
        return {
            "path": self.path,
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "cell": self.cell,
            "course": course_ref,
            "fix": self.fix.to_json() if self.fix else None,
            "related": [location.to_json() for location in self.related],
        }
