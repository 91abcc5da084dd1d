"""Small readers of a cell's syntax tree and of what its names hold, shared by the checks.

The symptom checks (``symptoms/``) and the custom-loop causes (``variables/``) read the
user's code with ``ast`` and the values its names hold after the cell; these are the pieces
they all need. Values are read as Keras and TensorFlow store them (``instance_attribute``:
an instance's own ``__dict__``), never through a property that could run user code.

``parsed_source`` parses a cell's source once for all the checks that read it after the
cell (the broadcast scan, the reshape check, the hand metrics, the custom-loop checks, the
rebinding statements): each used to parse the same source again.
"""

from __future__ import annotations

import ast
import functools
import linecache
import re
import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeGuard

from jupyterlab_tfcoach.monitor.errors.cell_sources import top_assignments
from jupyterlab_tfcoach.monitor.errors.context import instance_attribute

# A cell's source and the variants the checks parse (IPython's magic lines blanked) are a
# few strings per cell: the last few trees serve every check of a cell, and a cell run
# again unchanged. Only source text and syntax trees are kept, never a user object.
_PARSED_SOURCES = 16


@functools.lru_cache(maxsize=_PARSED_SOURCES)
def parsed_source(source: str) -> ast.Module | None:
    """``source``'s syntax tree, parsed once however many checks read it; None when it is
    not Python (or too deep or too large for the parser). Shared: callers only read it."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def function_node(filename: str, line: int, name: str) -> ast.FunctionDef | None:
    """The ``def name`` of the source ``filename`` (a cell or a file, as ``linecache``
    holds it) whose body holds line ``line``."""
    tree = parsed_source("".join(linecache.getlines(filename)))
    if tree is None:
        return None
    for node in walk_nodes(tree):
        if (
            isinstance(node, ast.FunctionDef)
            and node.name == name
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            return node
    return None


def last_assignment_before(
    tree: ast.Module, name: str, line: int, *, one_line: bool = False
) -> ast.Assign | None:
    """The cell's last top-level ``name = ...`` that starts before ``line`` (only one-line
    statements with ``one_line``, for checks that print the statement back)."""
    found = None
    for statement in tree.body:
        if statement.lineno >= line:
            break
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name
            and (not one_line or statement.lineno == statement.end_lineno)
        ):
            found = statement
    return found


# Each parsed cell's nodes in ``ast.walk`` order, listed once: a dozen checks walk the whole
# tree of an edited cell, and a list read is several times cheaper than a walk. Keyed by the
# tree's id with the tree kept beside it (an id is only reused once its tree is gone), for
# the few trees ``parsed_source`` keeps; only syntax trees are held, never a user object.
# The other readings of a whole tree that many checks repeat (its scopes, the code outside
# them) are kept the same way, one table per reading.
_WALKED: dict[int, tuple[ast.AST, list[ast.AST]]] = {}
_FUNCTION_SCOPES: dict[int, tuple[ast.AST, list[ast.AST]]] = {}
_OUTSIDE_SCOPES: dict[int, tuple[ast.AST, list[ast.AST]]] = {}


def _kept(
    table: dict[int, tuple[ast.AST, list[ast.AST]]],
    tree: ast.AST,
    read: Callable[[ast.AST], list[ast.AST]],
) -> list[ast.AST]:
    """``read(tree)``, made once per tree while ``table`` keeps it."""
    held = table.get(id(tree))
    if held is not None and held[0] is tree:
        return held[1]
    nodes = read(tree)
    if len(table) >= _PARSED_SOURCES:
        table.pop(next(iter(table)))
    table[id(tree)] = (tree, nodes)
    return nodes


def walk_nodes(tree: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(tree))`` for a tree from ``parsed_source``, made once per tree.
    Shared like the tree: callers only read the list."""
    return _kept(_WALKED, tree, lambda node: _read_children(node)[0])


# Each tree's nodes' children (``ast.iter_child_nodes``), by the node's id, and its nodes in
# ``ast.walk`` order: the readers that visit a cell node by node (parents, scopes,
# expressions) each asked every node for its children again, the larger part of reading an
# edited cell; the order is kept too, so that asking for the table costs one lookup, not a
# new walk over it. Kept like ``_WALKED``.
_CHILDREN: dict[int, tuple[ast.AST, list[ast.AST], dict[int, tuple[ast.AST, ...]]]] = {}


def _read_children(
    tree: ast.AST,
) -> tuple[list[ast.AST], dict[int, tuple[ast.AST, ...]]]:
    """The tree's nodes in ``ast.walk`` order and each node's children, in one walk, made
    once per tree. Shared: callers only read them."""
    held = _CHILDREN.get(id(tree))
    if held is not None and held[0] is tree:
        return held[1], held[2]
    table: dict[int, tuple[ast.AST, ...]] = {}
    order: list[ast.AST] = [tree]
    index = 0
    while index < len(order):
        node = order[index]
        index += 1
        children = tuple(ast.iter_child_nodes(node))
        table[id(node)] = children
        order.extend(children)
    if len(_CHILDREN) >= _PARSED_SOURCES:
        _CHILDREN.pop(next(iter(_CHILDREN)))
    _CHILDREN[id(tree)] = (tree, order, table)
    return order, table


