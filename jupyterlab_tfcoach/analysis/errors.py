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

# Valid Python can nest expressions far deeper than the analysis walks (``lambda: lambda:
# ...`` 2,900 times compiles): the model walk, the rules, and ``ast``'s own helpers they
# use recurse up to three times per level, so past a few hundred levels they would exceed
# Python's recursion limit, at a depth that depends on the thread's stack. Before the model
# walks a statement, its expressions nested deeper than ``MAX_NESTING`` are cut
# (``nesting.py``): the rest of the code is checked, and the cut is this input problem, on
# every front end. 200 is the depth of brackets Python's own parser allows, and far beyond
# real code; at it the analysis needs about 520 of Python's 1,000 frames.
MAX_NESTING = 200
TOO_DEEP_TO_CHECK = (
    f"too deeply nested to check: an expression nests more than {MAX_NESTING} levels deep "
    f"(lambda: lambda: ..., or a chain of over {MAX_NESTING} operators, calls or subscripts); "
    "it was left out of the analysis, the code around it was checked"
)


def too_deep_for(part: str) -> str:
    """The problem of an analysis that exceeded Python's recursion limit (or memory) anyway:
    ``part`` (the model, a rule) stopped, its findings are missing."""
    return (
        f"too deeply nested to check: {part} exceeded Python's recursion limit or memory, "
        "so its findings are missing"
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


class AnalysisDepthError(AnalysisSyntaxError):
    """Valid Python nested deeper than the analysis goes (``MAX_NESTING``), or an analysis
    that exceeded Python's recursion limit anyway: ``findings`` holds what the rest of the
    code gave, ``lineno``/``offset`` (characters) where the first expression was left out."""

    def __init__(
        self,
        message: str,
        lineno: int | None,
        offset: int | None,
        findings: Sequence[Finding] = (),
    ) -> None:
        super().__init__(message, lineno, offset)
        self.findings = list(findings)

    def __str__(self) -> str:
        if self.lineno:
            return f"line {self.lineno}, column {self.offset or 1}: {self.msg}"
        return self.msg


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
