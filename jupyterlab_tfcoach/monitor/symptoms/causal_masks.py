"""A causal attention mask built as the upper triangle: each position sees the future.

``tf.linalg.band_part(x, num_lower, num_upper)`` keeps ``num_lower`` diagonals below the
main one and ``num_upper`` above (-1: all of them). A causal mask, the positions a query
may attend to in next-token prediction, is the lower triangle, ``band_part(ones, -1, 0)``:
position i sees j <= i. ``band_part(ones, 0, -1)`` keeps the upper triangle instead;
used as the positions allowed, it lets each position read every later token, the answer
it is trained to predict, and hides the earlier ones. Nothing raises: training looks
excellent and generation, where no future exists, fails.

Told from the cell's source (after a completed cell holding ``band_part`` and one of
``softmax``, ``attention``, ``attend`` or ``mask``; nothing is run): a call named
``band_part`` with ``0, -1`` (literals, by position or as ``num_lower``/``num_upper``)
whose result is used as the positions allowed: subtracted from 1 (``(1 - m) * -1e9``,
the blocked ones), given as ``attention_mask=`` or ``mask=``, or assigned to a name with
a word such as ``allowed``, ``keep``, ``visible`` or ``causal``; directly or through the
name it is assigned to in the same function (or the cell's top level). A result used
otherwise (multiplied as the blocked positions, say) stays silent. The fix is the line
with the lower triangle, ``-1, 0``.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, function_scopes, int_literal, parsed_source
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "joining-indexing"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 1
_CACHED_SOURCES = 64
_CONTEXT = word_gate(r"softmax|attention|attend|mask", re.IGNORECASE)
_ALLOWED_WORDS = frozenset({"allowed", "allow", "keep", "visible", "causal", "attend", "see"})
_MASK_KEYWORDS = frozenset({"attention_mask", "mask"})


def _triangle(call: ast.Call) -> tuple[int, int] | None:
    """(num_lower, num_upper) of a ``band_part`` call written with literals."""
    values: dict[str, ast.expr] = {}
    for position, argument in zip(("input", "num_lower", "num_upper"), call.args, strict=False):
        values[position] = argument
    for keyword in call.keywords:
        if keyword.arg in ("num_lower", "num_upper"):
            values[keyword.arg] = keyword.value
    lower, upper = values.get("num_lower"), values.get("num_upper")
    if lower is None or upper is None:
        return None
    low, up = int_literal(lower), int_literal(upper)
    return (low, up) if low is not None and up is not None else None


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The scope's nodes, not those of functions or classes defined inside it; unlike
    ``syntax.scope_nodes`` a lambda's body is kept (a mask is often built in one)."""
    found: list[ast.AST] = []
    pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _words(name: str) -> set[str]:
    return {part for part in re.split(r"[_\d]+", name.lower()) if part}


def _use_as_allowed(node: ast.AST, parents: dict[int, ast.AST]) -> ast.AST | None:
    """The expression using ``node`` as the positions allowed, else None."""
    parent = parents.get(id(node))
    if (
        isinstance(parent, ast.BinOp)
        and isinstance(parent.op, ast.Sub)
        and parent.right is node
        and isinstance(parent.left, ast.Constant)
        and parent.left.value == 1
    ):
        return parent
    if isinstance(parent, ast.keyword) and parent.arg in _MASK_KEYWORDS:
        return parents.get(id(parent), parent)
    return None


