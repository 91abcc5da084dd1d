"""A categorical sampler given one row of scores (issue #25).

``tf.random.categorical(logits, num_samples)`` draws for a batch: ``logits`` is
``[batch, classes]``, one row of unnormalised scores per draw. One row alone (``(25,)``,
often the last step of one sequence, ``logits[0, -1]``) raises ``logits should be a
matrix, got shape [25]``. Read from the failing call: the logits argument, its shape,
and, when a name holds it, the statement of the cells that made it by integer indexes
(the index that dropped the batch axis). The fix is the call given a batch of one row,
``logits_row[None, :]`` (its result is ``[1, num_samples]``).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, is_postfix_safe, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape
from jupyterlab_tfcoach.monitor.errors.families_ops import argument, callee_name
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    segment_of,
)

SECTION = "shape-dtype-device"
_NOT_A_MATRIX = re.compile(r"logits should be a matrix, got shape \[(?P<shape>[\d, ]*)\]")


def _made_by_indexing(name: str, line: FailingLine, context: ErrorContext) -> str | None:
    """``next_logits = logits[0, -1]`` (newest top-level assignment of the name in the
    cells, else None): an integer index there took one example out of the batch."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells

    for cell, statement in assignments_in_cells(name, context):
        if cell.source == line.frame.source() and statement.lineno >= line.frame.position.line:
            continue
        value = statement.value
        if not isinstance(value, ast.Subscript):
            return None
        index = value.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        first = parts[0] if parts else None
        written = cell.segment(statement)
        if (
            isinstance(first, ast.Constant)
            and type(first.value) is int
            and written
            and "\n" not in written
        ):
            return f"{code(written)} ({cell.label}) took one example with its index {first.value}"
        return None
    return None


def _read_one_row(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if callee_name(line.call) != "categorical":
        return None
    logits = argument(line.call, 0, "logits")
    source = segment_of(line, logits)
    if logits is None or not source:
        return None
    classes = error.group("shape").strip()
    described = operand_of(logits, line, context)
    shape = f", of shape {show_shape(described.shape)}," if described and described.shape else ""
    rule = (
        f"`tf.random.categorical` draws one class per row of a batch of scores, "
        f"`[batch, classes]`, and {code(source)}{shape} is one "
        f"row of {classes} scores with no batch axis"
    )
    if isinstance(logits, ast.Name):
        made = _made_by_indexing(logits.id, line, context)
        if made is not None:
            rule += f": {made}"
    wrapped = source if is_postfix_safe(logits) else f"({source})"
    statement = line.statement
    fixed = rewrite(line.frame, statement, logits, f"{wrapped}[None, :]") if statement else None
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(
        rule + ". Give it a batch of one row (the result is then `[1, num_samples]`).",
        code(fixed),
    )


CATEGORICAL_ROW = ErrorFamily(
    "a categorical sampler given one row of scores",
    messages=(Message(_NOT_A_MATRIX),),
    read=_read_one_row,
    section=SECTION,
)
