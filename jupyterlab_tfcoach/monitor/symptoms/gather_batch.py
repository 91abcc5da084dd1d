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

The same gather inside a function the cell defines, on two of the function's parameters,
is read with what a call of that function in the cell passes: names holding arrays or
tensors, or ``model(x)``, whose shape is the rows of ``x`` and the model's output width
(read from what Keras stored, nothing is run). The note then names the function and the
call, and the fix is the function's own line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import Operand, describe, show_shape
from jupyterlab_tfcoach.monitor.errors.families_model_data import model_output_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name, held_at, parsed_source, reference_path

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


def _plain_gather(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and call_name(node) == "gather"
        and len(node.args) >= 2
        and not any(k.arg in ("batch_dims", "indices") for k in node.keywords)
    )


def gather_batch_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    for node in code.nodes:
        if not _plain_gather(node):
            continue
        note = _note(code, node, namespace)
        if note is not None:
            return [note]
    note = _function_note(code, namespace)
    return [note] if note is not None else []


def _note(code: CellCode, call: ast.Call, namespace: dict[str, Any]) -> Note | None:
    assert isinstance(call, ast.Call)
    params, indices = _held(call.args[0], namespace), _held(call.args[1], namespace)
    if params is None or indices is None:
        return None
    statement = code.statement_of(call)
    line = getattr(statement, "lineno", call.lineno)
    names = [params.source, indices.source]
    if code.rebound_after((names[0].split(".")[0],), line):
        return None
    if code.rebound_after((names[1].split(".")[0],), line):
        return None
    return _checked_note(code, call, statement, params, indices, None)


def _checked_note(
    code: CellCode,
    call: ast.Call,
    statement: ast.stmt | None,
    params: Any,
    indices: Any,
    called: tuple[str, str] | None,
) -> Note | None:
    """The note when ``params`` (n, ..., k, ...) is gathered along axis k != n by ``indices``
    (n,) integers; ``called`` is (the function, its call) when the gather is in a function
    of the cell and the operands are what that call passed."""
    axis = _axis(call)
    if axis is None:
        return None
    line = getattr(statement, "lineno", call.lineno)
    names = [params.source, indices.source]
    shape, index_shape = params.shape, indices.shape
    assert shape is not None and index_shape is not None
    rank = len(shape)
    if axis < 0:
        axis += rank
    if rank < 2 or not 1 <= axis < rank or len(index_shape) not in (1, 2):
        return None
    if not (indices.dtype or "").startswith(("int", "uint")):
        return None
    rows = shape[0]
    if rows is None or rows < 2 or index_shape[0] != rows or shape[axis] in (rows, None):
        return None
    # (n, k) indices: k picks per row (a top-k's indices), each row given all n rows' lists.
    result = (*shape[:axis], *index_shape, *shape[axis + 1 :])
    fixed_shape = (*shape[:axis], *index_shape[1:], *shape[axis + 1 :])
    given = (
        f"all {rows} indices of `{names[1]}`, {indices.description}, not one each"
        if len(index_shape) == 1
        else f"the index rows of all {rows} rows of `{names[1]}`, {indices.description}, "
        "not its own row of them"
    )
    picked = (
        f"`{names[0]}[i, {names[1]}[i]]`"
        if len(index_shape) == 1
        else f"`{names[0]}[i][{names[1]}[i]]`"
    )
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
    if called is not None:
        function, call_text = called
        returned = isinstance(statement, ast.Return) and statement.value is call
        fix = f"return {fixed_call}" if returned else fix
        text = (
            f"`{written}` in `{function}` (line {line} of this cell), called as "
            f"`{call_text}`, gives every row of `{names[0]}`, {params.description}, "
            f"{given}: the result is {show_shape(result)}, each example against every "
            "example's choice, "
            "and whatever is computed from it (a loss against one target per example "
            "broadcasts to every pair) mixes examples, without any error. To take each "
            f"row's own indices ({picked}), gather with `batch_dims=1`: "
            f"`{fix}` (shape {show_shape(fixed_shape)})."
        )
        return reports.note(text, SECTION)
    text = (
        f"`{written}` (line {line} of this cell) gives every row of `{names[0]}`, "
        f"{params.description}, {given}: {made} {show_shape(result)}, each example "
        "against every example's choice, and whatever is computed from it mixes examples, "
        f"without any error. To take each row's own indices ({picked}), gather with "
        f"`batch_dims=1`: `{fix}` (shape {show_shape(fixed_shape)})."
    )
    return reports.note(text, SECTION)


def _function_note(code: CellCode, namespace: dict[str, Any]) -> Note | None:
    """A ``gather`` in a function the cell defines, whose params and indices are the
    function's parameters, read with the values a call of it in the cell passes: names
    holding arrays or tensors, or a Keras model applied to one (its output's shape from
    the model, its rows from the input's)."""
    tree = parsed_source(code.source)
    if tree is None:
        return None
    for definition in tree.body:
        if not isinstance(definition, ast.FunctionDef):
            continue
        parameters = [a.arg for a in definition.args.args]
        for statement in definition.body:
            for node in ast.walk(statement):
                if not _plain_gather(node):
                    continue
                assert isinstance(node, ast.Call)
                operands = [n.id if isinstance(n, ast.Name) else None for n in node.args[:2]]
                if not all(o in parameters for o in operands) or _rebinds(definition, operands):
                    continue
                for use in code.nodes:
                    note = _called_note(code, definition, statement, node, use, namespace)
                    if note is not None:
                        return note
    return None


def _rebinds(definition: ast.FunctionDef, names: list[str | None]) -> bool:
    return any(
        isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in names
        for n in ast.walk(definition)
    )


def _called_note(
    code: CellCode,
    definition: ast.FunctionDef,
    statement: ast.stmt,
    gather: ast.Call,
    use: ast.AST,
    namespace: dict[str, Any],
) -> Note | None:
    if not (
        isinstance(use, ast.Call)
        and isinstance(use.func, ast.Name)
        and use.func.id == definition.name
        and not any(isinstance(a, ast.Starred) for a in use.args)
    ):
        return None
    parameters = [a.arg for a in definition.args.args]
    bound: dict[str, ast.expr] = dict(zip(parameters, use.args, strict=False))
    bound.update({k.arg: k.value for k in use.keywords if k.arg})
    operands = []
    for node in gather.args[:2]:
        assert isinstance(node, ast.Name)
        passed = bound.get(node.id)
        read = _passed(passed, node.id, namespace) if passed is not None else None
        if read is None:
            return None
        operands.append(read)
    call_text = code.segment(use)
    if call_text is None:
        return None
    return _checked_note(
        code, gather, statement, operands[0], operands[1], (definition.name, call_text)
    )


def _passed(node: ast.expr, parameter: str, namespace: dict[str, Any]) -> Any | None:
    """What a call passed for ``parameter``, described under the parameter's name: a held
    array or tensor, or ``model(x)`` with ``x`` held, shaped (rows of x, *model's output)."""
    held = _held(node, namespace)
    if held is not None:
        return replace(held, source=parameter)
    if not (isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred)):
        return None
    path = reference_path(node.func)
    if path is None:
        return None
    found, model = held_at(path, namespace)
    if not found or value_kind(model) != "model":
        return None
    given = _held(node.args[0], namespace)
    output = model_output_shape(model)
    if given is None or not given.shape or output is None or len(output) < 2:
        return None
    shape = (given.shape[0], *output[1:])
    if any(d is None for d in shape):
        return None
    return Operand(
        parameter, "tensor", f"a {show_shape(shape)} tensor from `{'.'.join(path)}`", shape
    )
