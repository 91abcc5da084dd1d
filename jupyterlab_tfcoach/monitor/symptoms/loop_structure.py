"""The loop structure of a cell, read with ``ast``, for the custom-loop checks.

A learner's custom training loop is an epoch loop holding a batch loop, with a
``with tf.GradientTape() as tape:`` block somewhere inside (in the cell, or in a
function the cell defines). The checks in ``metric_resets``, ``epoch_accumulators`` and
``training_mode`` ask the same questions of that structure: which loops hold another
loop, which statements come after the inner loop in the outer one's body, which calls
run inside a tape block (lexically, or in a function of the cell called there), how many
times a ``for ... in range(...)`` loop ran (from the loop name's value after the cell).
A cell is parsed once per source (``CellLoops.parse`` keeps the last few); nothing here
runs user code or reads more of a value than its exact type.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import instance_dict, module_of_class, mro_of_class
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    child_nodes,
    children,
    function_definition,
    parsed_source,
    subtree_nodes,
    walk_nodes,
)

MAX_CELL_CHARS = 50_000
_CACHE_SIZE = 32
Loop = ast.For | ast.While


@dataclass
class ParsedCell:
    """One cell's tree and what the checks look up in it."""

    source: str
    tree: ast.Module
    parents: dict[int, ast.AST]
    loops: list[Loop]
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    tape_blocks: list[ast.With]
    # ids of the nodes that run while a tape records: inside a tape block, or in a
    # function of the cell that a tape block calls.
    taped: set[int] = field(default_factory=set)
    # Each subtree walked once: a cell run again costs list reads, not tree walks.
    _walked: dict[int, list[ast.AST]] = field(default_factory=dict)
    _lines: list[bytes] | None = None

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """``ast.walk(node)``, kept."""
        found = self._walked.get(id(node))
        if found is None:
            found = subtree_nodes(node)
            self._walked[id(node)] = found
        return found

    def _segment(self, node: ast.AST) -> str | None:
        """``ast.get_source_segment`` with the cell's lines split once."""
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        line = getattr(node, "lineno", None)
        col = getattr(node, "col_offset", None)
        if None in (end_line, end_col, line, col):
            return None
        if self._lines is None:
            self._lines = [text.encode() for text in self.source.split("\n")]
        lines = self._lines
        if not 0 < line <= end_line <= len(lines):  # type: ignore[operator]
            return None
        if line == end_line:
            return lines[line - 1][col:end_col].decode(errors="replace")  # type: ignore[index]
        parts = [lines[line - 1][col:]]  # type: ignore[index]
        parts.extend(lines[line : end_line - 1])  # type: ignore[operator]
        parts.append(lines[end_line - 1][:end_col])  # type: ignore[index, operator]
        return b"\n".join(parts).decode(errors="replace")

    def text(self, node: ast.AST) -> str:
        """The node as written, on one line."""
        try:
            segment = self._segment(node)
        except Exception:
            segment = None
        if segment is None:
            try:
                segment = ast.unparse(node)
            except Exception:
                return "?"
        return " ".join(segment.split())

    def header(self, loop: Loop) -> str:
        """``for epoch in range(3):``: the loop's first line as written."""
        lines = self.source.split("\n")
        if 0 < loop.lineno <= len(lines):
            return lines[loop.lineno - 1].strip()
        return self.text(loop).split(":", 1)[0] + ":"

    def inside(self, node: ast.AST, ancestor: ast.AST) -> bool:
        current: ast.AST | None = node
        while current is not None:
            if current is ancestor:
                return True
            current = self.parents.get(id(current))
        return False

    def enclosing_function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        current = self.parents.get(id(node))
        while current is not None:
            if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
                return current
            current = self.parents.get(id(current))
        return None

    def inner_loops(self, loop: Loop) -> list[Loop]:
        """The loops inside ``loop``'s body (at any depth, not in a nested def)."""
        return [
            other
            for other in self.loops
            if other is not loop
            and self.inside(other, loop)
            and self.enclosing_function(other) is self.enclosing_function(loop)
        ]

    def statements_in(self, loop: Loop) -> Iterator[ast.AST]:
        """Every node of ``loop``'s body."""
        for statement in loop.body:
            yield from self.walk(statement)


def _tape_block(node: ast.With) -> bool:
    for item in node.items:
        call = item.context_expr
        if isinstance(call, ast.Call):
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == "GradientTape":
                return True
    return False


