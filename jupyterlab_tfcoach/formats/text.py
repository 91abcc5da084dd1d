"""Human-readable output: one compiler-style line per finding, then its course link.

    train.py:12:9: TFC001 `w` is a tf.Variable rebound to a tensor ...
        course: Rebinding a variable to a tensor file:///.../module-01.md#rebinding-variables
        fix: Use `w.assign_sub(...)`

    2 findings in 3 files

Notebook findings name the code cell (0-based, as in the JSON output) before
the line, which counts within that cell: ``nb.ipynb:cell 2:3:5: ...``.
"""

from __future__ import annotations

from jupyterlab_tfcoach.analysis.findings import Finding
from jupyterlab_tfcoach.formats import CheckResult, plural


def location(finding: Finding) -> str:
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{finding.path}:{cell}{finding.line}:{finding.column}"


def summary(result: CheckResult) -> str:
    text = f"{plural(len(result.findings), 'finding')} in {plural(result.files_examined, 'file')}"
    if result.problems:
        text += f"; {plural(len(result.problems), 'input error')} (see above)"
    return text


def format_text(result: CheckResult) -> str:
    lines: list[str] = []
    for finding in result.findings:
        course = result.course_for(finding)
        lines.append(f"{location(finding)}: {finding.code} {finding.message}")
        lines.append(f"    course: {course['title']} {course['url']}")
        if finding.fix is not None:
            lines.append(f"    fix: {finding.fix.description}")
    if lines:
        lines.append("")
    lines.append(summary(result))
    return "\n".join(lines) + "\n"
