"""Output formats of ``tfcoach check``: text for people, JSON and SARIF for tools.

Every formatter takes the same :class:`CheckResult` and returns the whole
output as one string, so the CLI decides where it goes and tests compare it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.course import course_ref


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
    # course_ref resolves a file path per call: thousands of findings share a few sections.
    _course_refs: dict[tuple[str, str | None], dict[str, str]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def course_for(self, finding: Finding) -> dict[str, str]:
        base_url = self.course_base_urls.get(finding.path or "", self.default_course_base_url)
        key = (finding.section_id, base_url)
        if key not in self._course_refs:
            self._course_refs[key] = course_ref(finding.section_id, base_url)
        return dict(self._course_refs[key])  # a copy: the caller may change it

    def course_for_rule(self, rule: RuleDescription) -> dict[str, str]:
        return course_ref(rule.section_id, self.default_course_base_url)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
