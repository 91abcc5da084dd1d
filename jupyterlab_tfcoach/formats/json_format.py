"""``--format json``: one JSON array of the finding objects of docs/findings.md."""

from __future__ import annotations

import json

from jupyterlab_tfcoach.formats import CheckResult


def format_json(result: CheckResult) -> str:
    objects = [finding.to_json(result.course_for(finding)) for finding in result.findings]
    # ensure_ascii=False keeps messages that quote non-ASCII source readable;
    # stdout is UTF-8 (the CLI reconfigures it).
    return json.dumps(objects, indent=2, ensure_ascii=False) + "\n"
