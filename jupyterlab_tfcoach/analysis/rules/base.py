"""The shape of a rule, built from its module's constants."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from jupyterlab_tfcoach.analysis.findings import Finding, Severity

if TYPE_CHECKING:
    from jupyterlab_tfcoach.analysis.context import RuleContext

DOC_HEADINGS = (
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
    "## Course module",
)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    section: str  # course section id (ARCHITECTURE.md)
    docs: str  # Markdown with DOC_HEADINGS, in that order
    check: Callable[[RuleContext], Iterable[Finding]]

    @property
    def summary(self) -> str:
        """The first sentence of "What it does", for rule listings."""
        body = self.docs.split("## What it does", 1)[-1].split("\n## ", 1)[0]
        # The first paragraph only: a list after "three patterns:" is detail, not summary.
        first_paragraph = body.strip().split("\n\n", 1)[0]
        text = " ".join(first_paragraph.split())
        # A sentence ends at a period followed by a capital letter or the end ("e.g." does not).
        match = re.match(r"(.+?\.)(?=\s+[A-Z]|$)", text)
        sentence = match.group(1) if match else text
        return sentence[:-1] + "." if sentence.endswith(":") else sentence

    @classmethod
    def from_module(cls, module: ModuleType) -> Rule:
        return cls(
            code=module.CODE,
            name=module.NAME,
            severity=module.SEVERITY,
            section=module.SECTION,
            docs=module.DOCS.strip() + "\n",
            check=module.check,
        )
