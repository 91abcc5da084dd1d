"""A concordance index or AUC computed by hand over pairs, with the scores compared the
wrong way round: the value comes out as 1 minus the right one, below 0.5.

Harrell's C and the AUC are fractions of pairs a score orders correctly: a pair is
concordant when the subject that failed first (or the positive) has the higher risk score.
Written by hand with broadcasting, ``concordant = (r[:, None] < r[None, :]) & comparable``
counts the pairs the score orders the OTHER way when higher means sooner (a risk, a
hazard, a log-hazard): a good model gets 0.3, "worse than random", and the learner
concludes the model is useless. Nothing raises.

The symptom, read after a cell that completed (a cell whose words say concordance, C-index,
Harrell or AUC and that broadcasts with ``None``; two regular-expression searches
otherwise): a name the cell assigns at its top level holds a number below ``LOW`` (a value
of random scores is 0.5), computed as a fraction ``num / den`` (or a ``mean``) of pairwise
comparisons ``a[:, None] OP a[None, :]`` (names followed to their assignments in the
cell). Exactly one ordering comparison (``<``, ``>``, ``<=``, ``>=``) must feed the
numerator and not the denominator (the comparable pairs, in both, order the times or the
labels): that is the scores' comparison. The note names the value, that comparison and
where the scores come from; the fix is its statement with the comparison turned round.
"""

from __future__ import annotations

import ast
import math
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "reducing-tensors"
LOW = 0.4
WANTED = re.compile(r"(?i)c[_-]?index|concordan|harrell|\bauc\b")
_BROADCAST = word_gate(r"\[\s*(?::\s*,\s*)?None\b")
_FLIPPED: dict[type, str] = {ast.Lt: ">", ast.Gt: "<", ast.LtE: ">=", ast.GtE: "<="}
_WRITTEN: dict[type, str] = {ast.Lt: "<", ast.Gt: ">", ast.LtE: "<=", ast.GtE: ">="}
_FOLLOW = 6


def _number(value: Any) -> float | None:
    if type(value) is float:
        return value
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.floating):
        return float(value)
    operand = describe("", value)
    if operand is None or operand.kind != "tensor" or operand.shape != ():
        return None
    if not (operand.dtype or "").startswith("float"):
        return None
    to_numpy = library_attribute(value, "numpy")
    scalar = to_numpy() if to_numpy is not None else None
    return float(scalar) if numpy is not None and isinstance(scalar, numpy.floating) else None


def _pairwise(node: ast.AST) -> bool:
    """``a[:, None]`` or ``a[None, :]``: one side of a comparison of every pair."""
    if not isinstance(node, ast.Subscript):
        return False
    index = node.slice
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(p, ast.Constant) and p.value is None for p in parts)


def _orderings(root: ast.AST) -> list[ast.Compare]:
    return [
        node
        for node in ast.walk(root)
        if isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and type(node.ops[0]) in _FLIPPED
        and _pairwise(node.left)
        and _pairwise(node.comparators[0])
    ]


def _reached(code: CellCode, root: ast.AST, line: int) -> list[ast.AST]:
    """``root`` and the values the names it uses were assigned in the cell, transitively."""
    seen: list[ast.AST] = [root]
    frontier = [root]
    for _ in range(_FOLLOW):
        names = {n.id for f in frontier for n in ast.walk(f) if isinstance(n, ast.Name)}
        frontier = []
        for name in names:
            value = code.assignment_before(name, line)
            if value is not None and all(value is not s for s in seen):
                seen.append(value)
                frontier.append(value)
        if not frontier:
            break
    return seen


def _fraction(value: ast.AST) -> tuple[ast.AST, ast.AST | None] | None:
    """(numerator, denominator) of ``num / den``, or (argument, None) of a ``mean``, under
    ``float``/``round`` wrappers."""
    while isinstance(value, ast.Call) and call_name(value) in ("float", "round") and value.args:
        value = value.args[0]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        return value.left, value.right
    if isinstance(value, ast.Call) and call_name(value) in ("mean", "reduce_mean"):
        if value.args:
            return value.args[0], None
        if isinstance(value.func, ast.Attribute):
            return value.func.value, None
    return None


def concordance_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None or _BROADCAST.search(code.source) is None:
        return []
    for name, assignments in code.assigned.items():
        line, value = assignments[-1]
        if code.rebound_after((name,), line) or name not in namespace:
            continue
        number = _number(namespace[name])
        if number is None or math.isnan(number) or not 0.0 <= number < LOW:
            continue
        parts = _fraction(value)
        if parts is None:
            continue
        numerator, denominator = parts
        above = [c for root in _reached(code, numerator, line) for c in _orderings(root)]
        below = (
            [c for root in _reached(code, denominator, line) for c in _orderings(root)]
            if denominator is not None
            else []
        )
        scores = [c for c in above if all(c is not d for d in below)]
        if len(scores) != 1:
            continue
        note = _note(code, name, number, scores[0])
        if note is not None:
            return [note]
    return []


def _statement(code: CellCode, node: ast.AST) -> ast.stmt | None:
    for statement in code.nodes:
        if isinstance(statement, ast.Assign) and any(n is node for n in ast.walk(statement)):
            return statement
    return None


def _origin(code: CellCode, name: str) -> str | None:
    """``risk[:500]`` for ``r_`` in ``t_, r_ = time[:500], risk[:500]`` (or ``r_ = ...``)."""
    for statement in code.nodes:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target, value = statement.targets[0], statement.value
        if isinstance(target, ast.Name) and target.id == name:
            return code.segment(value)
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            for left, right in zip(target.elts, value.elts, strict=False):
                if isinstance(left, ast.Name) and left.id == name:
                    return code.segment(right)
    return None


def _note(code: CellCode, name: str, number: float, compare: ast.Compare) -> Note | None:
    statement = _statement(code, compare)
    if statement is None:
        return None
    written = code.segment(compare)
    operator = type(compare.ops[0])
    left, right = code.segment(compare.left), code.segment(compare.comparators[0])
    if written is None or left is None or right is None:
        return None
    flipped = f"{left} {_FLIPPED[operator]} {right}"
    fixed = code.replaced_in(statement, compare, flipped)
    whole = code.segment(statement)
    if fixed is None or whole is None:
        return None
    scores = compare.left.value if isinstance(compare.left, ast.Subscript) else None
    score_name = scores.id if isinstance(scores, ast.Name) else None
    origin = _origin(code, score_name) if score_name is not None else None
    held = f" (`{score_name}` is `{origin}`)" if origin and score_name else ""
    lower = operator in (ast.Lt, ast.LtE)
    meaning = (
        "for a score where higher means sooner (a risk, a hazard, a positive class's "
        "probability), a pair is concordant when the one that failed first (the positive) "
        "has the HIGHER score"
        if lower
        else "for a score where higher means later (a predicted survival time), a pair is "
        "concordant when the one that failed first has the LOWER score"
    )
    text = (
        f"`{name}` is {number:.3f}, below 0.5, the value random scores get: the pairs are "
        f"counted with the scores compared the other way round. `{whole}` (line "
        f"{statement.lineno} of this cell) counts a pair when `{written}`{held}, the first "
        f"one's score {'LOWER' if lower else 'HIGHER'}; {meaning}, so `{name}` is 1 minus "
        f"the index ({1 - number:.3f}). Nothing raises. Fix: `{fixed}`."
    )
    return reports.note(text, SECTION)
