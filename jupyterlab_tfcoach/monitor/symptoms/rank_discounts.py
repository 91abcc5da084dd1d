"""A ranking metric that sorts ascending where its rank discount needs the best first.

A DCG, NDCG or reciprocal rank weighs each position of a ranking by a discount that
falls with the rank: ``1 / log2(rank + 2)``, ``1 / (rank + 1)``. The position that
weighs most is the first one, so the metric is only what it says when the ranking is
best first. ``tf.sort``, ``tf.argsort``, ``np.sort`` and ``np.argsort`` order from the
smallest up, so an "ideal" DCG of grades sorted that way is the worst ordering's, and a
reciprocal rank read from an ascending order of scores counts from the bottom. Nothing
raises; the numbers are wrong (an NDCG above 1, a perfect ranker's low MRR).

Read from the cell's source, no values and no words (``ranking_direction.py`` tells
picks named best/top): in each function the cell defines, and its top level, the names
an ascending sort makes are followed through the statements (a ``tf.gather`` or
``take_along_axis`` by an order, comparisons, arithmetic; a reversal ends it), and a
discount is

- a division by an expression holding a ``range``/``arange`` (``1 / log2(arange(2, n +
  2))``, ``1 / tf.range(1, k + 1)``), multiplied with those sorted values, or
- a division by the position an ``argmax``/``argmin`` finds in them (``1 / (first +
  1)``: a reciprocal rank).

Sorted values themselves (``tf.sort(grades)``) are gains weighed by the discount: the
largest must come first. An order of other keys (``tf.argsort(scores)``) is told only
when the keys were filled with a very negative number at masked places (``tf.where(mask,
scores, -1e9)``): the learner sent the padding to the bottom of a ranking read from
the top, which an ascending sort puts first (keys where smaller is better, distances,
stay silent). The fix sorts descending: ``direction="DESCENDING"`` for TensorFlow's
sorts, ``np.argsort(-x)`` and ``-np.sort(-x)`` for NumPy's.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, source_segment

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 30_000
MAX_NOTES = 2
_SORTS = frozenset({"sort", "argsort"})
_RANGES = frozenset({"range", "arange"})
_GATHERS = frozenset({"gather", "take_along_axis", "take"})
_POSITIONS = frozenset({"argmax", "argmin"})
_REVERSALS = frozenset({"reverse", "flip", "fliplr"})
# A fill at or below this marks masked entries to be ranked last.
_BOTTOM = -1e6


@dataclass
class _Sort:
    """An ascending sort assigned to a name: its statement, call and kind."""

    statement: ast.Assign
    call: ast.Call
    name: str
    orders: bool  # argsort: positions of the keys, not the sorted values


@dataclass
class _Scope:
    statements: list[ast.stmt]
    function: str | None
    sorts: dict[str, _Sort] = field(default_factory=dict)
    # name -> the sort its value comes from, for values in sorted order
    sorted_values: dict[str, _Sort] = field(default_factory=dict)
    # name -> the sort, for positions found in sorted values (argmax of hits)
    positions: dict[str, _Sort] = field(default_factory=dict)
    discounts: set[str] = field(default_factory=set)
    bottom_filled: set[str] = field(default_factory=set)


def _scopes(tree: ast.Module) -> list[_Scope]:
    scopes = [_Scope(list(tree.body), None)]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scopes.append(_Scope(list(node.body), node.name))
    return scopes


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _ascending_sort(value: ast.expr) -> ast.Call | None:
    """``tf.sort(x, ...)``/``np.argsort(x)`` written as the whole value, ascending."""
    if not isinstance(value, ast.Call) or call_name(value) not in _SORTS or not value.args:
        return None
    if isinstance(value.func, ast.Name):
        return None  # Python's sorted/sort of lists is not these
    direction = _keyword(value, "direction")
    if direction is not None:
        if not (isinstance(direction, ast.Constant) and direction.value == "ASCENDING"):
            return None
    if _keyword(value, "descending") is not None or _keyword(value, "reverse") is not None:
        return None
    key = value.args[0]
    if isinstance(key, ast.UnaryOp) and isinstance(key.op, ast.USub):
        return None
    return value


def _reversed(node: ast.AST) -> bool:
    for part in ast.walk(node):
        if isinstance(part, ast.Call) and call_name(part) in _REVERSALS | _SORTS:
            return True
        if isinstance(part, ast.Slice) and part.step is not None:
            return True
    return False


def _is_discount(node: ast.AST, scope: _Scope) -> bool:
    """``c / f(range(...))``, or a name bound to one."""
    if isinstance(node, ast.Name):
        return node.id in scope.discounts
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Div):
        return False
    return any(
        isinstance(part, ast.Call) and call_name(part) in _RANGES for part in ast.walk(node.right)
    )


def _bottom_fill(value: ast.expr) -> bool:
    """``tf.where(mask, x, -1e9)``/``np.where(..., -np.inf)``: masked entries made least."""
    if not isinstance(value, ast.Call) or call_name(value) != "where" or len(value.args) != 3:
        return False
    return _least(value.args[2])


def _least(fill: ast.expr) -> bool:
    """A number at or below ``_BOTTOM``: ``-1e9``, ``-np.inf``, ``float("-inf")``."""
    if isinstance(fill, ast.UnaryOp) and isinstance(fill.op, ast.USub):
        inner = fill.operand
        if isinstance(inner, ast.Constant) and isinstance(inner.value, int | float):
            return -float(inner.value) <= _BOTTOM
        if isinstance(inner, ast.Attribute) and inner.attr == "inf":
            return True
        return _float_text(inner) == "inf"
    if isinstance(fill, ast.Constant) and isinstance(fill.value, int | float):
        return float(fill.value) <= _BOTTOM
    return _float_text(fill) == "-inf"


def _float_text(node: ast.expr) -> str | None:
    """``"-inf"`` for ``float("-inf")``."""
    if isinstance(node, ast.Call) and call_name(node) == "float" and len(node.args) == 1:
        text = node.args[0]
        if isinstance(text, ast.Constant) and type(text.value) is str:
            return text.value.strip().lower()
    return None


def _read_scope(scope: _Scope) -> None:
    for statement in scope.statements:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            continue
        name, value = target.id, statement.value
        # A name bound again stops meaning what it meant.
        for table in (scope.sorted_values, scope.positions):
            table.pop(name, None)
        scope.discounts.discard(name)
        if _bottom_fill(value):
            scope.bottom_filled.add(name)
        else:
            scope.bottom_filled.discard(name)
        call = _ascending_sort(value)
        if call is not None:
            found = _Sort(statement, call, name, call_name(call) == "argsort")
            scope.sorts[name] = found
            if not found.orders:
                scope.sorted_values[name] = found
            continue
        if _is_discount(value, scope):
            scope.discounts.add(name)
            continue
        if _reversed(value):
            continue
        read = _names(value)
        if isinstance(value, ast.Call) and call_name(value) in _POSITIONS and value.args:
            source = _names(value.args[0]) & set(scope.sorted_values)
            if source:
                scope.positions[name] = scope.sorted_values[next(iter(sorted(source)))]
            continue
        orders = [
            scope.sorts[n] for n in sorted(read) if n in scope.sorts and scope.sorts[n].orders
        ]
        if orders and any(
            isinstance(part, ast.Call) and call_name(part) in _GATHERS for part in ast.walk(value)
        ):
            scope.sorted_values[name] = orders[0]
            continue
        if isinstance(value, ast.Subscript) and _names(value.slice) & {
            n for n in scope.sorts if scope.sorts[n].orders
        }:
            scope.sorted_values[name] = scope.sorts[
                sorted(_names(value.slice) & set(scope.sorts))[0]
            ]
            continue
        carried = [scope.sorted_values[n] for n in sorted(read) if n in scope.sorted_values]
        if carried:
            scope.sorted_values[name] = carried[0]
            continue
        positions = [scope.positions[n] for n in sorted(read) if n in scope.positions]
        if positions and not isinstance(value, ast.BinOp | ast.Call):
            scope.positions[name] = positions[0]


def _discounted(scope: _Scope) -> list[tuple[_Sort, ast.AST]]:
    """(sort, the expression applying a discount to its order) for each sort read so."""
    found: list[tuple[_Sort, ast.AST]] = []
    for statement in scope.statements:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(statement):
            if not isinstance(node, ast.BinOp):
                continue
            if isinstance(node.op, ast.Mult):
                for values, other in ((node.left, node.right), (node.right, node.left)):
                    sources = _names(values) & set(scope.sorted_values)
                    if sources and _is_discount(other, scope) and not _reversed(values):
                        found.append((scope.sorted_values[sorted(sources)[0]], node))
            elif isinstance(node.op, ast.Div) and isinstance(node.left, ast.Constant):
                sources = _names(node.right) & set(scope.positions)
                if sources:
                    found.append((scope.positions[sorted(sources)[0]], node))
    return found


def _key_bottom_filled(sort: _Sort, scope: _Scope) -> bool:
    key = sort.call.args[0]
    return isinstance(key, ast.Name) and key.id in scope.bottom_filled


def _fixed_call(sort: _Sort, source: str) -> str | None:
    call = sort.call
    written = source_segment(source, call)
    key_node = call.args[0]
    key = source_segment(source, key_node)
    if written is None or key is None or "\n" in written or not written.isascii():
        return None
    func = source_segment(source, call.func) or ""
    root = func.split(".", 1)[0]
    if root in ("np", "numpy"):
        start = key_node.col_offset - call.col_offset
        end = (key_node.end_col_offset or 0) - call.col_offset
        if written[start:end] != key:
            return None
        simple = isinstance(key_node, ast.Name | ast.Attribute | ast.Subscript | ast.Call)
        negated = f"{written[:start]}-{key if simple else f'({key})'}{written[end:]}"
        return negated if sort.orders else f"-{negated}"
    if root in ("tf", "tensorflow"):
        direction = _keyword(call, "direction")
        if direction is not None:
            text = source_segment(source, direction)
            return written.replace(text, '"DESCENDING"', 1) if text else None
        return f'{written[:-1].rstrip().rstrip(",")}, direction="DESCENDING")'
    return None


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or "sort(" not in source:
        return []
    if "range(" not in source and "argm" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    told: set[int] = set()
    for scope in _scopes(tree):
        _read_scope(scope)
        if not scope.sorts:
            continue
        for sort, applied in _discounted(scope):
            if id(sort.call) in told or len(found) >= MAX_NOTES:
                continue
            if sort.orders and not _key_bottom_filled(sort, scope):
                continue
            note = _note(sort, applied, scope, source)
            if note is not None:
                told.add(id(sort.call))
                found.append(note)
    return found


def _note(sort: _Sort, applied: ast.AST, scope: _Scope, source: str) -> Note | None:
    statement = source_segment(source, sort.statement)
    weighted = source_segment(source, applied)
    fixed_call = _fixed_call(sort, source)
    written_call = source_segment(source, sort.call)
    if not statement or not weighted or not fixed_call or not written_call:
        return None
    if "\n" in statement or "\n" in weighted:
        return None
    where = f"line {sort.statement.lineno}" + (f", in `{scope.function}`" if scope.function else "")
    key = source_segment(source, sort.call.args[0]) or sort.name
    if sort.orders:
        what = (
            f"puts the entries of `{key}` in order from the smallest up, so the masked ones, "
            "which it fills with a very negative number to send them to the bottom, come "
            "first and the highest scores last"
        )
    else:
        what = f"orders `{key}` from the smallest up: the largest values come last"
    applied_line = getattr(applied, "lineno", 0)
    fixed = statement.replace(written_call, fixed_call, 1)
    text = (
        f"`{statement}` ({where}) {what}. `{weighted}` (line {applied_line}) then weighs "
        "the positions of that order by a discount that falls with the rank, the first "
        "position most, as a DCG or reciprocal rank does: that discount needs the best "
        f"entries first, so the metric reads the ranking from its worst end (an ideal DCG "
        "that is the worst one, a perfect ranking scored low), and nothing raises. Sort "
        f"descending: `{fixed}`."
    )
    return reports.note(text, SECTION)
