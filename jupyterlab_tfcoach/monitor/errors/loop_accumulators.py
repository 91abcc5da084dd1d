"""A loop's accumulator started as an integer and then given floats.

``total = 0`` before ``for step in tf.range(n):`` (or a loop over a dataset, or a
``while`` on a tensor) inside a ``tf.function``: AutoGraph turns the loop into a
``tf.while_loop`` whose loop variables keep one dtype, and ``0`` becomes an int32 tensor.
``total += tf.reduce_sum(x)`` with ``x`` float then raises a dtype mismatch on the
``AddV2`` op, and ``total = tf.reduce_sum(x)`` raises ``'total' has dtype int32 before the
loop, but dtype float32 after one iteration``. Casting inside the loop (what a generic
dtype fix says) only moves the error to the second message: the fix is where the variable
starts. The statement that starts it is read from the cell's source: the last assignment
to the name, in the function that holds the loop, before the loop begins. Its value is
rewritten in the user's words: an int literal becomes a float literal (``0`` -> ``0.0``),
``tf.constant(0)`` -> ``tf.constant(0.0)``, anything else is cast; a float dtype other
than float32 is spelled out, since a Python float starts a float32 loop variable.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, rewrite

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True)
class AccumulatorStart:
    """Where a loop variable starts, and that statement started as a float."""

    statement: str  # ``total = 0``
    line: int
    fixed: str  # ``total = 0.0``


def enclosing_statements(tree: ast.Module, line: int) -> list[ast.stmt]:
    """The statements containing ``line``, outermost first."""
    chain: list[ast.stmt] = []
    body: list[ast.stmt] = tree.body
    while True:
        inner = next(
            (s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)),
            None,
        )
        if inner is None:
            return chain
        chain.append(inner)
        body = [
            child
            for name in ("body", "orelse", "finalbody")
            for child in getattr(inner, name, []) or []
            if isinstance(child, ast.stmt)
        ]
        for handler in getattr(inner, "handlers", []) or []:
            body.extend(handler.body)


def _scope_statements(scope: ast.AST) -> list[ast.stmt]:
    """The statements of a function (or a cell) without those of nested definitions."""
    found: list[ast.stmt] = []
    pending = list(getattr(scope, "body", []))
    while pending:
        statement = pending.pop()
        found.append(statement)
        if isinstance(statement, _NESTED):
            continue
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                pending.append(child)
            elif isinstance(child, ast.excepthandler):
                pending.extend(child.body)
    return found


def _assigns(statement: ast.stmt, name: str) -> ast.expr | None:
    """The value ``statement`` binds to ``name`` alone (``name = value``)."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            return statement.value
    if isinstance(statement, ast.AnnAssign) and statement.value is not None:
        target = statement.target
        if isinstance(target, ast.Name) and target.id == name:
            return statement.value
    return None


def _binds_in(loop: ast.stmt, name: str) -> bool:
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
    return False


def _int_literal(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_literal(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _started_as_float(value: ast.expr, source: str, dtype: str, tf: str) -> str:
    """The start value written as a float of ``dtype``, in the user's words."""
    number = _int_literal(value)
    as_float = f"{float(number)!r}" if number is not None else None
    if as_float is not None:
        if dtype == "float32":
            return as_float
        return f"{tf}.constant({as_float}, dtype={tf}.{dtype})"
    if (
        isinstance(value, ast.Call)
        and (getattr(value.func, "attr", None) or getattr(value.func, "id", None)) == "constant"
        and len(value.args) == 1
        and not value.keywords
    ):
        inner = _int_literal(value.args[0])
        func = ast.get_source_segment(source, value.func)
        if inner is not None and func:
            dtype_part = "" if dtype == "float32" else f", dtype={tf}.{dtype}"
            return f"{func}({float(inner)!r}{dtype_part})"
    written = ast.get_source_segment(source, value) or ""
    return f"{tf}.cast({written}, {tf}.{dtype})"


def accumulator_start(frame: CellFrame, name: str, dtype: str, tf: str) -> AccumulatorStart | None:
    """Where ``name``, a variable of the loop around the failing line that the loop
    rebinds, starts (in the function holding the loop, before it), and that statement
    rewritten to start it as a ``dtype`` float. None when the failing line is in no loop
    or the start is not found in the cell."""
    tree = frame.tree()
    if tree is None or not name.isidentifier():
        return None
    chain = enclosing_statements(tree, frame.position.line)
    loops = [index for index, statement in enumerate(chain) if isinstance(statement, _LOOPS)]
    if not loops:
        return None
    loop = chain[loops[-1]]
    if not _binds_in(loop, name):
        return None
    scopes = [statement for statement in chain[: loops[-1]] if isinstance(statement, _SCOPES)]
    scope: ast.AST = scopes[-1] if scopes else tree
    source = frame.source()
    starts = [
        (statement, value)
        for statement in _scope_statements(scope)
        if (value := _assigns(statement, name)) is not None
        and (statement.end_lineno or statement.lineno) < loop.lineno
    ]
    if not starts:
        return None
    statement, value = max(starts, key=lambda pair: pair[0].lineno)
    written = ast.get_source_segment(source, statement)
    replacement = _started_as_float(value, source, dtype, tf)
    fixed = rewrite(frame, statement, value, replacement)
    if not written or not fixed or "\n" in written or "\n" in fixed:
        return None
    return AccumulatorStart(written, statement.lineno, fixed)
