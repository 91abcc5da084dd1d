"""A weight for the rare positive class computed as the inverted ratio (below 1).

A weighted loss for imbalanced labels gives the rare positives the ratio negatives /
positives (about 10 when 9% are positive). Written ``pos_frac / (1 - pos_frac)`` (or
``n_pos / n_neg``), the ratio is inverted: about 0.1, so the rare positives count ten
times less than before and the imbalance grows (recall drops). Nothing raises.

Found after a cell that completed (a cell without a weight word costs a regular-expression
search),
from its top-level ``W = A / B`` statements: ``W`` a name with a weight word (``weight``,
``w``) and a positive word (``pos``, ``positive``, ``fg``, ``foreground``, ``minority``,
``rare``), holding after the cell a Python or NumPy number in (0, 1), or a small array
or tensor of positive numbers, most of them below 1 (a weight per label: the majority
labels' are above 1 under the inverted ratio too; a complement ``n - pos`` on top is
then the right ratio); the ratio written bare or
inside calls that only convert it (``tf.constant(pos / neg, dtype=tf.float32)``,
``np.asarray(...)``, ``.astype(...)``); ``A`` not a
negatives' count or fraction (no ``neg``, ``background``, ``bg``, ``majority`` word, and
not ``1 - x``). The note names the statement, its value and the functions of the cell
that read ``W``; fix: ``W = B / A`` (inside the same calls).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import NUMBERS, held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "labels-and-loss"
MAX_CELL_CHARS = 50_000
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# A weight word somewhere in the cell: ``weight``, ``w_pos``, ``pos_w``, ``wt_fg``.
_WEIGHT_WRITTEN = word_gate(r"(?i)weight|(?<![a-z])wt?_|_wt?(?![a-z0-9])")
_WEIGHT = frozenset({"weight", "weights", "w", "wt"})
_POSITIVE = frozenset({"pos", "positive", "positives", "fg", "foreground", "minority", "rare"})
_NEGATIVE = frozenset({"neg", "negative", "negatives", "bg", "background", "majority"})
# Calls that only change a number's type or library, read through to the ratio inside.
_CONVERSIONS = frozenset(
    {"constant", "convert_to_tensor", "array", "asarray", "float", "float32", "float64", "cast"}
)
_METHOD_CONVERSIONS = frozenset({"astype", "numpy"})
_MAX_WRAPPERS = 3
# A weight per label: a short vector (read in full).
MAX_WEIGHTS = 10_000


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
        ):
            continue
        division = _division(statement.value)
        if division is None:
            continue
        name = statement.targets[0].id
        words = _words(name)
        if not (words & _WEIGHT and words & _POSITIVE):
            continue
        value = _weights(namespace.get(name))
        if value is None:
            continue
        top, bottom = division.left, division.right
        top_text = ast.get_source_segment(source, top)
        bottom_text = ast.get_source_segment(source, bottom)
        if top_text is None or bottom_text is None:
            continue
        if _one_minus(top) or _words(top_text) & _NEGATIVE:
            continue
        # ``(len(y) - pos) / pos``: a complement on top is the negatives' count, the
        # right ratio (its majority labels' weights below 1 are right too).
        if value[3] > 1 and isinstance(top, ast.BinOp) and isinstance(top.op, ast.Sub):
            continue
        readers = [
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))
        ]
        text = _text(statement, division, name, value, source, readers)
        return [reports.note(text, SECTION)]
    return []


def _division(node: ast.expr) -> ast.BinOp | None:
    """``A / B`` written bare or inside the calls that only change its type or library
    (``tf.constant(pos / neg, dtype=tf.float32)``, ``np.float32(a / b)``,
    ``(a / b).astype("float32")``, ``float(a / b)``)."""
    for _ in range(_MAX_WRAPPERS + 1):
        if isinstance(node, ast.BinOp):
            return node if isinstance(node.op, ast.Div) else None
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in _METHOD_CONVERSIONS and isinstance(func, ast.Attribute):
            node = func.value
        elif name in _CONVERSIONS and node.args:
            node = node.args[0]
        else:
            return None
    return None


def _weights(value: Any) -> tuple[float, float, int, int] | None:
    """(smallest, largest, how many below 1, how many) of a weight held after the cell: a
    number in (0, 1), or a small array or tensor of positive numbers (one weight per
    label) most of which are below 1 (a label whose positives are the majority gets a
    weight above 1 from the inverted ratio too: the rare labels are the ones below)."""
    number = _number(value)
    if number is not None:
        return (number, number, 1, 1) if 0 < number < 1 else None
    values = held_array(value, MAX_WEIGHTS, NUMBERS)
    if values is None or values.size == 0:
        return None
    try:
        low, high = float(values.min()), float(values.max())
        below = int((values < 1).sum())
    except Exception:
        return None
    if not (0 < low and high < float("inf")) or 2 * below <= values.size:
        return None
    return low, high, below, int(values.size)


def _wrapped(node: ast.expr, text: str) -> str:
    atomic = isinstance(node, ast.Name | ast.Constant | ast.Attribute | ast.Subscript | ast.Call)
    if atomic or (text.startswith("(") and text.endswith(")")):
        return text
    return f"({text})"


def _text(
    statement: ast.Assign,
    division: ast.BinOp,
    name: str,
    value: tuple[float, float, int, int],
    source: str,
    readers: list[str],
) -> str:
    written = ast.get_source_segment(source, statement) or name
    top, bottom = division.left, division.right
    top_text = ast.get_source_segment(source, top) or ""
    bottom_text = ast.get_source_segment(source, bottom) or ""
    inverted = f"{_wrapped(bottom, bottom_text)} / {_wrapped(top, top_text)}"
    if division is statement.value:
        fixed = f"{name} = {inverted}"
    else:
        # The call around the ratio stays as written; only the ratio turns over.
        fixed = _replaced(written, division, source, inverted)
    used = ""
    if readers:
        used = f" (`{readers[0]}` multiplies the positives' loss by it)"
    low, high, below, count = value
    if count == 1:
        weight = f"the weight {low:.3g}{used}: below 1"
    elif below == count:
        weight = f"weights from {low:.3g} to {high:.3g}{used}: all below 1"
    else:
        weight = (
            f"weights from {low:.3g} to {high:.3g}{used}: below 1 for {below} of its "
            f"{count} labels, the rarest smallest"
        )
    return (
        f"`{written}` (line {statement.lineno}) gives the positive class {weight}, "
        "so the rare positives count less than the "
        "negatives, and the imbalance it should correct grows (the model predicts the "
        "positive class even less; recall drops). The weight that balances them is the "
        "inverted ratio, negatives over positives. Nothing raises. "
        f"Invert it: `{fixed}`."
    )


def _replaced(written: str, part: ast.expr, source: str, text: str) -> str:
    """``written`` (the statement's source) with ``part``'s source replaced by ``text``
    (the ratio holds a ``/`` the target name cannot, so its first match is the part)."""
    segment = ast.get_source_segment(source, part) or ""
    return written.replace(segment, text, 1) if segment else written
