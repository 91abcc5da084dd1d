"""A test of "between two bounds" joined with the wrong logical operator.

``inside = (y >= low) | (y <= high)`` asks whether ``y`` is above the lower bound OR
below the upper one: when ``low <= high``, every value is one or the other, so the test
is True everywhere (a coverage of 1.0, every pixel "in range", no outlier kept out). The
reverse slip, ``outside = (y < low) & (y > high)``, is False everywhere. Both run and
print a plausible figure; nothing raises.

Found after a completed cell (``cell_reading``: top-level expressions, parsed once per
source; a cell without ``|``, ``&`` or ``logical_`` costs one regular-expression search):
an ``A | B``, ``A & B``, ``np.logical_or(A, B)`` or ``tf.logical_and(A, B)`` whose two
sides compare the same expression (``y``) with two bounds in opposite directions (``y``
above ``P`` on one side, below ``Q`` on the other; either operand order). The bounds'
values are read when they are number literals or names holding a number, a NumPy array or
an eager tensor of at most ``MAX_ELEMENTS`` values: told when ``P <= Q`` everywhere for
``|`` (always True) or ``P >= Q`` everywhere for ``&`` (always False), with the value the
statement assigned named when it is held (all True / all False). Correct tests
(``&`` between ordered bounds, ``|`` for values outside them) stay silent.

The fix is the same statement with the other operator (``&`` for ``|``, ``logical_and``
for ``logical_or``, and back).
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode, held_array
from jupyterlab_tfcoach.monitor.syntax import call_name, held_at, number_literal, reference_path

SECTION = "reducing-tensors"
MAX_NOTES = 2
MAX_ELEMENTS = 1_000_000
WANTED = re.compile(r"[|&]|\blogical_(?:or|and)\b")
_ABOVE = (ast.Gt, ast.GtE)
_BELOW = (ast.Lt, ast.LtE)
_SWAPPED_CALLS = {"logical_or": "logical_and", "logical_and": "logical_or"}


def _sides(node: ast.AST) -> list[tuple[str, str, ast.AST, bool, ast.AST]]:
    """Both readings of ``a >= b``: (subject dump, "above"/"below", bound, strict,
    subject) with ``a`` as the subject, then with ``b``."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return []
    op, left, right = node.ops[0], node.left, node.comparators[0]
    if not isinstance(op, _ABOVE + _BELOW):
        return []
    strict = isinstance(op, ast.Gt | ast.Lt)
    direction = "above" if isinstance(op, _ABOVE) else "below"
    flipped = "below" if direction == "above" else "above"
    readings = []
    if number_literal(left) is None:
        readings.append((ast.dump(left), direction, right, strict, left))
    if number_literal(right) is None:
        readings.append((ast.dump(right), flipped, left, strict, right))
    return readings


def _values(node: ast.AST, namespace: dict[str, Any]) -> Any | None:
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    number = number_literal(node)
    if number is not None:
        return numpy.asarray(number)
    found, value = held_at(reference_path(node), namespace)
    if not found:
        return None
    if type(value) in (int, float) or isinstance(value, numpy.integer | numpy.floating):
        return numpy.asarray(float(value))
    return held_array(value, MAX_ELEMENTS, ("float", "int"))