def _use_as_blocked(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """``m * -1e9`` (or ``-1e9 * m``): ``m`` marks the positions hidden."""
    parent = parents.get(id(node))
    if not (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mult)):
        return False
    other = parent.right if parent.left is node else parent.left
    if isinstance(other, ast.UnaryOp) and isinstance(other.op, ast.USub):
        return isinstance(other.operand, ast.Constant | ast.Attribute | ast.Name)
    return isinstance(other, ast.Constant) and type(other.value) in (int, float) and other.value < 0


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "band_part" not in source:
        return []
    if _CONTEXT.search(source) is None:
        return []
    # A cell run again costs one lookup: what is told depends on its source alone.
    return [reports.note(text, SECTION) for text in _texts(source)]


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _texts(source: str) -> tuple[str, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    found: list[str] = []
    for scope in function_scopes(tree):
        nodes = _own_nodes(scope)
        parents: dict[int, ast.AST] = {}
        for node in nodes:
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
        for node in nodes:
            if len(found) >= MAX_NOTES:
                return tuple(found)
            if not (isinstance(node, ast.Call) and call_name(node) == "band_part"):
                continue
            if _triangle(node) != (0, -1):
                continue
            note = _note(node, nodes, parents, scope, source)
            if note is not None:
                found.append(note)
    return tuple(found)


def _note(
    call: ast.Call,
    nodes: list[ast.AST],
    parents: dict[int, ast.AST],
    scope: ast.AST,
    source: str,
) -> str | None:
    use = _use_as_allowed(call, parents)
    statement = parents.get(id(call))
    name: str | None = None
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        name = statement.targets[0].id
    if use is None and name is not None:
        loads = [
            node
            for node in nodes
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
        ]
        if any(_use_as_blocked(node, parents) for node in loads):
            return None  # the positions hidden: a different mistake, not this one
        use = next((u for u in (_use_as_allowed(n, parents) for n in loads) if u), None)
        if use is None and _words(name) & _ALLOWED_WORDS:
            use = statement
    if use is None:
        return None
    line_node = call
    while line_node is not None and not isinstance(line_node, ast.stmt):
        line_node = parents.get(id(line_node))
    if line_node is None:
        return None
    line = ast.get_source_segment(source, line_node)
    written = ast.get_source_segment(source, call)
    if line is None or written is None or "\n" in line:
        return None
    fixed_call = _lower_triangle(call, source)
    if fixed_call is None or written not in line:
        return None
    fixed = line.replace(written, fixed_call, 1)
    used = ast.get_source_segment(source, use) if use is not line_node else None
    what = f"`{name}`" if name is not None else "the result"
    if used and "\n" not in used:
        what += f", read as `{used}` on line {getattr(use, 'lineno', call.lineno)}"
    where = ""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        where = f", in `{scope.name}`"
    text = (
        f"`{written}` (line {call.lineno} of this cell{where}) keeps the upper triangle: row i "
        f"keeps the columns j >= i. Used as the positions each query may attend to "
        f"({what}), it lets every position see all the later ones, the tokens it is "
        "meant to predict, and hides the earlier ones: the causal mask is reversed. Nothing "
        "raises; the training loss looks excellent, and generation, where the future is "
        "not there, fails. A causal mask is the lower triangle (num_lower=-1: every "
        f"diagonal below, num_upper=0: none above). Fix: `{fixed}`."
    )
    return text


def _lower_triangle(call: ast.Call, source: str) -> str | None:
    """The call as written with its two counts as ``-1, 0``."""
    written = ast.get_source_segment(source, call)
    if written is None or not written.isascii():
        return None
    pieces: list[tuple[int, int, str]] = []
    arguments = {"num_lower": "-1", "num_upper": "0"}
    for position, argument in zip(("input", "num_lower", "num_upper"), call.args, strict=False):
        if position in arguments:
            pieces.append((argument.col_offset, argument.end_col_offset or 0, arguments[position]))
    for keyword in call.keywords:
        if keyword.arg in arguments:
            value = keyword.value
            pieces.append((value.col_offset, value.end_col_offset or 0, arguments[keyword.arg]))
    if len(pieces) != 2 or any(
        getattr(node, "lineno", 0) != call.lineno for node in [*call.args, call]
    ):
        return None
    fixed = written
    for start, end, text in sorted(pieces, reverse=True):
        fixed = fixed[: start - call.col_offset] + text + fixed[end - call.col_offset :]
    return fixed
