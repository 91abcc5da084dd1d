"""An operand of a shape error made by a gather that took whole rows (issue #25).

``picked = tf.gather(scores, choice)`` with ``scores`` ``(N, K)`` and ``choice`` one
integer per row (``(N,)``, every value below ``K``) was meant to take ``scores[i,
choice[i]]``, one entry per row. Without ``batch_dims=1`` a gather picks along axis 0:
each index takes a whole row, and the result is ``(N, K)``. Combined element-wise with
a per-row value ``(N,)`` it fails; an axis added to that value would make the line run
and weigh every entry of the picked rows, a wrong result with no error. The cause is the
gather, upstream of the failing line.

Read from the failing line's values: an operand that is one side of the error, ``(N, K,
...)``, against a side ``(N, ...)`` (the operand with its axis 1 gone), made by a
``gather`` call (TensorFlow's, read through the module the name is bound to) of two
names, no ``axis`` but 0 and no ``batch_dims``: written inline on the failing line, or
the operand's last assignment before it (in the failing function, else a cell's top
level). The indices are read (a small integer array or eager tensor): one per row of the
params, all below the params' axis 1. When that axis is shorter than the row count, the
indices never reach past the first rows, so they are positions along axis 1: the fix is
the gather with ``batch_dims=1``. When it is not, a row pick is as likely: both readings
are said and no fix is printed. Symbolic indices (inside a trace) say nothing.
"""

from __future__ import annotations

import ast
import sys
from types import ModuleType

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    assignments_in_cells,
    cell_frame,
    last_assignment,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    innermost_function,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, show_shape
from jupyterlab_tfcoach.monitor.errors.held_values import integer_labels

_MAX_OPERANDS = 6
_MAX_ROWS = 1_000_000


def _is_tensorflow_gather(call: ast.Call, frame: CellFrame, context: ErrorContext) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "gather":
        return False
    root = func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    known, module = context.lookup(root.id, frame)
    if not known or not isinstance(module, ModuleType):
        return False
    name = str(vars(module).get("__name__") or "").partition(".")[0]
    return name == "tensorflow" and sys.modules.get(name) is not None


def _rows_gather(call: ast.Call) -> tuple[ast.Name, ast.Name] | None:
    """(params, indices) of ``gather(params, indices)`` along axis 0, no ``batch_dims``."""
    keywords = {k.arg: k.value for k in call.keywords}
    if None in keywords or "batch_dims" in keywords or len(call.args) > 3:
        return None
    params = call.args[0] if call.args else keywords.get("params")
    indices = call.args[1] if len(call.args) > 1 else keywords.get("indices")
    axis = call.args[2] if len(call.args) > 2 else keywords.get("axis")
    if axis is not None and not (isinstance(axis, ast.Constant) and axis.value == 0):
        return None
    if not isinstance(params, ast.Name) or not isinstance(indices, ast.Name):
        return None
    return params, indices


def _origins(
    name: str, line: FailingLine, context: ErrorContext
) -> list[tuple[CellFrame, ast.stmt, ast.Call, str]]:
    """Where the operand ``name`` was made by a call: ``(frame, statement, call, where)``,
    the failing function's last assignment before the line, else a cell's top level."""
    frame = line.frame
    tree = frame.tree()
    found: list[tuple[CellFrame, ast.stmt, ast.Call, str]] = []
    if tree is not None and frame.local_names is not None:
        function = innermost_function(tree, frame.position.line)
        if function is not None:
            made = last_assignment(function, name, frame.position.line)
            if made is not None and isinstance(made.value, ast.Call):
                found.append((frame, made, made.value, f"line {made.lineno}"))
            return found
    for cell, statement in assignments_in_cells(name, context):
        if isinstance(statement.value, ast.Call):
            where = f"line {statement.lineno}" if cell.label == "this cell" else cell.label
            found.append((cell_frame(cell), statement, statement.value, where))
        break
    return found


def gathered_rows(
    shapes: tuple[tuple[int | None, ...], tuple[int | None, ...]],
    node: ast.expr | None,
    line: FailingLine,
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    """(what to say, the fix or None) when a side of the failing element-wise op is a
    gather of one index per row that took whole rows."""
    candidates: list[tuple[CellFrame, ast.stmt, ast.Call, str, str, tuple[int | None, ...]]] = []
    for side in (0, 1):
        shape, other = shapes[side], shapes[1 - side]
        if len(shape) < 2 or other != (shape[0], *shape[2:]):
            continue
        if isinstance(node, ast.BinOp) and line.statement is not None:
            written = node.left if side == 0 else node.right
            if isinstance(written, ast.Call):
                text = line.frame.segment(written) or ""
                candidates.append((line.frame, line.statement, written, "", text, shape))
        for operand in line.operands[:_MAX_OPERANDS]:
            if operand.shape == shape and operand.source.isidentifier():
                for frame, statement, call, where in _origins(operand.source, line, context):
                    candidates.append((frame, statement, call, where, operand.source, shape))
    for frame, statement, call, where, name, shape in candidates:
        found = _read(frame, statement, call, where, name, shape, context)
        if found is not None:
            return found
    return None


def _read(
    frame: CellFrame,
    statement: ast.stmt,
    call: ast.Call,
    where: str,
    name: str,
    shape: tuple[int | None, ...],
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    gathered = _rows_gather(call)
    if gathered is None or not _is_tensorflow_gather(call, frame, context):
        return None
    params_node, indices_node = gathered
    known, params = context.lookup(params_node.id, frame)
    held = describe(params_node.id, params) if known else None
    if held is None or held.shape is None or len(held.shape) < 2:
        return None
    rows, width = held.shape[0], held.shape[1]
    if rows is None or width is None or tuple(held.shape) != shape or rows < 2:
        return None
    known, indices = context.lookup(indices_node.id, frame)
    values = integer_labels(indices, _MAX_ROWS) if known else None
    if values is None or values.shape[0] != rows:
        return None
    if int(values.min()) < 0 or int(values.max()) >= width:
        return None
    written = frame.segment(call)
    if not written or "\n" in written or not written.endswith(")"):
        return None
    params_name, indices_name = params_node.id, indices_node.id
    made = code(written) if not where else f"{code(written)} ({where})"
    lead = f"{code(name)} comes from {made}: " if name != written else f"{code(written)}: "
    per_row = f"{params_name}[i, {indices_name}[i]]"
    rule = (
        f"{lead}{code(indices_name)} holds one index per row of {code(params_name)} "
        f"({rows} of them, each below its {width} columns), but a gather picks along axis "
        f"0 unless told otherwise, so each index took a whole row: a {show_shape(shape)} "
        f"result"
    )
    if width >= rows:
        return (
            f"{rule}. If each index is a column of its own row ({code(per_row)}), gather "
            "with batch_dims=1; if whole rows were meant, the other side needs an axis of "
            "its own"
        ), None
    fixed = rewrite(frame, statement, call, f"{written[:-1]}, batch_dims=1)")
    rule = (
        f"{rule}, where one entry per row, {code(per_row)}, was meant (the indices never "
        f"reach past row {width - 1}, they count columns). Adding an axis to the other "
        "side would make this line run and weigh every entry of the picked rows; pick one "
        "entry per row with batch_dims=1"
    )
    if not fixed or "\n" in fixed:
        return rule, None
    return rule, code(fixed)
