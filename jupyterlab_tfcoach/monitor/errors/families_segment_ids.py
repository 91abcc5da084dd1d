"""Segment ids that are not sorted, given to a sorted segment reduction.

``tf.math.segment_mean(values, ids)`` (and ``segment_sum``, ``_max``, ``_min``, ``_prod``)
needs ``ids`` sorted: it walks the rows once and starts a new segment whenever the id
changes. Ids that come from data, such as the target node of each edge of a graph, are
usually in any order, and the op raises ``segment ids are not increasing`` without naming
the argument. The cause to name is the order of that argument; the fix is the unsorted
version of the same reduction, which takes any order and is told how many segments there
are (``num_segments``: one more than the largest id, the output ``segment_mean`` would
have given on sorted ids).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    tf_alias,
)

_SEGMENT_SECTION = "shape-dtype-device"
# TensorFlow 2.21 says it either way: the old message, or an id past the segments counted
# so far ("Segment id 200 out of range [0, 53), possibly because 'segment_ids' input is
# not sorted").
_NOT_INCREASING = re.compile(
    r"segment ids are not increasing|Segment id -?\d+ out of range \[0, \d+\), possibly "
    r"because 'segment_ids' input is not sorted"
)
_MAX_READ = 1_000_000
_SORTED_REDUCTIONS = frozenset(
    {"segment_mean", "segment_sum", "segment_max", "segment_min", "segment_prod"}
)


def _segment_call(line: FailingLine) -> ast.Call | None:
    statement = line.statement
    if statement is None:
        return None
    found = [
        node
        for node in ast.walk(statement)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _SORTED_REDUCTIONS
    ]
    return found[0] if len(found) == 1 else None


def _ids(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "segment_ids":
            return keyword.value
    return call.args[1] if len(call.args) > 1 else None


def _sorted(ids: ast.expr | None, line: FailingLine, context: ErrorContext) -> bool:
    """Whether the ids, read as an array or eager tensor of the namespace, are in
    increasing order (False when they cannot be read)."""
    if ids is None:
        return False
    operand = operand_of(ids, line, context)
    if operand is None or operand.kind not in ("array", "tensor") or operand.shape is None:
        return False
    if len(operand.shape) != 1 or operand.shape[0] is None or operand.shape[0] > _MAX_READ:
        return False
    try:
        values = operand.value.numpy() if operand.kind == "tensor" else operand.value
        # NumPy's own comparison of neighbours: no Python loop over the ids.
        return bool((values[1:] >= values[:-1]).all())
    except Exception:
        return False


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = _segment_call(line)
    if call is None or not isinstance(call.func, ast.Attribute):
        return None
    ids = _ids(call)
    frame = line.frame
    ids_text = frame.segment(ids) if ids is not None else None
    function = frame.segment(call.func)
    if not ids_text or not function or "\n" in ids_text:
        return None
    if _sorted(ids, line, context):
        # Sorted ids out of range (a negative id): not an order to fix.
        return None
    reduction = call.func.attr
    unsorted = function[: -len(reduction)] + "unsorted_" + reduction
    tf = tf_alias(context)
    rule = (
        f"{code(function)} needs its segment ids sorted (it starts a new segment each time "
        f"the id changes), and {code(ids_text)} is not in increasing order. "
        f"{code('unsorted_' + reduction)} takes ids in any order; it needs the number of "
        f"segments, one more than the largest id"
    )
    if call.keywords and any(k.arg not in ("data", "segment_ids") for k in call.keywords):
        return Finding(rule + ".", None, section=_SEGMENT_SECTION)
    arguments = [frame.segment(argument) for argument in call.args]
    arguments += [f"{k.arg}={frame.segment(k.value)}" for k in call.keywords]
    if any(not text or "\n" in text for text in arguments):
        return Finding(rule + ".", None, section=_SEGMENT_SECTION)
    replaced = f"{unsorted}({', '.join(arguments)}, num_segments={tf}.reduce_max({ids_text}) + 1)"  # type: ignore[arg-type]
    statement = line.statement
    fixed = rewrite(frame, statement, call, replaced) if statement is not None else None
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None, section=_SEGMENT_SECTION)
    return Finding(rule + ".", code(fixed), section=_SEGMENT_SECTION)


SEGMENT_IDS_ORDER = ErrorFamily(
    "segment ids out of order given to a sorted segment reduction",
    messages=(Message(_NOT_INCREASING),),
    exception_type="InvalidArgumentError",
    read=_read,
    section=_SEGMENT_SECTION,
)
