"""``--format sarif``: a SARIF 2.1.0 log for code-scanning tools.

Choices worth knowing:

- Columns are code points, as in every tfcoach output, so the run declares
  ``columnKind: unicodeCodePoints`` (SARIF's default is UTF-16 code units).
- Relative paths stay relative to ``%SRCROOT%``, declared in
  ``originalUriBaseIds`` as the working directory; absolute paths become
  ``file://`` URIs.
- SARIF has no notion of notebook cells: a notebook result's region counts
  lines within its code cell, and ``properties.cell`` names that cell
  (0-based code-cell index, as in the JSON output). The same holds for each
  of its ``relatedLocations`` (the other places of one finding, such as the
  other call sites of a function called with several Python values).
- Files that could not be checked are reported as error notifications of the
  invocation, which is then marked unsuccessful.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jupyterlab_tfcoach._version import __version__
from jupyterlab_tfcoach.analysis.findings import Edit, Finding, RelatedLocation, Severity
from jupyterlab_tfcoach.course.links import is_external_url
from jupyterlab_tfcoach.formats import CheckResult, RuleDescription

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SOURCE_ROOT_ID = "%SRCROOT%"

# SARIF has four levels and no "hint"; both of our quiet severities are notes.
SARIF_LEVELS: dict[Severity, str] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "note",
    Severity.HINT: "note",
}

_DOCS_HEADING = re.compile(r"^#+\s*(?P<title>.+?)\s*$", re.M)


def _docs_section(docs: str, title: str) -> str | None:
    """The text under a ``## <title>`` heading of a rule's docs, if present."""
    headings = list(_DOCS_HEADING.finditer(docs))
    for index, heading in enumerate(headings):
        if heading.group("title").strip().lower() == title.lower():
            end = headings[index + 1].start() if index + 1 < len(headings) else len(docs)
            text = docs[heading.end() : end].strip()
            return text or None
    return None


def artifact_location(path: str) -> dict[str, Any]:
    as_path = Path(path)
    if as_path.is_absolute():
        return {"uri": as_path.as_uri()}
    return {"uri": quote(as_path.as_posix()), "uriBaseId": SOURCE_ROOT_ID}


def _region(line: int, column: int, end_line: int, end_column: int) -> dict[str, int]:
    return {
        "startLine": line,
        "startColumn": column,
        "endLine": end_line,
        "endColumn": end_column,
    }


def _replacement(edit: Edit) -> dict[str, Any]:
    return {
        "deletedRegion": _region(edit.line, edit.column, edit.end_line, edit.end_column),
        "insertedContent": {"text": edit.new_text},
    }


def _related_location(
    index: int, related: RelatedLocation, artifact: dict[str, Any]
) -> dict[str, Any]:
    """A SARIF ``relatedLocations`` entry: same file as its result; ``id`` numbers them so a
    result message could link to one; ``properties.cell`` as for the result itself."""
    return {
        "id": index,
        "physicalLocation": {
            "artifactLocation": artifact,
            "region": _region(related.line, related.column, related.end_line, related.end_column),
        },
        "message": {"text": related.message},
        "properties": {"cell": related.cell},
    }


def _shareable(course: dict[str, str]) -> dict[str, str]:
    """A course reference fit for a log that leaves this machine (code scanning): the
    default link is a file:// URL into this installation, meaningless elsewhere and a
    disclosure of its paths, so only a configured http(s) course keeps its URL."""
    if is_external_url(course.get("url", "")):
        return course
    return {key: value for key, value in course.items() if key != "url"}


def _rule_descriptor(rule: RuleDescription, result: CheckResult) -> dict[str, Any]:
    course = _shareable(result.course_for_rule(rule))
    what_it_does = _docs_section(rule.docs, "What it does") or rule.summary
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": what_it_does},
        "help": {"text": rule.docs, "markdown": rule.docs},
        "defaultConfiguration": {"level": SARIF_LEVELS[rule.severity]},
        "properties": {"severity": rule.severity.value, "course": course},
    }
    if "url" in course:
        descriptor["helpUri"] = course["url"]
    return descriptor


def _result(finding: Finding, rule_index: dict[str, int], result: CheckResult) -> dict[str, Any]:
    path = finding.path or ""
    location = artifact_location(path)
    sarif_result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": SARIF_LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": _region(
                        finding.line, finding.column, finding.end_line, finding.end_column
                    ),
                }
            }
        ],
        "properties": {
            "name": finding.name,
            "severity": finding.severity.value,
            "cell": finding.cell,
            "course": _shareable(result.course_for(finding)),
        },
    }
    if finding.related:
        sarif_result["relatedLocations"] = [
            _related_location(index, related, location)
            for index, related in enumerate(finding.related, start=1)
        ]
    if finding.code in rule_index:
        sarif_result["ruleIndex"] = rule_index[finding.code]
    # A notebook's fix regions count lines within a cell, not within the .ipynb JSON that
    # artifactLocation names: a SARIF consumer applying them would corrupt the file.
    if finding.fix is not None and finding.fix.edits and finding.cell is None:
        sarif_result["fixes"] = [
            {
                "description": {"text": finding.fix.description},
                "artifactChanges": [
                    {
                        "artifactLocation": location,
                        "replacements": [_replacement(edit) for edit in finding.fix.edits],
                    }
                ],
            }
        ]
    return sarif_result


def sarif_log(result: CheckResult) -> dict[str, Any]:
    rule_index = {rule.code: index for index, rule in enumerate(result.rules)}
    notifications = [
        {
            "level": "error",
            "message": {"text": problem.message},
            "locations": [
                {"physicalLocation": {"artifactLocation": artifact_location(problem.path)}}
            ],
        }
        for problem in result.problems
    ]
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tfcoach",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule_descriptor(rule, result) for rule in result.rules],
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not result.problems,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "originalUriBaseIds": {
                    SOURCE_ROOT_ID: {"uri": Path.cwd().as_uri().rstrip("/") + "/"}
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(finding, rule_index, result) for finding in result.findings],
            }
        ],
    }


def format_sarif(result: CheckResult) -> str:
    return json.dumps(sarif_log(result), indent=2, ensure_ascii=False) + "\n"
