"""What a rule's ``check(ctx)`` gets: the shared model plus finding/fix helpers."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import TYPE_CHECKING

from jupyterlab_tfcoach.analysis.bindings import Bindings
from jupyterlab_tfcoach.analysis.findings import Edit, Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.imports import TFImports
from jupyterlab_tfcoach.analysis.model import Model, Scope, Site
from jupyterlab_tfcoach.analysis.positions import Range, SourceLines, shorten
from jupyterlab_tfcoach.analysis.traced import TraceReach
from jupyterlab_tfcoach.analysis.values import Value

if TYPE_CHECKING:
    from jupyterlab_tfcoach.analysis.rules.base import Rule


class RuleContext:
    def __init__(
        self,
        source: SourceLines,
        model: Model,
        rules: Mapping[str, Rule],
        cell_first_lines: tuple[int, ...] = (),
    ) -> None:
        self.source = source
        self.model = model
        self.bindings = Bindings(model)
        self._rules = rules
        # The line each notebook cell starts on in the joined source; empty for a file.
        self.cell_first_lines = cell_first_lines

    @property
    def imports(self) -> TFImports:
        return self.model.imports

    # -- lookups shared by rules ----------------------------------------------

    def calls_to(self, canonical: str) -> list[Site]:
        """Calls whose callee is the TensorFlow name ``canonical`` (``tf.Variable``)."""
        return self.bindings.names.calls_to(canonical)

    def calls_named(self, *names: str) -> list[Site]:
        """Calls ``name(...)`` or ``obj.name(...)`` for any of ``names``, in source order."""
        if len(names) == 1:
            return self.model.calls_by_name.get(names[0], [])
        found = [site for name in names for site in self.model.calls_by_name.get(name, ())]
        found.sort(key=lambda site: (site.node.lineno, site.node.col_offset))  # type: ignore[attr-defined]
        return found

    def value(self, node: ast.AST, site: Site) -> Value:
        return self.bindings.infer(node, site.scope, site.path)

    def tf_function_body(self, scope: Scope) -> Scope | None:
        return self.bindings.traced.tf_function_body(scope)

    def trace_reach(self, scope: Scope) -> TraceReach | None:
        """The tf.function whose trace runs ``scope``'s code, and the helper it is in, if any."""
        return self.bindings.traced.trace_reach(scope)

    def traced_scopes(self) -> dict[Scope, TraceReach]:
        """``trace_reach`` for every scope that has one: for loops over every call."""
        return self.bindings.traced.traced_scopes()

    def tf_ref(self, canonical: str) -> str | None:
        """How this file spells a TensorFlow name (``t.print``), None if it cannot."""
        return self.imports.reference(canonical)

    # -- text and positions ---------------------------------------------------

    def range_of(self, node: ast.AST) -> Range:
        return self.source.node_range(node)

    def text(self, node: ast.AST) -> str:
        return self.source.segment(node)

    def short(self, node: ast.AST, limit: int = 60) -> str:
        """The node's source for a one-line message."""
        return shorten(self.text(node), limit)

    # -- results --------------------------------------------------------------

    def replace(self, where: ast.AST | Range, new_text: str) -> Edit:
        span = where if isinstance(where, Range) else self.range_of(where)
        return Edit(span.line, span.column, span.end_line, span.end_column, new_text)

    def insert_after(self, node: ast.AST, new_text: str) -> Edit:
        span = self.range_of(node)
        return Edit(span.end_line, span.end_column, span.end_line, span.end_column, new_text)

    def finding(
        self,
        code: str,
        where: ast.AST | Range,
        message: str,
        fix: Fix | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        """A finding of rule ``code``; ``severity`` overrides the rule's default for this one
        (a milder case of the same pitfall)."""
        rule = self._rules[code]
        span = where if isinstance(where, Range) else self.range_of(where)
        return Finding(
            code=rule.code,
            name=rule.name,
            severity=rule.severity if severity is None else severity,
            message=message,
            line=span.line,
            column=span.column,
            end_line=span.end_line,
            end_column=span.end_column,
            section_id=rule.section,
            fix=fix,
        )