def _parse(source: str) -> ParsedCell | None:
    # Magic and shell lines blanked; a cell without them is the same string, so its tree
    # is the one the other checks of the cell read.
    tree = parsed_source(
        "\n".join(
            "" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")
        )
    )
    if tree is None:
        return None
    parents: dict[int, ast.AST] = {}
    loops: list[Loop] = []
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    tapes: list[ast.With] = []
    table = child_nodes(tree)
    for node in walk_nodes(tree):
        for child in children(table, node):
            parents[id(child)] = node
        if isinstance(node, ast.For | ast.While):
            loops.append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.setdefault(node.name, node)
        elif isinstance(node, ast.With) and _tape_block(node):
            tapes.append(node)
    cell = ParsedCell(source, tree, parents, loops, functions, tapes)
    _mark_taped(cell)
    return cell


def _mark_taped(cell: ParsedCell) -> None:
    """Nodes inside tape blocks, and the bodies of the cell's functions called there."""
    pending: list[ast.AST] = list(cell.tape_blocks)
    seen: set[int] = set()
    while pending:
        root = pending.pop()
        if id(root) in seen:
            continue
        seen.add(id(root))
        for node in subtree_nodes(root):
            cell.taped.add(id(node))
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in cell.functions
            ):
                pending.append(cell.functions[node.func.id])


class CellLoops:
    """Parsed cells by source: the last few, so a cell run again costs a dict lookup."""

    def __init__(self) -> None:
        self._cells: dict[str, ParsedCell | None] = {}

    def parse(self, source: str) -> ParsedCell | None:
        if source in self._cells:
            return self._cells[source]
        parsed = _parse(source) if len(source) <= MAX_CELL_CHARS else None
        if len(self._cells) >= _CACHE_SIZE:
            self._cells.pop(next(iter(self._cells)))
        self._cells[source] = parsed
        return parsed


# ------------------------------------------------------------------ small readers
def method_of(call: ast.Call, method: str) -> str | None:
    """``m`` for a call ``m.<method>(...)`` on a plain name."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == method and isinstance(func.value, ast.Name):
        return func.value.id
    return None


def is_zero(node: ast.AST) -> bool:
    """``0``, ``0.0``, ``tf.constant(0.0)``, ``np.float32(0)``: a sum's start."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float) and node.value == 0
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        if call_name(node) in ("constant", "float32", "float64", "float", "int"):
            return is_zero(node.args[0])
    return False


def library_class_names(value: Any) -> set[str]:
    """Names of the Keras/TensorFlow classes ``value``'s type derives from (its MRO read
    from the type itself: no ``isinstance``, no metaclass hook)."""
    try:
        mro = mro_of_class(type(value))
    except Exception:
        return set()
    found = set()
    for klass in mro:
        try:
            module = module_of_class(klass)
        except Exception:
            continue
        if type(module) is str and module.partition(".")[0] in ("keras", "tensorflow", "tf_keras"):
            found.add(klass.__name__)
    return found


def _int_value(node: ast.AST, namespace: Mapping[str, Any]) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name) and type(namespace.get(node.id)) is int:
        return int(namespace[node.id])
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub)
        and (left := _int_value(node.left, namespace)) is not None
        and (right := _int_value(node.right, namespace)) is not None
    ):
        return left + right if isinstance(node.op, ast.Add) else left - right
    return None


def iterations_ran(cell: ParsedCell, loop: Loop, namespace: Mapping[str, Any]) -> int | None:
    """How many times ``for <name> in range(...)`` ran: from the name's value after the
    cell when the loop is at the cell's level, else the range's length when nothing in
    the body can leave it early. None when unknown."""
    if not isinstance(loop, ast.For) or not isinstance(loop.iter, ast.Call):
        return None
    if not (isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == "range"):
        return None
    arguments = [_int_value(a, namespace) for a in loop.iter.args]
    if not arguments or None in arguments or loop.iter.keywords:
        return None
    bounds = [a for a in arguments if a is not None]
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds[:2], 1)
    if len(bounds) == 3:
        step = bounds[2]
    if step <= 0:
        return None
    if cell.enclosing_function(loop) is None and isinstance(loop.target, ast.Name):
        last = namespace.get(loop.target.id)
        if type(last) is int and start <= last < stop:
            return (last - start) // step + 1
        return None
    leaves = any(
        isinstance(n, ast.Break | ast.Return | ast.Raise) for n in cell.statements_in(loop)
    )
    return None if leaves else max(0, (stop - start + step - 1) // step)


def function_tree(value: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The definition of a plain function or of a ``tf.function``'s Python function (read
    from what TensorFlow stores), parsed from the source IPython keeps for its cell."""
    function = value
    if type(value) is not types.FunctionType:
        attributes = _instance_attributes(value)
        function = attributes.get("_python_function") if attributes is not None else None
        if type(function) is not types.FunctionType:
            return None
    found = function_definition(function.__code__, 4 * MAX_CELL_CHARS)
    return found[1] if found is not None else None


def _instance_attributes(value: Any) -> dict[str, Any] | None:
    if "Function" not in library_class_names(value):
        return None
    return instance_dict(value)
