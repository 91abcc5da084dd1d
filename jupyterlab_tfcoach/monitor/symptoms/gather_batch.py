"""A per-example gather written without ``batch_dims``: every example gets every choice.

``tf.gather(outs, top, axis=1)`` with ``outs`` ``(n, E, ...)`` and ``top`` ``(n,)`` (one
index per example: the expert, the class, the position each example picked) does not
pick ``outs[i, top[i]]``: it picks ``outs[:, top]``, all ``n`` indices for every row, a
``(n, n, ...)`` result. Anything reduced from it averages every example against every
other example's choice, and nothing raises. ``batch_dims=1`` makes the gather take one
index per row.

Read after a cell that completed (a cell without ``gather(`` costs one regular
expression search): a ``gather`` call at the cell's top level whose params and indices
are names holding a tensor or array ``(n, ...)`` of rank 2 or more and integer indices
``(n,)``, ``n`` > 1, with a literal ``axis`` of 1 or more, no ``batch_dims``, and an axis
length other than ``n`` (a square matrix gathered by a permutation of its columns is
meant). The note names both, the ``(n, n, ...)`` result (the name it was assigned to,
when it was), and the call with ``batch_dims=1``.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name, held_at, reference_path

SECTION = "joining-indexing"
WANTED = re.compile(r"\bgather\s*\(")
_HELD_KINDS = frozenset({"tensor", "variable", "array"})


def _held(node: ast.AST, namespace: dict[str, Any]) -> Any | None:
    path = reference_path(node)
    if path is None:
        return None
    found, value = held_at(path, namespace)
    if not found:
        return None
    operand = describe(".".join(path), value)
    if operand is None or operand.kind not in _HELD_KINDS or operand.shape is None:
        return None
    return operand


def _axis(call: ast.Call) -> int | None:
    given = [k.value for k in call.keywords if k.arg == "axis"]
    if len(call.args) >= 3:
        given.append(call.args[2])
    if len(given) != 1:
        return None
    node = given[0]
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def gather_batch_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    for node in code.nodes:
        if not (isinstance(node, ast.Call) and call_name(node) == "gather"):
            continue
        if len(node.args) < 2 or any(k.arg in ("batch_dims", "indices") for k in node.keywords):
            continue
        note = _note(code, node, namespace)
        if note is not None:
            return [note]
    return []


def _note(code: CellCode, call: ast.Call, namespace: dict[str, Any]) -> Note | None:
    axis = _axis(call)
    params, indices = _held(call.args[0], namespace), _held(call.args[1], namespace)
    if axis is None or params is None or indices is None:
        return None
    statement = code.statement_of(call)
    line = getattr(statement, "lineno", call.lineno)
    names = [params.source, indices.source]
    if code.rebound_after((names[0].split(".")[0],), line):
        return None
    if code.rebound_after((names[1].split(".")[0],), line):
        return None
    shape, index_shape = params.shape, indices.shape
    assert shape is not None and index_shape is not None
    rank = len(shape)
    if axis < 0:
        axis += rank
    if rank < 2 or not 1 <= axis < rank or len(index_shape) != 1:
        return None
    if not (indices.dtype or "").startswith(("int", "uint")):
        return None
    rows = shape[0]
    if rows is None or rows < 2 or index_shape[0] != rows or shape[axis] in (rows, None):
        return None
    result = (*shape[:axis], rows, *shape[axis + 1 :])
    fixed_shape = (*shape[:axis], *shape[axis + 1 :])
    written = code.segment(call)
    if written is None or not written.endswith(")"):
        return None
    fixed_call = f"{written[:-1]}, batch_dims=1)"
    target = None
    if (
        isinstance(statement, ast.Assign)
        and statement.value is call
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        target = statement.targets[0].id
    made = f"`{target}` is" if target else "the result is"
    fix = f"{target} = {fixed_call}" if target else fixed_call
    text = (
        f"`{written}` (line {line} of this cell) gives every row of `{names[0]}`, "
        f"{params.description}, all {rows} indices of `{names[1]}`, {indices.description}, "
        f"not one each: {made} {show_shape(result)}, each example against every example's "
        "choice, and whatever is computed from it mixes examples, without any error. To "
        f"take one index per row (`{names[0]}[i, {names[1]}[i]]`), gather with "
        f"`batch_dims=1`: `{fix}` (shape {show_shape(fixed_shape)})."
    )
    return reports.note(text, SECTION)
