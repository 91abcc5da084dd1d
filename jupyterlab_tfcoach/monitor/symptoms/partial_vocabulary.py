"""A vocabulary built from part of the text, so that the rest's tokens become [UNK].

``vocab = sorted(set(text[:2000]))`` ("the first part is enough") or
``lookup.adapt(sentences[:500])`` (a sample, to adapt faster) leaves out every character
or word that first appears later: a ``StringLookup``/``TextVectorization`` built on that
vocabulary maps each of them to its one out-of-vocabulary id, the same for all of them.
The model never sees them apart (and a next-character model can never predict them),
and nothing raises.

Found after a cell that completed (a cell with no ``set(``, ``unique(``, ``Counter(`` or
``.adapt(`` costs a substring test), from its top-level statements: ``set(T[a:b])``
(inside ``sorted``/``list`` too), ``np.unique(T[a:b])`` or ``Counter(T[a:b])``, or
``L.adapt(T[a:b])`` with ``L`` a ``StringLookup``, ``IntegerLookup`` or
``TextVectorization`` without ``max_tokens`` (a capped vocabulary leaves rare tokens out
on purpose) and, for ``TextVectorization``, its default standardisation and whitespace
split (done here the same way in Python); ``T`` names a ``str`` (characters, at most
``MAX_CHARS``), a list or tuple of strings or a 1-D NumPy array of strings (at most
``MAX_ITEMS``), and the slice's bounds are numbers or names holding ints. The symptom,
measured: the tokens of all of ``T`` the slice's tokens lack (a set difference; no
TensorFlow op runs). The note names the statement, the part used, the tokens missing (a
few, as text) and how often they occur; fix: the statement with the whole ``T``.
"""

from __future__ import annotations

import ast
import heapq
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import TEXTS, held_array
from jupyterlab_tfcoach.monitor.syntax import call_name, int_literal, parsed_source
from jupyterlab_tfcoach.monitor.training.preprocessing_use import adapting_layer

SECTION = "preprocessing-adapt"
MAX_CHARS = 5_000_000
MAX_ITEMS = 50_000
MAX_CELL_CHARS = 50_000
MAX_SHOWN = 5
MAX_COUNTED = 1_000  # missing characters counted one by one (str.count)
_WANTED = ("set(", "unique(", "Counter(", ".adapt(")
_VOCABULARY_CALLS = frozenset({"set", "unique", "Counter", "frozenset"})
_LOOKUPS = frozenset({"StringLookup", "IntegerLookup", "TextVectorization"})
# Keras's ``lower_and_strip_punctuation``.
_PUNCTUATION = re.compile(r"[!\"#$%&()\*\+,\-\./:;<=>?@\[\\\]^_`{|}~']")


def _bound(node: ast.expr | None, namespace: dict[str, Any]) -> int | bool | None:
    """A slice bound's value: an int, None when absent; False when it cannot be read."""
    if node is None:
        return None
    number = int_literal(node)
    if number is not None:
        return number
    if isinstance(node, ast.Name) and type(namespace.get(node.id)) is int:
        return int(namespace[node.id])
    return False


def _sliced(node: ast.AST) -> tuple[str, ast.Slice] | None:
    """``T`` and the slice of ``T[a:b]``."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Slice)
        and node.slice.step is None
    ):
        return node.value.id, node.slice
    return None


def _texts(value: Any) -> list[str] | None:
    """A list or tuple of strings, or a 1-D array of strings, as a list; None otherwise."""
    if type(value) in (list, tuple):
        if len(value) > MAX_ITEMS or not all(type(v) is str for v in value):
            return None
        return list(value)
    values = held_array(value, MAX_ITEMS, TEXTS)
    if values is None or values.ndim != 1:
        return None
    found = values.tolist()
    if all(type(v) is bytes for v in found):
        found = [v.decode("utf-8", "replace") for v in found]
    return found if all(type(v) is str for v in found) else None


def _words(texts: Iterable[str]) -> list[str]:
    return [word for text in texts for word in _PUNCTUATION.sub("", text.lower()).split()]


def _tokens(value: Any, layer: str | None) -> list[str] | str | None:
    """The tokens a vocabulary is built from: a string's characters, a list's items, a
    TextVectorization's words."""
    if layer is None:
        if type(value) is str:
            return value if len(value) <= MAX_CHARS else None
        return _texts(value)
    texts = _texts(value)
    if texts is None:
        return None
    return _words(texts) if layer == "TextVectorization" else texts


def _layer_applies(layer: Any) -> str | None:
    """The lookup class of an adapting layer whose vocabulary is every token it saw."""
    kind = adapting_layer(layer)
    if kind not in _LOOKUPS:
        return None
    stored = instance_dict(layer) or {}
    if stored.get("max_tokens", stored.get("_max_tokens")) is not None:
        return None
    if kind == "TextVectorization" and (
        stored.get("_standardize") != "lower_and_strip_punctuation"
        or stored.get("_split") != "whitespace"
        or stored.get("_ngrams") is not None
    ):
        return None
    return kind


