"""Expressions nested too deeply to check are cut, one statement at a time.

Valid Python may nest an expression far deeper than the analysis can walk: ``lambda:
lambda: ...`` 2,900 times compiles. The model walk, the rules and ``ast``'s own recursive
helpers they use (``ast.dump``, ``ast.unparse``) recurse once to three times per level,
so past a few hundred levels they would exceed Python's recursion limit, at a depth that
depends on how deep the calling thread's stack already is. Instead, before the model
walks a statement's expressions (``Model._walk_statements``), every expression (or
``match`` pattern) nested more than ``MAX_NESTING`` levels deep in it is replaced by
``...`` (a pattern by the wildcard ``_``), and the statement is reported as an input
problem (``SyntaxProblem`` of kind ``DEPTH``): the rest of the code is still checked, and
the limit is the same in every thread of every front end.

A level is a node that is not a statement (a ``lambda``'s default values are two levels
below it, under its ``arguments``). Statements nest only as deep as indentation allows
(100 levels), and the model walks ``elif`` chains in a loop, so they do not count. Leaves
(names, constants) are never cut: they nest nothing.

The check is cheap: every level takes at least one character of the source (``-x``,
``x.a``), but for a few that come with several (``arguments`` with ``lambda x=``), so a
node whose lines hold at most ``(limit - depth) / 2`` characters cannot reach the limit.
Most statements cost two line numbers; only long ones (and their long parts) are walked.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from itertools import accumulate
from typing import NamedTuple

from jupyterlab_tfcoach.analysis.errors import MAX_NESTING

# Fields that never hold a child node (names, operators, flags), here and in the model.
NOT_CHILD_FIELDS = frozenset(
    {
        "ctx", "op", "ops", "type_comment", "id", "attr", "arg", "name", "asname", "module",
        "rest", "conversion", "kind", "str", "is_async", "level",
    }
)  # fmt: skip
# Statement lists: walked by the model, statement by statement, each checked on its own.
_STATEMENT_LISTS = frozenset({"body", "orelse", "finalbody"})
# Nodes without a position: their parts are looked at one by one.
_UNPLACED = frozenset({ast.arguments, ast.comprehension, ast.withitem, ast.match_case})
# Statements whose expressions (decorators, test, iterable, items...) all come before the
# first statement of their body: when those lines are short, so are the expressions.
_DECORATED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_HEADED = _DECORATED | {ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith}
_LEAVES = (ast.Name, ast.Constant)
_CUT = (ast.expr, ast.pattern)


class _Fields(NamedTuple):
    lists: tuple[str, ...]  # list fields that may hold parts (not statement lists)
    singles: tuple[str, ...]  # fields holding one node or None


_FIELDS: dict[type, _Fields] = {}


def _fields(node: ast.AST) -> _Fields:
    """The fields of ``node``'s type that may hold parts (built from the first node of each
    type seen: list fields are always lists)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        lists, singles = [], []
        holds_statements = not isinstance(node, ast.expr)  # ``IfExp.body`` is an expression
        for name in node._fields:
            if name in NOT_CHILD_FIELDS or (holds_statements and name in _STATEMENT_LISTS):
                continue
            (lists if isinstance(getattr(node, name, None), list) else singles).append(name)
        fields = _Fields(tuple(lists), tuple(singles))
        _FIELDS[type(node)] = fields
    return fields


def line_starts(lines: Sequence[str]) -> list[int]:
    """``starts[n]``: the characters of lines 1 to ``n`` (line breaks not counted), for
    ``LineSpans``; one more entry for a position just past the last line."""
    starts = [0, *accumulate(map(len, lines))]
    starts.append(starts[-1])
    return starts


class LineSpans:
    """How many characters a node's lines hold at most: from the source's lines when known
    (``line_starts``), else from the node's columns (a node on several lines counts as
    long then: it is walked, which is only slower)."""

    __slots__ = ("starts",)

    def __init__(self, starts: list[int] | None) -> None:
        self.starts = starts

    def at_most(self, node: ast.AST, characters: int) -> bool:
        """Whether ``node`` spans at most ``characters`` characters."""
        first: int = node.lineno  # type: ignore[attr-defined]
        last: int = node.end_lineno  # type: ignore[attr-defined]
        starts = self.starts
        if starts is not None:
            return starts[last] - starts[first - 1] + (last - first) <= characters
        return first == last and node.end_col_offset - node.col_offset <= characters  # type: ignore[attr-defined]

    def may_nest_too_deep(self, statement: ast.stmt, limit: int = MAX_NESTING) -> bool:
        """Whether the lines of ``statement``'s own parts (for a compound statement, from
        its decorators to the first line of its body) may hold an expression nested more
        than ``limit`` levels: run for every statement the model walks."""
        starts = self.starts
        if starts is None:
            return not self.at_most(statement, limit // 2)
        first: int = statement.lineno
        statement_type = type(statement)
        if statement_type in _HEADED:
            if statement_type in _DECORATED and statement.decorator_list:  # type: ignore[attr-defined]
                first = statement.decorator_list[0].lineno  # type: ignore[attr-defined]
            last: int = statement.body[0].lineno  # type: ignore[attr-defined]
        else:
            last = statement.end_lineno  # type: ignore[assignment]
        return starts[last] - starts[first - 1] + (last - first) > limit // 2


def cut_statement(
    statement: ast.stmt, spans: LineSpans, limit: int = MAX_NESTING
) -> ast.AST | None:
    """Cut the parts of ``statement`` (not its nested statements: each of those is checked
    when the model walks it) nested more than ``limit`` levels deep; return the first node
    cut (in source order), or None when nothing was. Worth calling only when
    ``spans.may_nest_too_deep(statement)``.

    Iterative: it never recurses, however deep the expression.
    """
    cut: list[ast.AST] = []
    parts: list[tuple[ast.AST, int]] = [(statement, 0)]
    while parts:
        node, depth = parts.pop()
        fields = _FIELDS.get(type(node)) or _fields(node)
        child_depth = depth + 1
        room = (limit - child_depth) // 2
        for name in fields.lists:
            children = getattr(node, name)
            for index, child in enumerate(children):
                if isinstance(child, ast.stmt) or not isinstance(child, ast.AST):
                    continue  # an ``except`` clause's body; ``global``'s names, ``{**d}``'s None
                if child_depth > limit and isinstance(child, _CUT):
                    if not isinstance(child, _LEAVES):
                        children[index] = _placeholder(child)
                        cut.append(child)
                elif type(child) in _UNPLACED or not spans.at_most(child, room):
                    parts.append((child, child_depth))
        for name in fields.singles:
            child = getattr(node, name, None)
            if not isinstance(child, ast.AST):
                continue
            if child_depth > limit and isinstance(child, _CUT):
                if not isinstance(child, _LEAVES):
                    setattr(node, name, _placeholder(child))
                    cut.append(child)
            elif type(child) in _UNPLACED or not spans.at_most(child, room):
                parts.append((child, child_depth))
    if not cut:
        return None
    return min(cut, key=lambda node: (node.lineno, node.col_offset))  # type: ignore[attr-defined]


def _placeholder(node: ast.AST) -> ast.AST:
    stand_in: ast.AST = ast.MatchAs() if isinstance(node, ast.pattern) else ast.Constant(...)
    return ast.copy_location(stand_in, node)
