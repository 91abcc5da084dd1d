"""Errors of TensorFlow ops that cut, pack and parse data (issue #25): ``tf.split`` into
parts that do not divide the axis, ``RaggedTensor.from_row_splits`` given row lengths, a
``Dataset.filter`` predicate that answers per value instead of per element, and
``tf.strings.to_number`` meeting text (a header row).

Each reads the failing call as written and the numbers the message gives; a fix is
printed only where one edit makes the call right (a part count that divides the axis, the
constructor that takes lengths); otherwise the rule says what the op needs.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

DATA_SECTION = "tf-data"

# ------------------------------------------------------------------ tf.split
_UNEVEN_SPLIT = re.compile(
    r"Number of ways to split should evenly divide the split dimension, but got split_dim "
    r"(?P<axis>\d+) \(size = (?P<size>\d+)\) and num_split (?P<parts>\d+)"
)


def _nearest_divisor(size: int, parts: int) -> int | None:
    """The part count closest to ``parts`` that divides ``size`` (2 or more; the larger
    one on a tie), None when ``size`` is prime or too small."""
    divisors = [d for d in range(2, size) if size % d == 0]
    if not divisors:
        return None
    return min(divisors, key=lambda d: (abs(d - parts), -d))


def _read_uneven_split(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    call = line.call
    if not (isinstance(call, ast.Call) and len(call.args) >= 2):
        return None
    size, parts = int(error.group("size")), int(error.group("parts"))
    tensor = line.frame.segment(call.args[0]) or "the tensor"
    count = call.args[1]
    written = line.frame.segment(count) or str(parts)
    how_many = str(parts) if written == str(parts) else f"{code(written)} = {parts}"
    rule = (
        f"{code(line.frame.segment(call) or 'tf.split')} cuts axis {error.group('axis')} of "
        f"{code(tensor)} ({size} long) into {how_many} equal parts, and {size} is "
        f"not a multiple of {parts}. Give a part count that divides {size}, or a list of "
        f"part sizes that add up to {size}"
    )
    divisor = _nearest_divisor(size, parts)
    if divisor is None:
        return Finding(rule + ".", None)
    if isinstance(count, ast.Name):
        # The count is a setting of the cells (``N_MICRO = 3``): change it once, for every
        # split that uses it.
        for cell, statement in assignments_in_cells(count.id, context):
            if isinstance(statement.value, ast.Constant) and statement.value.value == parts:
                shown = cell.segment(statement)
                if shown and "\n" not in shown:
                    return Finding(rule + ".", code(f"{count.id} = {divisor}"))
            break
        return Finding(rule + ".", None)
    statement = line.statement
    fixed = rewrite(line.frame, statement, count, str(divisor)) if statement else None
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


UNEVEN_SPLIT = ErrorFamily(
    "tf.split into parts that do not divide the axis",
    messages=(Message(_UNEVEN_SPLIT),),
    read=_read_uneven_split,
    section=GENERAL_SECTION,
)


# ------------------------------------------------------------------ ragged row splits
_ROW_SPLITS = re.compile(
    r"Arguments to (?:from_row_splits|_from_row_partition) do not form a valid RaggedTensor"
)


def _literal_ints(node: ast.expr | None) -> list[int] | None:
    try:
        value = ast.literal_eval(node) if node is not None else None
    except Exception:
        return None
    if type(value) in (list, tuple) and value and all(type(v) is int for v in value):
        return list(value)
    return None


def _read_row_splits(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    del error, context
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "from_row_splits"
        and call.args
    ):
        return None
    splits_node = next((k.value for k in call.keywords if k.arg == "row_splits"), None)
    if splits_node is None and len(call.args) > 1:
        splits_node = call.args[1]
    splits = _literal_ints(splits_node)
    values = line.operand(line.frame.segment(call.args[0]) or "")
    length = values.shape[0] if values is not None and values.shape else None
    rule = (
        "`row_splits` are offsets into the values: they start at 0, never decrease and end "
        "at the number of values"
        + (f" ({length})" if type(length) is int else "")
        + "; row i is values[row_splits[i]:row_splits[i + 1]]"
    )
    if splits is None or type(length) is not int or sum(splits) != length or splits[0] == 0:
        return Finding(rule + ".", None)
    rule += (
        f". {code(str(splits))} adds up to {length}: it is each row's length, which "
        "`from_row_lengths` takes"
    )
    statement = line.statement
    func_source = line.frame.segment(call.func) or ""
    renamed = func_source[: -len("from_row_splits")] + "from_row_lengths"
    values_source = line.frame.segment(call.args[0]) or ""
    replacement = f"{renamed}({values_source}, row_lengths={splits})"
    fixed = rewrite(line.frame, statement, call, replacement) if statement else None
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


ROW_SPLITS = ErrorFamily(
    "row lengths given as a ragged tensor's row splits",
    messages=(Message(_ROW_SPLITS),),
    read=_read_row_splits,
    section=GENERAL_SECTION,
)


# ------------------------------------------------------------------ Dataset.filter
_FILTER_RESULT = re.compile(
    r"`predicate` must return a `tf.bool` scalar tensor, but its return type is "
    r"TensorSpec\(shape=\((?P<shape>[^)]*)\), dtype=tf\.(?P<dtype>\w+)"
)


def _read_filter_result(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del context
    call = line.call
    predicate = call.args[0] if isinstance(call, ast.Call) and call.args else None
    written = line.frame.segment(predicate) if predicate is not None else None
    shape, dtype = error.group("shape"), error.group("dtype")
    if dtype != "bool":
        rule = (
            f"The function given to `filter` returns a {dtype} value; filter keeps an element "
            "when it returns True, so it must return one tf.bool (a comparison)"
        )
        return Finding(rule + ".", None)
    rule = (
        f"The function given to `filter`{f' ({code(written)})' if written else ''} returns "
        f"one answer per value of the element (a ({shape}) bool tensor), but filter keeps or "
        "drops the whole element, so it needs ONE bool: compare one value (`x[0] > 0.0`), or "
        "reduce the answers (`tf.reduce_all(...)`: every value passes; `tf.reduce_any(...)`: "
        "at least one does), whichever you meant"
    )
    return Finding(rule + ".", None)


FILTER_RESULT = ErrorFamily(
    "a filter predicate that answers per value, not per element",
    messages=(Message(_FILTER_RESULT),),
    read=_read_filter_result,
    section=DATA_SECTION,
)


# ------------------------------------------------------------------ strings to numbers
_NOT_A_NUMBER = re.compile(
    r"StringToNumberOp could not correctly convert string: (?P<text>.*?)(?: \[Op|$)"
)


def _read_not_a_number(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del context
    text = error.group("text")[:60]
    call = line.call
    converted = (
        line.frame.segment(call.args[0]) if isinstance(call, ast.Call) and call.args else None
    )
    rule = (
        f"`tf.strings.to_number` met {code(repr(text))}"
        + (f" in {code(converted)}" if converted else "")
        + ", which is not a number: every string it converts must spell one. Text like this "
        "is usually a header row or a column of names: convert only the rows and columns that "
        "hold numbers (skip the header, e.g. `lines[1:]`)"
    )
    return Finding(rule + ".", None)


NOT_A_NUMBER = ErrorFamily(
    "text converted to numbers",
    messages=(Message(_NOT_A_NUMBER),),
    read=_read_not_a_number,
    section=GENERAL_SECTION,
)
