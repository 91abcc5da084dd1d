"""Predicted classes taken with argmax over the examples' axis: one family (issue #25).

``val_pred = np.argmax(val_probs, axis=0)`` on (96, 3) probabilities picks, for each of the
3 classes, the example that scores it highest: 3 example numbers, not one class per
example. The error comes later, where those "classes" meet the labels
(``tf.math.confusion_matrix(y_val, val_pred)``: ``predictions out of bound``, or two
lengths that differ), and its message says nothing of the argmax.

Recognised by reading, for any error TensorFlow or Keras raised: a name on the failing
line holds a vector of C values, and its newest assignment (in the failing cell before the
line, else at the top of the cells) is an ``argmax`` (NumPy's, TensorFlow's or
``keras.ops``') over axis 0 (written, or TensorFlow's default) of a name holding an
(N, C) array or tensor with N != C. The fix is that assignment over the last axis.
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame
from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe
from jupyterlab_tfcoach.monitor.errors.family_record import ErrorFamily, Finding, Recognised

SECTION = "class-axis"
_MAX_NAMES = 20


def _argmax_axis_zero(call: ast.expr) -> tuple[ast.Call, ast.expr, ast.expr | None] | None:
    """(the call, its input, its axis node or None for TensorFlow's default 0)."""
    if not (isinstance(call, ast.Call) and call.args and not isinstance(call.args[0], ast.Starred)):
        return None
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "argmax":
        return None
    axis = next((k.value for k in call.keywords if k.arg == "axis"), None)
    if axis is None and len(call.args) > 1:
        axis = call.args[1]
    if axis is None:
        # TensorFlow's argmax defaults to axis 0; NumPy's flattens, keras.ops' is -1.
        root = func.value if isinstance(func, ast.Attribute) else None
        while isinstance(root, ast.Attribute):
            root = root.value
        return (
            (call, call.args[0], None) if isinstance(root, ast.Name) and root.id == "tf" else None
        )
    if isinstance(axis, ast.Constant) and axis.value == 0 and type(axis.value) is int:
        return call, call.args[0], axis
    return None


def _assignment(
    name: str, line: FailingLine, context: ErrorContext
) -> tuple[ast.Assign, CellFrame, str] | None:
    tree = line.frame.tree()
    failing = line.statement
    if tree is not None and failing is not None:
        found = [
            node
            for node in tree.body
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and node.lineno < failing.lineno
        ]
        if found:
            chosen = found[-1]
            return chosen, line.frame, f"line {chosen.lineno} of this cell"
    for cell, statement in assignments_in_cells(name, context):
        return statement, cell_frame(cell), cell.label
    return None


def _read_argmax_axis(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error  # any error: the reading alone recognises it
    names = sorted(
        {
            node.id
            for part in line.frame.header()
            for node in ast.walk(part)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        }
    )
    for name in names[:_MAX_NAMES]:
        found, value = context.lookup(name, line.frame)
        held = describe(name, value) if found else None
        if held is None or held.shape is None or len(held.shape) != 1:
            continue
        assigned = _assignment(name, line, context)
        if assigned is None:
            continue
        statement, frame, where = assigned
        argmax = _argmax_axis_zero(statement.value)
        if argmax is None:
            continue
        call, source_node, axis = argmax
        if not isinstance(source_node, ast.Name):
            continue
        found, scores = context.lookup(source_node.id, None)
        table = describe(source_node.id, scores) if found else None
        shape = table.shape if table is not None else None
        if shape is None or len(shape) != 2 or shape[0] == shape[1] or shape[1] != held.shape[0]:
            continue
        examples, classes = shape
        written = frame.segment(call) or "argmax"
        rule = (
            f"{code(name)} was set by {code(frame.segment(statement) or written)} ({where}): "
            f"{code(source_node.id)} is {table.description if table else ''}, one row of "
            f"{classes} class scores per example, and argmax over axis 0 picks, for each of "
            f"the {classes} classes, the example that scores it highest. So {code(name)} holds "
            f"{classes} example numbers (0 to {examples - 1 if examples else '?'}), not one class "
            f"per example: the class of each example is the argmax over the last axis"
        )
        if axis is not None:
            fixed = rewrite(frame, statement, axis, "-1")
        else:
            inner = frame.segment(call) or ""
            fixed = rewrite(frame, statement, call, f"{inner[:-1].rstrip()}, axis=-1)")
        if not fixed or "\n" in fixed:
            return Finding(rule + ".", None)
        return Finding(rule + ".", f"in {where}, {code(fixed)}")
    return None


ARGMAX_AXIS = ErrorFamily(
    "predicted classes taken with argmax over the examples' axis",
    messages=(),
    read=_read_argmax_axis,
    section=SECTION,
)
