"""A ragged tensor's values reshaped into equal rows (issue #25):
``tf.reshape(tokens.flat_values, (n_texts, -1))`` where the texts have different lengths.

TensorFlow only says the number of values cannot fill the requested shape. The reading is
where the values came from: ``.flat_values`` or ``.values`` of a ``tf.RaggedTensor``,
whose rows have different lengths (read from its ``row_splits``, bounded). Flattening
dropped the row boundaries, so no reshape can rebuild the rows; padding each row to the
longest one keeps them: ``tokens.to_tensor()`` (zeros, or empty strings, after each
row's end). The fix replaces the reshape with it.
"""

from __future__ import annotations

import ast
import re
import sys

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

_RESHAPE = re.compile(
    r"Input to reshape is a tensor with (?P<have>\d+) values, but the requested shape "
    r"(?:has|requires a multiple of) (?P<want>\d+)"
)
_FLATTENING = ("flat_values", "values")
_MAX_ROWS = 100_000


def _row_lengths(ragged: object) -> tuple[int, int, int] | None:
    """(rows, shortest, longest) from a ragged tensor's row_splits, or None."""
    numpy = sys.modules.get("numpy")
    try:
        splits = getattr(ragged, "row_splits", None)
        shape = getattr(splits, "shape", None)
        if numpy is None or shape is None or shape[0] is None or shape[0] > _MAX_ROWS + 1:
            return None
        lengths = numpy.diff(numpy.asarray(splits))
        if lengths.size == 0:
            return None
        return int(lengths.size), int(lengths.min()), int(lengths.max())
    except Exception:
        return None


def _read_ragged_rows(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or not call.args or line.statement is None:
        return None
    flat = call.args[0]
    if not isinstance(flat, ast.Attribute) or flat.attr not in _FLATTENING:
        return None
    found, ragged = value_of(flat.value, line.frame, context)
    name = line.frame.segment(flat.value)
    if not found or type(ragged).__name__ != "RaggedTensor" or not name or "\n" in name:
        return None
    rows = _row_lengths(ragged)
    if rows is None or rows[1] == rows[2]:
        return None
    count, shortest, longest = rows
    rule = (
        f"{code(line.frame.segment(flat) or name)} is every value of the ragged tensor "
        f"{code(name)} in one line ({error.group('have')} values): its {count} rows have "
        f"different lengths (from {shortest} to {longest}), and flattening dropped where "
        "each row ends, so no reshape can give the rows back. Pad each row to the longest "
        f"one instead: {code(name + '.to_tensor()')} (zeros, or empty strings, after a "
        "row's end)"
    )
    fixed = rewrite(line.frame, line.statement, call, f"{name}.to_tensor()")
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


RAGGED_ROWS = ErrorFamily(
    "a ragged tensor's values reshaped into equal rows",
    messages=(Message(_RESHAPE),),
    read=_read_ragged_rows,
    section="shape-dtype-device",
)
