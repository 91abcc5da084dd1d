"""Output formats of ``tfcoach check``: text for people, JSON and SARIF for tools.

Every formatter takes the same :class:`CheckResult` and returns the whole
output as one string, so the CLI decides where it goes and tests compare it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.course import UnknownSectionError
from jupyterlab_tfcoach.course.links import CourseLinks


@dataclass(frozen=True)
class InputProblem:
    """A file that could not be checked (missing, not UTF-8, broken JSON, bad syntax)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class RuleDescription:
    """What a formatter needs to know about a rule, independent of the rule registry."""

    code: str
    name: str
    severity: Severity
    summary: str
    docs: str
    section_id: str


@dataclass(frozen=True)
class CheckResult:
    """Everything one ``tfcoach check`` run found, in the order it should be shown.

    ``course_base_urls`` maps a finding's path to the course base URL configured
    for that file, because each file may sit under a different ``pyproject.toml``;
    rule descriptions (SARIF ``helpUri``) use ``default_course_base_url``.
    """

    findings: tuple[Finding, ...]
    # Files found and opened, including those that then failed with an input error
    # (a notebook with one broken cell is still checked in its other cells).
    files_examined: int
    problems: tuple[InputProblem, ...] = ()
    rules: tuple[RuleDescription, ...] = ()
    course_base_urls: dict[str, str | None] = field(default_factory=dict)
    default_course_base_url: str | None = None

    def course_for(self, finding: Finding) -> dict[str, str]:
        base_url = self.course_base_urls.get(finding.path or "", self.default_course_base_url)
        return _known(CourseLinks(base_url).ref(finding.section_id), finding.section_id)

    def course_for_rule(self, rule: RuleDescription) -> dict[str, str]:
        links = CourseLinks(self.default_course_base_url)
        return _known(links.ref(rule.section_id), rule.section_id)


def _known(ref: dict[str, str] | None, section_id: str) -> dict[str, str]:
    if ref is None:  # a rule names a section the course lacks: a bug tests catch
        raise UnknownSectionError(section_id)
    return ref


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
