"""Human-readable output: one compiler-style line per finding, then its course link.

    train.py:12:9: TFC001 `w` is a tf.Variable rebound to a tensor ...
        course: Rebinding a variable to a tensor file:///.../module-03.md#rebinding-variables
        fix: Use `w.assign_sub(...)`
    train.py:30:5: TFC005 tf.function `step` is called with 2 different Python values ...
        course: Retracing file:///.../module-02.md#retracing
        also train.py:31:5: `n` = 2 here

    2 findings in 3 files

Notebook findings name the code cell as text for people does (``cell_label``:
``code cell N``, counted from 1 among code cells; the JSON output's ``cell`` is the
0-based index) before the line, which counts within that cell:
``nb.ipynb:code cell 3:3:5: ...`` is JSON ``"cell": 2``. A
finding's related locations (other places of the same problem) follow it,
indented, one ``also <location>: <message>`` line each.
"""

from __future__ import annotations

from jupyterlab_tfcoach.analysis.findings import Finding, RelatedLocation
from jupyterlab_tfcoach.analysis.notebook import cell_label
from jupyterlab_tfcoach.formats import CheckResult, plural


def _cell_prefix(cell: int | None) -> str:
    return f"{cell_label(cell)}:" if cell is not None else ""


def location(finding: Finding) -> str:
    cell = _cell_prefix(finding.cell)
    return f"{finding.path}:{cell}{finding.line}:{finding.column}"


def related_location(finding: Finding, related: RelatedLocation) -> str:
    """Where a related location is, spelled like a finding's location (same file), so
    editors that jump to ``path:line:column`` jump there too."""
    cell = _cell_prefix(related.cell)
    return f"{finding.path}:{cell}{related.line}:{related.column}"


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
        for related in finding.related:
            lines.append(f"    also {related_location(finding, related)}: {related.message}")
    if lines:
        lines.append("")
    lines.append(summary(result))
    return "\n".join(lines) + "\n"
