"""A weight for the rare positive class computed as the inverted ratio (below 1).

A weighted loss for imbalanced labels gives the rare positives the ratio negatives /
positives (about 10 when 9% are positive). Written ``pos_frac / (1 - pos_frac)`` (or
``n_pos / n_neg``), the ratio is inverted: about 0.1, so the rare positives count ten
times less than before and the imbalance grows (recall drops). Nothing raises.

Found after a cell that completed (a cell without a weight word costs a regular-expression
search),
from its top-level ``W = A / B`` statements: ``W`` a name with a weight word (``weight``,
``w``) and a positive word (``pos``, ``positive``, ``fg``, ``foreground``, ``minority``,
``rare``), holding after the cell a Python or NumPy number in (0, 1); ``A`` not a
negatives' count or fraction (no ``neg``, ``background``, ``bg``, ``majority`` word, and
not ``1 - x``). The note names the statement, its value and the functions of the cell
that read ``W``; fix: ``W = B / A``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "labels-and-loss"
MAX_CELL_CHARS = 50_000
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# A weight word somewhere in the cell: ``weight``, ``w_pos``, ``pos_w``, ``wt_fg``.
_WEIGHT_WRITTEN = re.compile(r"(?i)weight|(?<![a-z])wt?_|_wt?(?![a-z0-9])")
_WEIGHT = frozenset({"weight", "weights", "w", "wt"})
_POSITIVE = frozenset({"pos", "positive", "positives", "fg", "foreground", "minority", "rare"})
_NEGATIVE = frozenset({"neg", "negative", "negatives", "bg", "background", "majority"})


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _number(value: Any) -> float | None:
    cls = type(value)
    if cls in (int, float) or (cls.__module__ == "numpy" and cls.__name__.startswith("float")):
        return float(value)
    return None


def _one_minus(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and isinstance(node.left, ast.Constant)
        and node.left.value == 1
    )


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if _WEIGHT_WRITTEN.search(source) is None or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.BinOp)
            and isinstance(statement.value.op, ast.Div)
        ):
            continue
        name = statement.targets[0].id
        words = _words(name)
        if not (words & _WEIGHT and words & _POSITIVE):
            continue
        value = _number(namespace.get(name))
        if value is None or not 0 < value < 1:
            continue
        top, bottom = statement.value.left, statement.value.right
        top_text = ast.get_source_segment(source, top)
        bottom_text = ast.get_source_segment(source, bottom)
        if top_text is None or bottom_text is None:
            continue
        if _one_minus(top) or _words(top_text) & _NEGATIVE:
            continue
        readers = [
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))
        ]
        return [reports.note(_text(statement, name, value, top, bottom, source, readers), SECTION)]
    return []


def _wrapped(node: ast.expr, text: str) -> str:
    atomic = isinstance(node, ast.Name | ast.Constant | ast.Attribute | ast.Subscript | ast.Call)
    if atomic or (text.startswith("(") and text.endswith(")")):
        return text
    return f"({text})"


def _text(
    statement: ast.Assign,
    name: str,
    value: float,
    top: ast.expr,
    bottom: ast.expr,
    source: str,
    readers: list[str],
) -> str:
    written = ast.get_source_segment(source, statement) or name
    top_text = ast.get_source_segment(source, top) or ""
    bottom_text = ast.get_source_segment(source, bottom) or ""
    fixed = f"{name} = {_wrapped(bottom, bottom_text)} / {_wrapped(top, top_text)}"
    used = ""
    if readers:
        used = f" (`{readers[0]}` multiplies the positives' loss by it)"
    return (
        f"`{written}` (line {statement.lineno}) gives the positive class the weight "
        f"{value:.3g}{used}: below 1, so the rare positives count less than the "
        "negatives, and the imbalance it should correct grows (the model predicts the "
        "positive class even less; recall drops). The weight that balances them is the "
        "inverted ratio, negatives over positives. Nothing raises. "
        f"Invert it: `{fixed}`."
    )