def child_nodes(tree: ast.AST) -> dict[int, tuple[ast.AST, ...]]:
    """Each node of ``tree`` (by id) with its children in ``ast.iter_child_nodes`` order,
    made once per tree. Shared: callers only read it; ``children`` reads one node's."""
    return _read_children(tree)[1]


def children(table: Mapping[int, tuple[ast.AST, ...]], node: ast.AST) -> tuple[ast.AST, ...]:
    """``tuple(ast.iter_child_nodes(node))``, from ``table`` (``child_nodes``) when the node
    is in its tree (a node alive in that tree is the only one with its id)."""
    found = table.get(id(node))
    return found if found is not None else tuple(ast.iter_child_nodes(node))


def subtree_nodes(node: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(node))``, the same nodes in the same order, read from the children
    table of the kept tree ``node`` belongs to (``child_nodes``), else walked: a walk asks
    every node for its children field by field, the larger part of the checks that read
    the statements of an edited cell one by one. A node alive in a kept tree is the only
    one with its id, so the table found is its own."""
    key = id(node)
    for _tree, _order, table in reversed(_CHILDREN.values()):
        if key in table:
            order = [node]
            index = 0
            while index < len(order):
                order.extend(table.get(id(order[index])) or ())
                index += 1
            return order
    return list(ast.walk(node))


# A line with its end (``\r\n``, ``\r`` or ``\n``), as the parser splits lines: not at form
# feeds, which ``str.splitlines`` also splits at.
_SOURCE_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


@functools.lru_cache(maxsize=_PARSED_SOURCES)
def _source_lines(source: str) -> tuple[str, ...]:
    return tuple(_SOURCE_LINE.findall(source))


def source_segment(source: str, node: ast.AST) -> str | None:
    """``ast.get_source_segment(source, node)``, the same text, with ``source`` split into
    lines once for all the segments read from it (``ast`` splits it again for each one,
    character by character: a good part of reading an edited cell)."""
    try:
        if node.end_lineno is None or node.end_col_offset is None:  # type: ignore[attr-defined]
            return None
        lineno = node.lineno - 1  # type: ignore[attr-defined]
        end_lineno = node.end_lineno - 1  # type: ignore[attr-defined]
        col_offset = node.col_offset  # type: ignore[attr-defined]
        end_col_offset = node.end_col_offset  # type: ignore[attr-defined]
    except AttributeError:
        return None
    lines = _source_lines(source)
    if end_lineno == lineno:
        return lines[lineno].encode()[col_offset:end_col_offset].decode()
    first = lines[lineno].encode()[col_offset:].decode()
    last = lines[end_lineno].encode()[:end_col_offset].decode()
    return "".join((first, *lines[lineno + 1 : end_lineno], last))


# Nodes that open a scope of their own (their names are not the enclosing scope's).
SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def scope_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of one scope (a module or a ``def``), in source order, without the bodies
    of the scopes nested in it."""
    found: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        found.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, SCOPE_NODES):
                visit(child)

    for statement in getattr(scope, "body", []):
        if not isinstance(statement, SCOPE_NODES):
            visit(statement)
    return found


def function_scopes(tree: ast.Module) -> list[ast.AST]:
    """The cell itself and every ``def`` in it, nested ones too: the scopes a reading that
    works per scope visits (with ``scope_nodes``). Made once per tree: callers only read it."""
    return _kept(_FUNCTION_SCOPES, tree, _function_scopes)


