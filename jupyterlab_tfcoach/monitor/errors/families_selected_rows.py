"""Rows selected on one side of a call that pairs rows: one family (issue #25).

A loss, a metric or an element-wise op pairs its two arguments row by row: row i of the
labels with row i of the predictions. ``loss(y[mask], logits)`` keeps only the rows of
``y`` the mask selects (``K`` of them) and hands over every row of ``logits`` (all
``N``): Keras refuses ``target.shape=(K,), output.shape=(N, C)``, TensorFlow refuses
``Incompatible shapes: [K] vs. [N]``. The message reads as if one value had the wrong
shape; the cause is that the selection was written on one side only, and the fix is the
same selection on the other side.

Read from the failing line, for an error raised through the library whose message
writes both counts: a call with two positional arguments, or a binary operation, whose
one side selects rows (``a[m]`` or ``tf.boolean_mask(a, m)`` with a 1-D bool mask;
``a[idx]`` or ``tf.gather(a, idx)`` with a 1-D integer index array) of a value of ``N``
rows, and whose other side holds ``N`` rows too and selects nothing. The fix applies
the same mask or indices to the other side, in TensorFlow's spelling for a tensor
(``tf.boolean_mask``/``tf.gather``) and in brackets for a NumPy array.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, is_postfix_safe, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, Operand
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    operand_of,
    raised_through_library,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.errors.held_values import INTEGERS, held_array

SECTION = "joining-indexing"
_MAX_ROWS = 1_000_000
_MAX_WRITTEN = 80
_VALUE_KINDS = ("tensor", "array", "variable", "keras_variable", "symbolic")
_TENSOR_KINDS = ("tensor", "variable", "keras_variable", "symbolic")


@dataclass(frozen=True)
class _Selection:
    """A side that selects rows: ``source[selector]`` or ``tf.<call>(source, selector)``."""

    node: ast.expr
    table: ast.expr
    selector: ast.expr
    by_mask: bool  # a bool mask; else integer indices
    rows: int  # the rows of the selected value
    kept: int  # the rows the selection keeps
    selector_kind: str  # the selector's value kind ("array", "tensor", ...)
    unit: str  # "rows", or "entries" of a vector


def _selector(
    table: ast.expr, selector: ast.expr, node: ast.expr, line: FailingLine, context: ErrorContext
) -> _Selection | None:
    if isinstance(selector, (ast.Slice, ast.Tuple, ast.Constant)):
        return None
    held = operand_of(selector, line, context)
    if held is None or held.kind not in _VALUE_KINDS:
        return None
    if held.shape is None or len(held.shape) != 1:
        return None
    # The selected value, when a name holds it; a mask tells its row count by itself.
    source = operand_of(table, line, context)
    shape = source.shape if source is not None else None
    rows = shape[0] if shape else None
    unit = "entries" if shape is not None and len(shape) == 1 else "rows"
    mask = held_array(held.value, _MAX_ROWS, ("bool",), ndim=1)
    if mask is not None:
        if rows is not None and mask.shape[0] != rows:
            return None
        kept = int(mask.sum())
        return _Selection(node, table, selector, True, mask.shape[0], kept, held.kind, unit)
    indices = held_array(held.value, _MAX_ROWS, INTEGERS, ndim=1)
    if indices is None or rows is None:
        return None
    kept = int(indices.shape[0])
    return _Selection(node, table, selector, False, rows, kept, held.kind, unit)


def _selection(node: ast.expr, line: FailingLine, context: ErrorContext) -> _Selection | None:
    """``a[m]``, ``tf.boolean_mask(a, m)`` or ``tf.gather(a, idx)`` (axis 0, no keywords)."""
    if isinstance(node, ast.Subscript):
        return _selector(node.value, node.slice, node, line, context)
    if not isinstance(node, ast.Call) or node.keywords or len(node.args) != 2:
        return None
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("boolean_mask", "gather"):
        return None
    found = _selector(node.args[0], node.args[1], node, line, context)
    if found is None or found.by_mask != (func.attr == "boolean_mask"):
        return None
    return found


def _pairs(line: FailingLine) -> list[tuple[ast.expr, ast.expr]]:
    """The two sides of each call (its first two positional arguments) and binary
    operation of the failing statement."""
    found = []
    for part in line.frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.BinOp):
                found.append((node.left, node.right))
            elif isinstance(node, ast.Compare) and len(node.comparators) == 1:
                found.append((node.left, node.comparators[0]))
            elif isinstance(node, ast.Call) and len(node.args) >= 2:
                if not any(isinstance(a, ast.Starred) for a in node.args[:2]):
                    found.append((node.args[0], node.args[1]))
    return found


def _writes(message: str, number: int) -> bool:
    return re.search(rf"(?<![\d.]){number}(?![\d.])", message) is not None


def _reading(
    selected: _Selection, other: Operand, other_node: ast.expr, line: FailingLine, tf: str
) -> Finding | None:
    frame = line.frame
    written = frame.segment(selected.node)
    table = frame.segment(selected.table)
    selector = frame.segment(selected.selector)
    other_written = frame.segment(other_node)
    parts = (written, table, selector, other_written)
    if not all(parts) or any("\n" in p or len(p) > _MAX_WRITTEN for p in parts if p):
        return None
    assert written and table and selector and other_written
    unit = selected.unit
    other_unit = "entries" if other.shape is not None and len(other.shape) == 1 else "rows"
    if selected.by_mask:
        keeps = f"keeps the {selected.kept} {unit} of {code(table)} where {code(selector)} is True"
        same = "mask"
        call = "boolean_mask"
    else:
        keeps = f"keeps the {selected.kept} {unit} of {code(table)} that {code(selector)} lists"
        same = "indices"
        call = "gather"
    in_tensorflow = other.kind in _TENSOR_KINDS or selected.selector_kind in _TENSOR_KINDS
    held = other_written if is_postfix_safe(other_node) else f"({other_written})"
    replacement = (
        f"{tf}.{call}({other_written}, {selector})" if in_tensorflow else f"{held}[{selector}]"
    )
    rule = (
        f"{code(written)} {keeps} (of {selected.rows}), but {code(other_written)} goes in "
        f"whole, all {selected.rows} {other_unit}. The two sides are paired position by position "
        f"(row i of one with row i of the other), so a selection made on one side must be made "
        f"on the other too: select the {other_unit} of {code(other_written)} with the same "
        f"{same}"
    )
    statement = line.statement
    fixed = rewrite(frame, statement, other_node, replacement) if statement is not None else None
    if not fixed or "\n" in fixed:
        return Finding(rule + f", {code(replacement)}.", None, section=SECTION)
    return Finding(rule + ".", code(fixed), section=SECTION)


def _read_selected_rows(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if not raised_through_library(context, error.parsed):
        return None
    message = error.parsed.message
    tf = tf_alias(context)
    for first, second in _pairs(line):
        for selected_node, other_node in ((first, second), (second, first)):
            selected = _selection(selected_node, line, context)
            if selected is None or selected.kept == selected.rows:
                continue
            if _selection(other_node, line, context) is not None:
                continue
            other = operand_of(other_node, line, context)
            if other is None or other.kind not in _VALUE_KINDS or not other.shape:
                continue
            if other.shape[0] != selected.rows:
                continue
            if not (_writes(message, selected.kept) and _writes(message, selected.rows)):
                continue
            found = _reading(selected, other, other_node, line, tf)
            if found is not None:
                return found
    return None


SELECTED_ROWS = ErrorFamily(
    "rows selected on one side of a call that pairs rows",
    messages=(),
    read=_read_selected_rows,
    section=SECTION,
)