def _candidates(tree: ast.Module) -> list[tuple[ast.stmt, ast.Call, ast.Subscript]]:
    """Top-level statements with a vocabulary call on a slice."""
    found: list[tuple[ast.stmt, ast.Call, ast.Subscript]] = []
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call) or len(node.args) != 1:
                continue
            name = call_name(node)
            is_adapt = isinstance(node.func, ast.Attribute) and name == "adapt"
            if name not in _VOCABULARY_CALLS and not is_adapt:
                continue
            argument = node.args[0]
            if isinstance(argument, ast.Subscript) and _sliced(argument) is not None:
                found.append((statement, node, argument))
    return found


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not any(word in source for word in _WANTED) or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement, call, argument in _candidates(tree):
        note = _note(statement, call, argument, source, namespace)
        if note is not None:
            return [note]
    return []


def _note(
    statement: ast.stmt,
    call: ast.Call,
    argument: ast.Subscript,
    source: str,
    namespace: dict[str, Any],
) -> Note | None:
    sliced = _sliced(argument)
    assert sliced is not None
    whole_name, part = sliced
    layer_kind: str | None = None
    layer_name = ""
    if call_name(call) == "adapt":
        assert isinstance(call.func, ast.Attribute)
        if not isinstance(call.func.value, ast.Name):
            return None
        layer_name = call.func.value.id
        layer_kind = _layer_applies(namespace.get(layer_name))
        if layer_kind is None:
            return None
    start, stop = _bound(part.lower, namespace), _bound(part.upper, namespace)
    if start is False or stop is False:
        return None
    whole = namespace.get(whole_name)
    if type(whole) not in (str, list, tuple) and not (
        type(whole).__name__ == "ndarray" and type(whole).__module__ == "numpy"
    ):
        return None  # sliced here by its own type's slicing: builtins and NumPy only
    all_tokens = _tokens(whole, layer_kind)
    if all_tokens is None:
        return None
    length = len(whole)
    used = whole[start:stop]  # a str, list, tuple or NumPy array: builtin slicing
    used_tokens = _tokens(used, layer_kind)
    if used_tokens is None or len(used) >= length or not used_tokens:
        return None
    missing = set(all_tokens) - set(used_tokens)
    if not missing:
        return None
    counts: dict[str, int] = {}
    if type(all_tokens) is str:
        for token in list(missing)[:MAX_COUNTED]:
            counts[token] = all_tokens.count(token)
    else:
        every = Counter(all_tokens)
        counts = {token: every[token] for token in missing}
    occurrences = sum(counts.values())
    # The most frequent first: the ones the model misses most.
    shown = heapq.nsmallest(MAX_SHOWN, counts, key=lambda token: (-counts[token], token))
    written = ast.get_source_segment(source, statement)
    part_text = ast.get_source_segment(source, argument)
    if written is None or part_text is None or "\n" in written:
        return None
    if type(whole) is str:
        noun, unit = "characters", "character"
    elif layer_kind == "TextVectorization":
        noun, unit = "texts", "word"
    else:
        noun, unit = "items", "token"
    listed = ", ".join(repr(token[:20]) for token in shown)
    more = f" and {len(missing) - len(shown)} more" if len(missing) > len(shown) else ""
    if layer_kind is None:
        head = f"`{written}` (line {statement.lineno}) builds a vocabulary from `{part_text}`"
        use = "a lookup built on this vocabulary"
    else:
        head = (
            f"`{written}` (line {statement.lineno}) learns the vocabulary of `{layer_name}` "
            f"from `{part_text}`"
        )
        use = f"`{layer_name}`"
    plural = "s" if len(missing) != 1 else ""
    text = (
        f"{head}, {len(used):,} of the {length:,} {noun} of `{whole_name}`, and the rest "
        f"holds {len(missing)} {unit}{plural} it lacks "
        f"({listed}{more}; {occurrences:,} occurrences): {use} maps each of them to its "
        "one out-of-vocabulary id ([UNK]), the same id for all, so the model cannot tell "
        "them apart (nor predict them). Nothing raises. Build the vocabulary from all of "
        f"`{whole_name}`: `{_fixed(written, statement, argument, whole_name)}`."
    )
    return reports.note(text, SECTION)


def _fixed(written: str, statement: ast.stmt, argument: ast.Subscript, whole: str) -> str:
    """The statement with ``T[a:b]`` replaced by ``T``."""
    if argument.lineno != statement.lineno or argument.end_col_offset is None:
        return written
    raw = written.encode("utf-8")
    start = argument.col_offset - statement.col_offset
    stop = argument.end_col_offset - statement.col_offset
    return (raw[:start] + whole.encode("utf-8") + raw[stop:]).decode("utf-8")
