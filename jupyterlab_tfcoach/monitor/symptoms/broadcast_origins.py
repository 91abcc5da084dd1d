"""Which statement made the ``(N,)`` operand of a silent ``(N, 1)``-against-``(N,)`` broadcast.

``broadcast.py`` and ``call_broadcast.py`` find the broadcast where the shapes meet, often
in a loss function: ``tf.reduce_mean((net(w, x) - y) ** 2)``. The vector usually got its
shape elsewhere: ``y = f(x[:, 0])`` in the training loop of the cell that calls the loss
through a ``tf.function``. ``follow_operand`` follows the operand's name outwards through
the learner's frames (the graph op's traceback, or the running frames of an eager call),
innermost first, library frames left out: a parameter the function never rebinds is what
its caller's line passed for it, by position or keyword, when that argument is a plain
name; a name the function assigns is its local; a name it only reads is a notebook
global. The walk ends at the cell's top level (``<module>``) or at a function's local.
``vector_origin`` then reads that name's newest assignment before the line and the part of
it that dropped or never had the axis (``errors/axis_origins.py``, shared with the error
families). Only syntax and the frames' file names and lines are read while a graph is
scanned; values (shapes, scalars) are read after the cell, from the namespace.
"""

from __future__ import annotations

import ast
import linecache
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.errors.axis_origins import AxisOrigin, axis_origin, statement_of
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.syntax import call_name, function_node

MAX_FRAMES = 8
_MODULE = "<module>"


@dataclass(frozen=True)
class OriginQuery:
    """``name`` as read at ``line`` of ``filename``: at the cell's top level, or a local of
    ``function``."""

    name: str
    filename: str
    line: int
    function: str = _MODULE


def _assigned(node: ast.FunctionDef) -> set[str]:
    return {
        name.id
        for name in ast.walk(node)
        if isinstance(name, ast.Name) and not isinstance(name.ctx, ast.Load)
    }


def _argument(line: str, function: str, parameters: list[str], name: str) -> ast.AST | None:
    """What the one call of ``function`` on ``line`` passes for parameter ``name``."""
    for candidate in (line, line + " pass"):
        try:
            tree = ast.parse(candidate)
        except SyntaxError:
            continue
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and call_name(n) == function]
        if len(calls) != 1:
            return None
        call = calls[0]
        if parameters[:1] == ["self"] and isinstance(call.func, ast.Attribute):
            parameters = parameters[1:]
        if any(isinstance(a, ast.Starred) for a in call.args):
            return None
        given: dict[str, ast.AST] = dict(zip(parameters, call.args, strict=False))
        given.update({kw.arg: kw.value for kw in call.keywords if kw.arg})
        return given.get(name)
    return None


def follow_operand(
    name: str, frames: list[tuple[str, int, str]], cell_files: Mapping[str, int]
) -> OriginQuery | None:
    """Where the value ``name`` holds in the innermost of ``frames`` (file, line, function;
    innermost first, the learner's cell frames only) was given its name: the top level of
    a cell, or a function's local."""
    frames = [frame for frame in frames if frame[0] in cell_files][:MAX_FRAMES]
    index = 0
    while index < len(frames):
        filename, line, function = frames[index]
        if function == _MODULE:
            return OriginQuery(name, filename, line)
        node = function_node(filename, line, function)
        if node is None:
            return None
        parameters = [arg.arg for arg in node.args.args]
        assigned = _assigned(node)
        if name in assigned:
            return OriginQuery(name, filename, line, function)
        if name not in parameters:
            # A global the function reads: made at the top level of the outermost cell frame.
            outer = frames[-1]
            return OriginQuery(name, outer[0], outer[1]) if outer[2] == _MODULE else None
        index += 1
        if index >= len(frames):
            return None
        caller = frames[index]
        argument = _argument(
            linecache.getline(caller[0], caller[1]).strip(), function, parameters, name
        )
        if not isinstance(argument, ast.Name):
            return None
        name = argument.id
    return None


def _same_shape(shape: tuple[int | None, ...] | None, wanted: tuple[int | None, ...]) -> bool:
    if shape is None or len(shape) != len(wanted):
        return False
    return all(w is None or s == w for s, w in zip(shape, wanted, strict=True))


def vector_origin(
    query: OriginQuery,
    flat_shape: tuple[int | None, ...],
    cell_files: Mapping[str, int],
    where: Callable[[str, int], str],
    namespace: Mapping[str, Any],
) -> AxisOrigin | None:
    """The statement that made ``query.name`` the ``flat_shape`` vector, when a top-level
    name still holds a vector of that shape (it was not rebound since) or a function's
    local was made in the function before the line."""
    body: list[ast.stmt] | None = None
    if query.function != _MODULE:
        node = function_node(query.filename, query.line, query.function)
        if node is None:
            return None
        body = node.body
    else:
        held = namespace.get(query.name) if query.name in namespace else None
        described = describe(query.name, held) if held is not None else None
        if described is None or not _same_shape(described.shape, flat_shape):
            return None
    made = statement_of(query.name, query.filename, query.line, cell_files, where, body)
    if made is None:
        return None
    return axis_origin(made, query.name, namespace)