def _operands(node: ast.AST) -> tuple[str, ast.AST, ast.AST] | None:
    """("or"/"and", left, right) of a logical join of two comparisons."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr | ast.BitAnd):
        return ("or" if isinstance(node.op, ast.BitOr) else "and"), node.left, node.right
    if isinstance(node, ast.Call) and call_name(node) in _SWAPPED_CALLS and len(node.args) == 2:
        return ("or" if call_name(node) == "logical_or" else "and"), node.args[0], node.args[1]
    return None


def _always(kind: str, above: Any, below: Any, strict: bool) -> bool:
    """Whether the join is the same for every value: ``|`` of "above P" and "below Q"
    with P <= Q, ``&`` of them with P >= Q (strict comparisons need a strict order)."""
    numpy = sys.modules["numpy"]
    try:
        if kind == "or":
            ordered = above < below if strict else above <= below
        else:
            ordered = above >= below if strict else above > below
        return bool(numpy.all(ordered))
    except Exception:
        return False


def _fixed_join(code: CellCode, node: ast.AST, kind: str) -> str | None:
    text = code.segment(node)
    if text is None:
        return None
    if isinstance(node, ast.Call):
        name = call_name(node) or ""
        func = code.segment(node.func)
        if func is None or not func.endswith(name):
            return None
        return func[: -len(name)] + _SWAPPED_CALLS[name] + text[len(func) :]
    assert isinstance(node, ast.BinOp)
    if node.left.end_lineno != node.right.lineno or node.lineno != node.end_lineno:
        return None
    start = (node.left.end_col_offset or 0) - node.col_offset
    stop = node.right.col_offset - node.col_offset
    between = text[start:stop]
    old, new = ("|", "&") if kind == "or" else ("&", "|")
    if between.count(old) != 1:
        return None
    return text[:start] + between.replace(old, new) + text[stop:]


def range_operator_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    notes: list[Note] = []
    for node in code.nodes:
        if len(notes) >= MAX_NOTES:
            break
        joined = _operands(node)
        if joined is None:
            continue
        kind, first, second = joined
        pairs = [
            (a, b) for a in _sides(first) for b in _sides(second) if a[0] == b[0] and a[1] != b[1]
        ]
        if not pairs:
            continue
        (_, dir_a, bound_a, strict_a, subject_node), (_, _, bound_b, strict_b, _) = pairs[0]
        above_node, below_node = (bound_a, bound_b) if dir_a == "above" else (bound_b, bound_a)
        above, below = _values(above_node, namespace), _values(below_node, namespace)
        if above is None or below is None:
            continue
        if not _always(kind, above, below, strict_a or strict_b):
            continue
        join_text, fixed_join = code.segment(node), _fixed_join(code, node, kind)
        above_text, below_text = code.segment(above_node), code.segment(below_node)
        subject_text = code.segment(subject_node)
        if None in (join_text, fixed_join, above_text, below_text, subject_text):
            continue
        assert join_text is not None and fixed_join is not None
        fixed = fixed_join
        statement = code.statement_of(node)
        statement_text = code.segment(statement) if statement is not None else None
        if statement is not None and statement_text is not None and statement.lineno == node.lineno:
            start = node.col_offset - statement.col_offset
            if statement_text[start : start + len(join_text)] == join_text:
                fixed = (
                    statement_text[:start] + fixed_join + statement_text[start + len(join_text) :]
                )
        result = ""
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.value is node
        ):
            target = statement.targets[0].id
            held = held_array(namespace.get(target), MAX_ELEMENTS, ("bool",))
            if held is not None:
                if bool(held.all()) if kind == "or" else not bool(held.any()):
                    state = "True" if kind == "or" else "False"
                    result = f" (`{target}` is {state} for all {held.size} values)"
        if kind == "or":
            meaning = (
                f"asks whether `{subject_text}` is above `{above_text}` OR below "
                f"`{below_text}`; since `{above_text}` is not above `{below_text}` anywhere, "
                f"every value is one or the other, so the test is True everywhere{result}. "
                f"A value lies between the bounds only when both hold"
            )
        else:
            meaning = (
                f"asks whether `{subject_text}` is above `{above_text}` AND below "
                f"`{below_text}`; since `{above_text}` is not below `{below_text}` anywhere, "
                f"no value can be both, so the test is False everywhere{result}. A value "
                f"lies outside the bounds when either holds"
            )
        text = (
            f"`{join_text}` (line {node.lineno} of this cell) {meaning}. Nothing raises: "
            f"any count, mean or mask made from it is wrong. Fix: `{fixed}`."
        )
        notes.append(reports.note(text, SECTION))
    return notes
