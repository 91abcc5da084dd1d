"""A cell's own expressions, parsed once per source, and the values their names hold after it.

The checks on predictions and metrics computed by hand (``threshold_scores.py``,
``class_axis.py``, ``integer_mean.py``) read the same things: the calls and comparisons
at the top level of a cell (not inside ``def``, ``class``, ``lambda`` or comprehensions,
whose names are locals gone after the cell), what a name used there was assigned in the
cell (``preds = tf.argmax(p, 1)`` then ``preds == y``), and what a name or attribute
chain holds once the cell has run: a tensor, a variable or a NumPy array by shape and
dtype (``errors/failing_line.describe``), its smallest and largest value only when a
check needs them and the array is small (``value_range``).

``CellReader.read`` parses a source once and keeps the result for the next 64 sources; a
cell that has none of the words the checks look for (``argmax``, ``softmax``, ``round``,
``reduce_mean``, ``reduce_sum``, ``one_hot``, a decimal number, a comparison with 0, or a
part of a loss's, metric's or coding layer's usual name: ``loss``, ``acc``... ) is not
parsed at all: a regular expression search over its text (a few microseconds) decides.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.errors.failing_line import Operand, describe
from jupyterlab_tfcoach.monitor.errors.held_values import (  # noqa: F401 (re-exported)
    INTEGERS,
    MAX_RANGE_ELEMENTS,
    NUMBERS,
    TEXTS,
    first_axis,
    held_array,
    integer_labels,
    numpy_values,
    size_of,
)
from jupyterlab_tfcoach.monitor.errors.written_numbers import (
    row_count,
    whole_number,
)
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    child_nodes,
    children,
    held_at,
    parsed_source,
    reference_path,
    walk_nodes,
)
from jupyterlab_tfcoach.monitor.word_gates import word_gate

MAX_CELL_CHARS = 50_000
_CACHE_SIZE = 64
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_FOLLOW_ASSIGNMENTS = 4
ARRAY_KINDS = frozenset({"tensor", "variable", "array"})
# The words a cell needs for any check here to apply.
WANTED = re.compile(
    r"\b(?:argmax|(?:log_)?softmax|round|rint|reduce_\w+|greater\w*|sum|mean|max|min|one_hot)\b"
    r"|(?<![\w.])0?\.\d"
    # A cut at 0 (``probs > 0``), told for probabilities.
    r"|>=?\s*0(?![\w.])|(?<![\w.])0\s*<"
    # A loss or metric called by the learner's name for it, a layer taking codes.
    r"|(?i:loss|entropy|accura|update_state|metric|criterion|precision|recall|auc|bce|cce"
    r"|encod|embed|percentile)"
)
_WANTED_GATE = word_gate(WANTED)  # substring tests first: most cells lack the words
_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
# Calls that only change a value's dtype or library: ``tf.cast(x, ...)``, ``x.numpy()``.
_CONVERSIONS = frozenset(
    {"cast", "astype", "numpy", "convert_to_tensor", "convert_to_numpy", "asarray", "array"}
)
_RESHAPES = frozenset({"ravel", "flatten", "squeeze"})
_EQUALITY_CALLS = frozenset({"equal", "not_equal"})


def unwrap(node: ast.AST, reshapes: bool = False) -> ast.AST:
    """The value under dtype and library conversions: ``x`` for ``tf.cast(x, tf.int32)``,
    ``x.numpy()``, ``x.astype(int)``, ``np.asarray(x)``; with ``reshapes``, also under the
    methods that keep the values and change the shape (``x.numpy().ravel()``)."""
    for _ in range(4):
        name = call_name(node) if isinstance(node, ast.Call) else None
        if name in _RESHAPES and reshapes and isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and not node.args:
                node = func.value
                continue
        if not isinstance(node, ast.Call) or name not in _CONVERSIONS:
            return node
        func = node.func
        if name in ("numpy", "astype") and isinstance(func, ast.Attribute):
            node = func.value
        elif node.args:
            node = node.args[0]
        else:
            return node
    return node


def unwrap_calls(node: ast.AST, wrappers: frozenset[str]) -> ast.AST:
    """The value under the calls named in ``wrappers`` (each check names the calls that keep
    what it reads): ``m`` for ``tf.cast(m, ...)``, ``m.astype(...)`` or, with
    ``expand_dims`` among them, ``tf.expand_dims(m, -1)``."""
    while isinstance(node, ast.Call) and call_name(node) in wrappers:
        if isinstance(node.func, ast.Attribute) and call_name(node) == "astype":
            node = node.func.value
        elif node.args:
            node = node.args[0]
        else:
            break
    return node


@dataclass
class CellCode:
    """One cell's source, parsed: its top-level nodes and its simple assignments."""

    source: str
    nodes: list[ast.AST] = field(default_factory=list)
    parents: dict[int, ast.AST] = field(default_factory=dict)
    # ``name = value`` at the top level: name -> [(line, value)], in source order.
    assigned: dict[str, list[tuple[int, ast.expr]]] = field(default_factory=dict)
    # The last line binding each name anywhere in the cell (loops, functions included).
    last_bound: dict[str, int] = field(default_factory=dict)
    # What each check found in the source alone, kept with the parsed cell.
    memo: dict[str, Any] = field(default_factory=dict)
    _lines: list[bytes] = field(default_factory=list)
    _segments: dict[int, str | None] = field(default_factory=dict)

    def segment(self, node: ast.AST) -> str | None:
        """The node's source text, on one line; None when it spans several."""
        key = id(node)
        if key not in self._segments:
            self._segments[key] = self._segment(node)
        return self._segments[key]

    def _segment(self, node: ast.AST) -> str | None:
        line, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        start, stop = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if line is None or line != end or start is None or stop is None:
            return None
        if not 0 < line <= len(self._lines):
            return None
        try:
            return self._lines[line - 1][start:stop].decode("utf-8")
        except UnicodeDecodeError:
            return None

    def assignment_before(self, name: str, line: int) -> ast.expr | None:
        """What the last top-level ``name = ...`` at or before ``line`` assigned."""
        found = None
        for assigned_line, value in self.assigned.get(name, ()):
            if assigned_line <= line:
                found = value
        return found

    def origin(self, node: ast.AST, line: int) -> ast.AST:
        """The expression a value came from: conversions unwrapped and names followed to
        their assignment in the cell (``preds`` -> ``tf.argmax(p, axis=1)``)."""
        for _ in range(_FOLLOW_ASSIGNMENTS):
            node = unwrap(node)
            if not isinstance(node, ast.Name):
                return node
            value = self.assignment_before(node.id, line)
            if value is None:
                return node
            node = value
        return node

    def rebound_after(self, path: tuple[str, ...], line: int) -> bool:
        """Whether the name a path starts from is bound again after ``line``: its value
        after the cell is then not the one used there."""
        return self.last_bound.get(path[0], 0) > line

    def comparisons(self) -> list[tuple[ast.AST, ast.AST, ast.AST]]:
        """Every equality at the top level: ``(node, left, right)`` for ``a == b``,
        ``a != b``, ``tf.equal(a, b)``, ``np.not_equal(a, b)``."""
        found = self.memo.get("comparisons")
        if found is None:
            found = self.memo["comparisons"] = list(self._comparisons())
        return found

    def _comparisons(self) -> Iterator[tuple[ast.AST, ast.AST, ast.AST]]:
        for node in self.nodes:
            if isinstance(node, ast.Compare) and len(node.ops) == 1:
                if isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
                    yield node, node.left, node.comparators[0]
            elif isinstance(node, ast.Call) and call_name(node) in _EQUALITY_CALLS:
                if len(node.args) == 2:
                    yield node, node.args[0], node.args[1]

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        current = self.parents.get(id(node))
        while current is not None:
            yield current
            current = self.parents.get(id(current))

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement holding the node (where a printed fix is written)."""
        for parent in self.ancestors(node):
            if isinstance(parent, ast.stmt):
                return parent
        return None

    def replaced_in(self, statement: ast.AST, node: ast.AST, new: str) -> str | None:
        """The statement's one-line text with the node's text replaced by ``new``; None
        when either spans several lines or they start on different lines."""
        text, old = self.segment(statement), self.segment(node)
        if text is None or old is None:
            return None
        # segment() gave text, so both nodes carry positions.
        if getattr(node, "lineno", 0) != getattr(statement, "lineno", 0):
            return None
        start = getattr(node, "col_offset", 0) - getattr(statement, "col_offset", 0)
        if text[start : start + len(old)] != old:
            return None
        return text[:start] + new + text[start + len(old) :]


def parse_cell(source: str) -> CellCode | None:
    tree = parsed_source(source)
    if tree is None:
        return None
    code = CellCode(source)
    # Lines as ``ast`` counts them (``str.splitlines`` also splits at form feeds).
    code._lines = [line.encode("utf-8") for line in _LINE_BREAK.split(source)]
    for node in walk_nodes(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            code.last_bound[node.id] = max(code.last_bound.get(node.id, 0), node.lineno)

    table = child_nodes(tree)

    def visit(node: ast.AST) -> None:
        for child in children(table, node):
            if isinstance(child, _SCOPES):
                continue
            code.parents[id(child)] = node
            code.nodes.append(child)
            if (
                isinstance(child, ast.Assign)
                and len(child.targets) == 1
                and isinstance(child.targets[0], ast.Name)
            ):
                code.assigned.setdefault(child.targets[0].id, []).append(
                    (child.lineno, child.value)
                )
            visit(child)

    visit(tree)
    return code


class CellReader:
    """Parsed cells by source, the last 64 kept."""

    def __init__(self) -> None:
        self._parsed: dict[str, CellCode | None] = {}

    def read(self, source: str, always: bool = False) -> CellCode | None:
        """The parsed cell; None for a cell without the wanted words (``always``: parse
        it anyway) or that does not parse."""
        if not source or len(source) > MAX_CELL_CHARS:
            return None
        if not always and _WANTED_GATE.search(source) is None:
            return None
        if source in self._parsed:
            return self._parsed[source]
        code = parse_cell(source)
        if len(self._parsed) >= _CACHE_SIZE:
            self._parsed.pop(next(iter(self._parsed)))
        self._parsed[source] = code
        return code


# ---------------------------------------------------------------- values
def value_at(node: ast.AST, namespace: dict[str, Any], text: str) -> Operand | None:
    """What a name or an attribute chain holds now (stored values only), described, when
    it is a tensor, a variable or a NumPy array of known shape."""
    found, value = held_at(reference_path(node), namespace)
    if not found:
        return None
    described = describe(text, value)
    if described is None or described.kind not in ARRAY_KINDS or described.shape is None:
        return None
    return described


def value_kind_at(node: ast.AST, namespace: dict[str, Any]) -> str | None:
    """``"model"``, ``"layer"``, ``"tensor"``, ...: what a name or chain holds now."""
    found, value = held_at(reference_path(node), namespace)
    if not found:
        return None
    described = describe("", value)
    return described.kind if described is not None else None


def value_range(operand: Operand) -> tuple[float, float] | None:
    """The smallest and largest value of a float tensor, variable or array of at most
    ``MAX_RANGE_ELEMENTS`` values: TensorFlow's own ``numpy`` makes a NumPy copy, NumPy's
    own ``min``/``max`` read it. None for anything else, empty or with NaN."""
    if not (operand.dtype or "").startswith(("float", "bfloat")):
        return None
    value = numpy_values(operand)
    numpy = sys.modules.get("numpy")
    if value is None or numpy is None:
        return None
    low, high = float(numpy.min(value)), float(numpy.max(value))
    if low != low or high != high:
        return None
    return low, high


def slice_rows(node: ast.AST, names: Mapping[str, Any]) -> tuple[str, int, int, int] | None:
    """``A[a:b]`` of a name holding rows (an array, tensor or list): (``A``, the first and
    past-the-last row the slice takes, ``A``'s rows), as Python resolves negative and left-
    out bounds; None for a step, another index or a bound read here cannot work out."""
    if not (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Slice)
        and node.slice.step is None
    ):
        return None
    rows = row_count(names.get(node.value.id))
    if rows is None:
        return None
    bounds: list[int | None] = []
    for bound in (node.slice.lower, node.slice.upper):
        if bound is None:
            bounds.append(None)
            continue
        number = whole_number(bound, names)
        if number is None:
            return None
        bounds.append(number)
    start, stop, _ = slice(bounds[0], bounds[1]).indices(rows)
    return node.value.id, start, max(start, stop), rows
