"""Errors the analysis API raises."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jupyterlab_tfcoach.analysis.findings import Finding


# Python 3.11+ refuses to parse an expression (``1+1+...``, ``a.b.c...``) or an
# ``elif`` chain nested a few thousand levels deep (RecursionError / MemoryError):
# the analysis reports that as this input error, on every front end.
TOO_DEEP = (
    "too deeply nested to parse: an expression or elif chain nests deeper than "
    "Python's parser allows (a few thousand levels)"
)


class AnalysisSyntaxError(SyntaxError):
    """The source is not valid Python; ``lineno`` and ``offset`` (characters) are 1-based."""

    def __init__(self, message: str, lineno: int | None, offset: int | None) -> None:
        super().__init__(message)
        self.msg = message
        self.lineno = lineno
        self.offset = offset

    def __str__(self) -> str:
        if self.lineno:
            return f"syntax error at line {self.lineno}, column {self.offset or 1}: {self.msg}"
        return f"syntax error: {self.msg}"


class AnalysisInputError(Exception):
    """A file that cannot be analysed: unreadable, not UTF-8, invalid notebook, bad syntax.

    ``findings`` holds what could still be found (a notebook whose other cells
    were analysed), so a CLI can report both.
    """

    def __init__(self, path: str, problem: str, findings: Sequence[Finding] = ()) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem
        self.findings = list(findings)
