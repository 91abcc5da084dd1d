"""Text stripped to lower-case letters before it is lower-cased: the capitals are deleted.

``tf.strings.regex_replace(texts, r"[^a-z ]", "")`` removes every character outside
``a-z`` and space. Run before ``tf.strings.lower``, upper-case letters are outside that
class: "Great" becomes "reat", "WOW" disappears, and the vocabulary fills with broken
words. The same holds for ``re.sub(r"[^a-z0-9\\s]", "", s)`` followed by ``.lower()``.
Nothing raises.

Read from each scope of a completed cell (its top level, each ``def``), in order: a
``regex_replace`` (``tf.strings``) or ``re.sub`` whose pattern is a string literal with a
negated character class that admits ``a-z`` but not ``A-Z`` (no ``(?i)``, no ``flags``),
whose input is not itself lower-cased (a ``lower``/``casefold`` call, or a name the scope
bound to one), when the scope lower-cases afterwards (a later ``lower``/``casefold`` call,
or one around the replacement): the learner meant case-insensitive text. The fix is the
replacement given its input lower-cased (``tf.strings.lower(texts)``, ``s.lower()``).
Source only.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    dotted_name,
    function_scopes,
    parsed_source,
    scope_statements,
)

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 30_000
_LOWERS = frozenset({"lower", "casefold"})
_NEGATED_CLASS = re.compile(r"\[\^((?:\\.|[^\]\\])*)\]")


def _drops_capitals(pattern: str) -> bool:
    """A negated class that keeps ``a-z`` and not ``A-Z``: it deletes capitals."""
    if "(?i" in pattern:
        return False
    for match in _NEGATED_CLASS.finditer(pattern):
        inside = match.group(1)
        if "a-z" in inside and "A-Z" not in inside and "\\w" not in inside:
            return True
    return False


def _replacement(node: ast.Call) -> tuple[ast.expr, ast.expr, str] | None:
    """``(input, pattern node, kind)`` for a regex replacement that drops capitals."""
    name = call_name(node)
    if name == "regex_replace":
        text = node.args[0] if node.args else _keyword(node, "input")
        pattern = node.args[1] if len(node.args) > 1 else _keyword(node, "pattern")
        kind = "tf"
    elif name == "sub" and (dotted_name(node.func) or "").startswith("re."):
        if any(k.arg == "flags" for k in node.keywords) or len(node.args) > 4:
            return None
        text = node.args[2] if len(node.args) > 2 else _keyword(node, "string")
        pattern = node.args[0] if node.args else _keyword(node, "pattern")
        kind = "re"
    else:
        return None
    if text is None or pattern is None:
        return None
    if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)):
        return None
    if not _drops_capitals(pattern.value):
        return None
    return text, pattern, kind


def _keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def _is_lowered(node: ast.expr, lowered: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in lowered
    return isinstance(node, ast.Call) and call_name(node) in _LOWERS


def _scopes(tree: ast.Module) -> list[tuple[str | None, list[ast.stmt]]]:
    """The cell's top level (no name) and each ``def`` in it: (its name, its body)."""
    return [(getattr(scope, "name", None), scope.body) for scope in function_scopes(tree)]


def _lowers(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and call_name(n) in _LOWERS]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a replacement that deletes capitals before a lower-casing, if any."""
    if len(source) > MAX_CELL_CHARS or "a-z" not in source:
        return []
    if "lower" not in source and "casefold" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for function, body in _scopes(tree):
        statements = list(scope_statements(body))
        # Each statement's lower-casing calls, read once (a later one is looked up per
        # replacement).
        lowers = [_lowers(statement) for statement in statements]
        lowered: set[str] = set()
        for index, statement in enumerate(statements):
            if not any(lowers[index:]):
                break
            later = [(statements[i], lowers[i]) for i in range(index, len(statements))]
            note = _statement_note(source, function, statement, later, lowered)
            if note is not None:
                return [note]
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        lowered.discard(target.id)
                        if _lowers(statement.value):
                            lowered.add(target.id)
    return []


def _statement_note(
    source: str,
    function: str | None,
    statement: ast.stmt,
    rest: list[tuple[ast.stmt, list[ast.Call]]],
    lowered: set[str],
) -> Note | None:
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        found = _replacement(node)
        if found is None:
            continue
        text, pattern, kind = found
        if _is_lowered(text, lowered) or _lowers(text):
            continue
        later = [
            call
            for later_statement, calls in rest
            for call in calls
            if later_statement is not statement or _encloses(call, node)
        ]
        if not later:
            continue
        return _note(source, function, node, text, pattern, kind, later[0])
    return None


def _encloses(outer: ast.AST, inner: ast.AST) -> bool:
    return any(node is inner for node in ast.walk(outer))


def _note(
    source: str,
    function: str | None,
    call: ast.Call,
    text: ast.expr,
    pattern: ast.Constant,
    kind: str,
    lowering: ast.Call,
) -> Note | None:
    call_text = ast.get_source_segment(source, call)
    text_text = ast.get_source_segment(source, text)
    pattern_text = ast.get_source_segment(source, pattern)
    dotted = dotted_name(lowering.func)
    lower_text = dotted if dotted is not None else f".{call_name(lowering)}()"
    kept = next(
        (m.group(1) for m in _NEGATED_CLASS.finditer(pattern.value) if "a-z" in m.group(1)), ""
    )
    if call_text is None or text_text is None or pattern_text is None or "\n" in call_text:
        return None
    if kind == "tf":
        root = (dotted_name(call.func) or "tf.strings.regex_replace").rsplit(".", 1)[0]
        lowered = f"{root}.lower({text_text})" if "." in (dotted_name(call.func) or "") else None
        if lowered is None:
            return None
    else:
        simple = isinstance(text, ast.Name | ast.Call | ast.Attribute | ast.Subscript)
        lowered = f"{text_text}.lower()" if simple else f"({text_text}).lower()"
    if text.lineno != call.lineno or text.end_lineno != call.lineno:
        return None
    line = source.splitlines()[call.lineno - 1].encode("utf-8")
    start = (text.col_offset or 0) - call.col_offset
    stop = (text.end_col_offset or 0) - call.col_offset
    raw = call_text.encode("utf-8")
    if raw[start:stop].decode("utf-8", "replace") != text_text or not line:
        return None
    fixed = (raw[:start] + lowered.encode("utf-8") + raw[stop:]).decode("utf-8")
    where = f" in `{function}`" if function else " of this cell"
    text_out = (
        f"`{call_text}` (line {call.lineno}{where}) deletes every character outside "
        f"`[{kept}]` before `{lower_text}` (line {lowering.lineno}) lower-cases "
        f"the text: upper-case letters are outside that class, so they are deleted, not "
        'lower-cased ("Great" becomes "reat", "WOW" disappears) and the words built '
        "from it are broken. Nothing raises. Lower-case the text before stripping it: "
        f"`{fixed}`."
    )
    return reports.note(text_out, SECTION)
