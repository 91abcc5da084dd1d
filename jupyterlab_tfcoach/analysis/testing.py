"""Helpers for testing rules: run one rule, read ranges, apply and re-parse fixes."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence

from jupyterlab_tfcoach.analysis import Config, Finding, analyze_cells, analyze_source
from jupyterlab_tfcoach.analysis.fixes import apply_edits


def only(code: str) -> Config:
    return Config.from_options(select=[code])


def check(source: str, code: str) -> list[Finding]:
    """Findings of one rule for a (dedented) source."""
    return analyze_source(textwrap.dedent(source), only(code))


def check_cells(cells: Sequence[str], code: str) -> list[Finding]:
    return analyze_cells([textwrap.dedent(cell) for cell in cells], only(code))


def span(finding: Finding) -> tuple[int, int, int, int]:
    return (finding.line, finding.column, finding.end_line, finding.end_column)


def fixed(source: str, finding: Finding) -> str:
    """The source with the finding's fix applied; fails if the result does not parse."""
    assert finding.fix is not None, f"{finding.code} has no fix"
    result = apply_edits(textwrap.dedent(source), finding.fix.edits)
    ast.parse(result)
    return result