def _function_scopes(tree: ast.AST) -> list[ast.AST]:
    return [tree] + [
        node
        for node in walk_nodes(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def scope_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A scope's statements in source order, those in its ``if``/``for``/``with``/``try``
    blocks included, nested ``def``/``class`` bodies left out (they are scopes of their own)."""
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield statement
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list):
                yield from scope_statements(inner)


def outside_scopes(tree: ast.Module) -> list[ast.AST]:
    """The cell and every node of it outside ``def``/``class``/``lambda`` bodies, in source
    order: the code that runs when the cell runs (a body is read where it is called). Made
    once per tree: callers only read it."""
    return _kept(_OUTSIDE_SCOPES, tree, _outside_scopes)


def _outside_scopes(tree: ast.AST) -> list[ast.AST]:
    table = child_nodes(tree)
    found: list[ast.AST] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, SCOPE_NODES):
            continue
        found.append(node)
        pending.extend(reversed(children(table, node)))
    return found


def line_with_replacement(
    lines: list[str], statement: ast.AST, node: ast.AST, text: str
) -> str | None:
    """The one line ``statement`` is written on, with ``node`` (on that line) replaced by
    ``text`` and stripped: a fix in the learner's own line. None for a statement over
    several lines or a node elsewhere."""
    line_no = getattr(statement, "lineno", 0)
    if line_no != getattr(statement, "end_lineno", -1) or not 0 < line_no <= len(lines):
        return None
    if getattr(node, "lineno", 0) != line_no or getattr(node, "end_col_offset", None) is None:
        return None
    # Column offsets count UTF-8 bytes.
    raw = lines[line_no - 1].encode("utf-8")
    start, stop = getattr(node, "col_offset", 0), getattr(node, "end_col_offset", 0)
    return (raw[:start] + text.encode("utf-8") + raw[stop:]).decode("utf-8").strip()


def call_name(call: ast.Call) -> str | None:
    """``mean`` for ``tf.reduce.mean(...)``'s last part, ``len`` for ``len(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def method_calls(source: str, receiver: str, method: str) -> list[ast.Call]:
    """Every ``receiver.method(...)`` call in the cell (``model.fit(...)`` for ``model``,
    ``fit``), in walk order; none when the cell does not parse."""
    tree = parsed_source(source)
    if tree is None:
        return []
    return [
        node
        for node in walk_nodes(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == receiver
    ]


def tape_names(statement: ast.With) -> list[str]:
    """The names a ``with tf.GradientTape() as tape:`` statement binds its tapes to, in
    order (``["outer", "inner"]`` for two tapes in one ``with``); empty for another block."""
    return [
        item.optional_vars.id
        for item in statement.items
        if isinstance(item.context_expr, ast.Call)
        and call_name(item.context_expr) == "GradientTape"
        and isinstance(item.optional_vars, ast.Name)
    ]


def is_tape_gradient(node: ast.AST, tape: str) -> TypeGuard[ast.Call]:
    """``node`` is a call ``<tape>.gradient(...)`` of the tape named ``tape``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "gradient"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == tape
    )


def reference_path(node: ast.AST) -> tuple[str, ...] | None:
    """``("model", "out")`` for ``model.out``; None for anything but a name or attributes."""
    chain: list[str] = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return (node.id, *reversed(chain))


def dotted_name(node: ast.AST) -> str | None:
    """``"model.out"`` for ``model.out``; None for anything but a name or attributes."""
    path = reference_path(node)
    return ".".join(path) if path is not None else None


def self_attribute_name(node: ast.AST) -> str | None:
    """``x`` for the expression ``self.x``, else None."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return node.attr
    return None


def numpy_name(namespace: Mapping[str, Any]) -> str | None:
    """The name the learner's namespace holds NumPy under (``np`` or ``numpy``)."""
    for name in ("np", "numpy"):
        value = namespace.get(name)
        if isinstance(value, types.ModuleType) and value.__name__ == "numpy":
            return name
    return None


def int_literal(node: ast.expr) -> int | None:
    """The int written as ``1`` or ``-1`` (an axis, a count); None for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return int(node.value)
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -int(node.operand.value)
    return None


def number_literal(node: ast.AST | None) -> float | None:
    """The number written as ``2``, ``0.5`` or ``-1.5`` (a bound, a constant), as a float;
    None for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = number_literal(node.operand)
        return -inner if inner is not None else None
    return None


# Reductions that read a spread from repeated values: a standard deviation, a variance, a
# percentile or quantile (NumPy, TensorFlow, their NaN-ignoring forms, ``tf.nn.moments``).
SPREAD_REDUCTIONS = frozenset(
    {
        "std",
        "var",
        "nanstd",
        "nanvar",
        "reduce_std",
        "reduce_variance",
        "percentile",
        "quantile",
        "nanpercentile",
        "nanquantile",
        "moments",
    }
)


def held_at(path: tuple[str, ...] | None, namespace: dict[str, Any]) -> tuple[bool, Any]:
    """What ``model.out`` (as a path) holds in ``namespace`` now: (found, value)."""
    if path is None or path[0] not in namespace:
        return False, None
    value = namespace[path[0]]
    for attribute in path[1:]:
        found, value = instance_attribute(value, attribute)
        if not found:
            return False, None
    return True, value


def history_assignments(
    name: str, namespace: Mapping[str, Any], cells: int, max_chars: int
) -> Iterator[tuple[ast.Assign, str]]:
    """Each top-level ``name = ...`` of the last ``cells`` cells of the history ``In``,
    newest first, with its cell's source; cells not naming ``name`` or longer than
    ``max_chars`` are not parsed. Read lazily: a caller stops at the one it wants."""
    history = namespace.get("In")
    if type(history) is not list:
        return
    for source in reversed(history[-cells:]):
        if type(source) is not str or name not in source or len(source) > max_chars:
            continue
        tree = parsed_source(source)
        if tree is not None:
            for statement in top_assignments(tree, name):
                yield statement, source


def function_definition(
    code: types.CodeType, max_chars: int
) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The source of the cell (or file) that defines ``code``, as linecache keeps it (IPython
    registers each cell), and the ``def`` there; None past ``max_chars`` or if not found."""
    try:
        source = "".join(linecache.getlines(code.co_filename))
        if not source or len(source) > max_chars:
            return None
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name == code.co_name
                # A decorated function's code starts at its first decorator's line.
                and min([node.lineno, *(d.lineno for d in node.decorator_list)])
                <= code.co_firstlineno
                <= node.body[0].lineno
            ):
                return source, node
    except Exception:
        return None
    return None
