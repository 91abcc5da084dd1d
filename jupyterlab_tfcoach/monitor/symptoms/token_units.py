"""N-grams of one unit given a name that says the other: word n-grams named "char".

``char_trigrams = tf.strings.ngrams(tf.strings.split(texts), 3, separator="")`` joins
three WORDS ("themovieplot"): ``tf.strings.split`` cuts text at whitespace, so the
n-grams are of words whatever the name says; character n-grams need the characters,
``tf.strings.bytes_split`` (or ``unicode_split``). The mirror slip, ``word_bigrams`` made
from ``bytes_split``, joins characters. Nothing raises; the features are of the wrong
unit.

Read from each scope of a completed cell (its top level, each ``def``): a statement whose
target name says a unit (``char``, ``chars``, ``character``; ``word``, ``words``) bound to
an ``ngrams`` call (``tf.strings``, ``keras.ops``...) whose data argument is, directly or
through a name the scope bound to it, a split of the other unit: ``split`` at whitespace
(no ``sep``) for words;
``bytes_split``, ``unicode_split``, ``unicode_chars`` for characters. The fix is the
statement with the split of the unit the name says. Source only.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    dotted_name,
    function_scopes,
    parsed_source,
)

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 30_000
_CHAR_WORDS = frozenset({"char", "chars", "character", "characters", "byte", "bytes"})
_WORD_WORDS = frozenset({"word", "words"})
_CHAR_SPLITS = frozenset({"bytes_split", "unicode_split", "unicode_chars"})


def _unit(names: list[str]) -> str | None:
    words = {w for name in names for w in identifier_words(name)}
    if words & _CHAR_WORDS and not words & _WORD_WORDS:
        return "char"
    if words & _WORD_WORDS and not words & _CHAR_WORDS:
        return "word"
    return None


def _split_unit(node: ast.expr, bound: Mapping[str, ast.Call]) -> tuple[str, ast.Call] | None:
    if isinstance(node, ast.Name) and node.id in bound:
        node = bound[node.id]
    if not isinstance(node, ast.Call):
        return None
    name = call_name(node)
    if name == "split" and "strings" in (dotted_name(node.func) or ""):
        if len(node.args) != 1 or any(k.arg in ("sep", "maxsplit") for k in node.keywords):
            return None  # cut at another separator: fields, not words
        return "word", node
    if name in _CHAR_SPLITS:
        return "char", node
    return None


def _scopes(tree: ast.Module) -> list[tuple[str | None, list[ast.stmt]]]:
    """The cell's top level (no name) and each ``def`` in it: (its name, its body)."""
    return [(getattr(scope, "name", None), scope.body) for scope in function_scopes(tree)]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for n-grams of the unit the name does not say, if any."""
    if len(source) > MAX_CELL_CHARS or "ngrams" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for function, body in _scopes(tree):
        bound: dict[str, ast.Call] = {}
        for statement in body:
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            target = statement.targets[0]
            if not isinstance(target, ast.Name):
                continue
            value = statement.value
            if isinstance(value, ast.Call) and call_name(value) == "ngrams" and value.args:
                said = _unit([target.id])
                split = _split_unit(value.args[0], bound)
                if said is not None and split is not None and split[0] != said:
                    note = _note(source, function, statement, target.id, said, split[1])
                    if note is not None:
                        return [note]
            bound.pop(target.id, None)
            if isinstance(value, ast.Call) and _split_unit(value, {}) is not None:
                bound[target.id] = value
    return []


def _note(
    source: str,
    function: str | None,
    statement: ast.Assign,
    name: str,
    said: str,
    split: ast.Call,
) -> Note | None:
    line = ast.get_source_segment(source, statement)
    split_text = ast.get_source_segment(source, split)
    if line is None or split_text is None or "\n" in line or not split.args:
        return None
    data = ast.get_source_segment(source, split.args[0])
    if data is None:
        return None
    root = (dotted_name(split.func) or "tf.strings.split").rsplit(".", 1)[0]
    wanted = f"{root}.bytes_split({data})" if said == "char" else f"{root}.split({data})"
    where = f" in `{function}`" if function else " of this cell"
    other = "words" if said == "char" else "characters"
    unit = "characters" if said == "char" else "words"
    data_node = statement.value.args[0]  # type: ignore[attr-defined]
    start = data_node.col_offset - statement.col_offset
    stop = (data_node.end_col_offset or 0) - statement.col_offset
    raw = line.encode("utf-8")
    if data_node.lineno != statement.lineno or data_node.end_lineno != statement.lineno:
        return None
    fixed_line = (raw[:start] + wanted.encode("utf-8") + raw[stop:]).decode("utf-8")
    fix = f"`{fixed_line}`"
    text = (
        f"`{line}` (line {statement.lineno}{where}) makes n-grams of {other}, but `{name}` "
        f"says {unit}: `{split_text}` cuts the text into {other}, and `ngrams` joins "
        f"consecutive {other}, whatever the name says. Nothing raises; the features are of "
        f"the wrong unit. Split into {unit} first: {fix}."
    )
    return reports.note(text, SECTION)
