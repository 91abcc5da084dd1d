"""A Python list or tuple indexed by a tensor or array of several indices.

``names[top.indices]`` (the indices ``tf.math.top_k`` or ``tf.argsort`` return) or
``labels[np.argsort(scores)[:3]]`` raises ``TypeError: only integer scalar arrays can be
converted to a scalar index`` (or ``list indices must be integers or slices``): a Python
list takes one integer or a slice, never a vector of positions, which only NumPy arrays
and ``tf.gather`` accept. Python's message names neither the list nor the index.

The reading finds the subscript of the failing statement whose container (read from the
frame, never called) is a list or tuple and whose index is a tensor or NumPy array of
rank 1, names both, and prints the fix that picks each position in turn:
``[names[i] for i in top.indices.numpy()]`` (``.numpy()`` for an eager tensor, the array
itself for NumPy). An index of rank 2 or more gets the rule with no fix (which rows the
learner wanted is theirs to say).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

_MESSAGES = (
    Message(re.compile(r"only integer scalar arrays can be converted to a scalar index")),
    Message(re.compile(r"(?:list|tuple) indices must be integers or slices")),
)
_INDEX_NAMES = ("i", "j", "k", "pos", "position")


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)):
            continue
        found, container = value_of(node.value, line.frame, context)
        if not found or type(container) not in (list, tuple):
            continue
        found, index = value_of(node.slice, line.frame, context)
        written_index = line.frame.segment(node.slice)
        written = line.frame.segment(node.value)
        if not found or not written_index or not written or "\n" in written_index:
            continue
        operand = describe(written_index, index)
        if operand is None or operand.kind not in ("tensor", "array") or not operand.shape:
            continue
        kind = type(container).__name__
        rule = (
            f"{code(written)} is a Python {kind} of {len(container)} items and "
            f"{code(written_index)} is {operand.description}: a Python {kind} takes one "
            "integer position (or a slice), not a tensor or array of positions; only NumPy "
            "arrays and `tf.gather` pick several positions at once"
        )
        if len(operand.shape) != 1:
            return Finding(rule + ".", None, section=GENERAL_SECTION)
        source = line.frame.source()
        name = next((each for each in _INDEX_NAMES if not re.search(rf"\b{each}\b", source)), None)
        if name is None:
            return Finding(rule + ".", None, section=GENERAL_SECTION)
        positions = f"{written_index}.numpy()" if operand.kind == "tensor" else written_index
        replacement = f"[{written}[{name}] for {name} in {positions}]"
        rule += ": take each position in turn"
        fixed = rewrite(line.frame, statement, node, replacement)
        fix = code(fixed) if fixed and "\n" not in fixed else None
        return Finding(rule + ".", fix, section=GENERAL_SECTION)
    return None


CONTAINER_INDEX = ErrorFamily(
    "a Python list indexed by a tensor or array of positions",
    messages=_MESSAGES,
    exception_type="TypeError",
    read=_read,
    section=GENERAL_SECTION,
    without_library=True,
)
