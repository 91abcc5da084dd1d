"""``pad_sequences(..., truncating="post")`` cutting the end off many sequences.

``pad_sequences`` makes every sequence ``maxlen`` long; a longer one loses tokens:
``truncating="pre"`` (Keras's default) drops its beginning, ``"post"`` its end. With
``"post"`` and a ``maxlen`` below most lengths, most reviews lose their last sentences,
where the verdict often is, and the model learns from openings only. Nothing raises.

Found after a cell, from its source and the lengths of what its names hold (no hook):
each ``pad_sequences(<name>, maxlen=<int or name>, truncating="post")`` whose first
argument is a name holding a list (or tuple) of lists, tuples or arrays (at most
``MAX_SEQUENCES``: ``len`` of each, nothing else read). Told only when at least
``CUT_SHARE`` of them are longer than ``maxlen`` (a few long outliers cut are fine):
how many, and the fix: the call as written with ``maxlen`` raised to the length that
90% of the sequences fit in. The parse is the cell's shared one (``syntax``); a cell
without ``pad_sequences`` in its text costs one substring test.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "tf-data"  # preparing the inputs a model is fed
MAX_SEQUENCES = 200_000
CUT_SHARE = 0.25
KEPT_SHARE = 0.9
_SEQUENCE_TYPES = frozenset({"list", "tuple", "ndarray"})


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _maxlen(node: ast.AST | None, namespace: Mapping[str, Any]) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name) and type(namespace.get(node.id)) is int:
        return int(namespace[node.id])
    return None


def _lengths(value: Any) -> list[int] | None:
    if type(value) not in (list, tuple) or not value or len(value) > MAX_SEQUENCES:
        return None
    lengths = []
    for item in value:
        if type(item).__name__ not in _SEQUENCE_TYPES:
            return None
        lengths.append(len(item))
    return lengths


def truncation_notes(cell_source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "pad_sequences" not in cell_source:
        return []
    tree = parsed_source(cell_source)
    if tree is None:
        return []
    notes: list[Note] = []
    for node in ast.walk(tree):
        try:
            note = _told(node, cell_source, namespace)
        except Exception:
            note = None
        if note is not None:
            notes.append(note)
            if len(notes) >= 2:
                break
    return notes


def _told(node: ast.AST, source: str, namespace: Mapping[str, Any]) -> Note | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if callee != "pad_sequences" or not node.args or not isinstance(node.args[0], ast.Name):
        return None
    truncating = _keyword(node, "truncating")
    if not (isinstance(truncating, ast.Constant) and truncating.value == "post"):
        return None
    maxlen_node = _keyword(node, "maxlen")
    maxlen = _maxlen(maxlen_node, namespace)
    lengths = _lengths(namespace.get(node.args[0].id))
    if maxlen is None or lengths is None:
        return None
    cut = sum(1 for n in lengths if n > maxlen)
    if cut < CUT_SHARE * len(lengths):
        return None
    ordered = sorted(lengths)
    kept = ordered[min(len(ordered) - 1, int(KEPT_SHARE * len(ordered)))]
    name = node.args[0].id
    text = (
        f"{cut} of the {len(lengths)} sequences in `{name}` ({100 * cut / len(lengths):.0f}%) "
        f'are longer than maxlen={maxlen}, and truncating="post" cuts their end: the model '
        f"sees only their first {maxlen} tokens (the longest has {ordered[-1]}), and what "
        f"comes last, often the verdict, is lost (no error). Keras's default "
        f'truncating="pre" keeps the last {maxlen} tokens instead.'
    )
    written = ast.get_source_segment(source, node)
    if written and maxlen_node is not None and kept > maxlen:
        line = " ".join(written.split())
        call = ast.parse(line).body[0]
        value = None
        if isinstance(call, ast.Expr) and isinstance(call.value, ast.Call):
            value = _keyword(call.value, "maxlen")
        if value is not None and value.end_col_offset is not None:
            fixed = line[: value.col_offset] + str(kept) + line[value.end_col_offset :]
            text += (
                f" Or keep most sequences whole: 90% of them have at most {kept} tokens: `{fixed}`."
            )
    return reports.note(text, SECTION)
