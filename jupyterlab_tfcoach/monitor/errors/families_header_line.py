"""A CSV file's header line parsed as data (issue #25): ``tf.io.decode_csv(lines, ...)`` on
the lines of a file whose first line holds the column names, a ``TextLineDataset`` mapped
with ``decode_csv``, or ``tf.data.experimental.CsvDataset`` without ``header=True``.

TensorFlow says ``Field 0 in record 0 is not a valid int32: label``: the field it could not
read, the record (line) it was in, the dtype ``record_defaults`` declared and the text it
met. The reading is the record's place and the text: a word (``label``, ``price``) in the
first record given, where a number is declared, is the file's column names, so the fix
skips that line where the lines are taken (``lines[1:]``, ``lines[1:6]`` for
``lines[:5]``, ``.skip(1)`` after the ``TextLineDataset``, ``header=True`` for
``CsvDataset``). A text in a later record, or one that is not a word, is a line of another
format: the entry names the record and field and stops there.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

_FIELD = re.compile(
    r"Field (?P<field>\d+) in record (?P<record>\d+)? ?is not a valid (?P<dtype>\w+)"
    r"(?:: (?P<text>[^\n\[]*?))?(?:\s*\[Op|\s*$|\n|\s*\t)",
)
_MAX_LINES = 200_000
_MAX_HEAD = 8192
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_ .()/-]{0,40}")


def _records_node(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "records":
            return keyword.value
    return call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None


def _skipped(node: ast.expr, line: FailingLine) -> str | None:
    """``lines`` -> ``lines[1:]``; ``lines[:5]`` -> ``lines[1:6]`` (as many lines, the
    header left out)."""
    source = line.frame.segment(node)
    if not source or "\n" in source:
        return None
    if isinstance(node, ast.Name):
        return f"{source}[1:]"
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.step is None
    ):
        owner = line.frame.segment(node.value)
        upper = node.slice.upper
        if not owner:
            return None
        if upper is None:
            return f"{owner}[1:]"
        if isinstance(upper, ast.Constant) and type(upper.value) is int and upper.value > 0:
            return f"{owner}[1:{upper.value + 1}]"
    return None


def _dataset_fix(line: FailingLine, context: ErrorContext, index: int, text: str) -> str | None:
    """The statement making the dataset of the file's lines, fixed to skip the header:
    ``TextLineDataset(path)`` + ``.skip(1)``, ``CsvDataset(...)`` + ``header=True``. None
    when no such dataset reads a file whose first line has ``text`` in that field; "" when
    one does but the fix cannot be written on one line."""
    for frame in [line.frame, *context.frames()]:
        tree = frame.tree()
        if tree is None:
            continue
        for statement in tree.body:
            for node in ast.walk(statement):
                if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                    continue
                source = frame.segment(node)
                if not source or node.func.attr not in ("CsvDataset", "TextLineDataset"):
                    continue
                first = _file_first_line(node, frame, context)
                if first is None or not _field_is(first, index, text):
                    continue
                if node.func.attr == "CsvDataset" and not any(
                    keyword.arg == "header" for keyword in node.keywords
                ):
                    fixed = rewrite(frame, statement, node, source[:-1] + ", header=True)")
                elif node.func.attr == "TextLineDataset" and ".skip(" not in (
                    frame.segment(statement) or ""
                ):
                    fixed = rewrite(frame, statement, node, f"{source}.skip(1)")
                else:
                    return ""
                return fixed if fixed and "\n" not in fixed else ""
    return None


def _read_header_line(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    text = (error.group("text") or "").strip()
    record, field, dtype = error.group("record"), error.group("field"), error.group("dtype")
    call = line.call
    direct = (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "decode_csv"
    )
    where = f"field {field} of record {record}" if record else f"field {field} of a line"
    said = f" holds {code(repr(text))}" if text else ""
    article = "an" if dtype[:1] in "aeiou" else "a"
    rule = f"{where.capitalize()}{said}, where `record_defaults` declares {article} {dtype}"
    if record not in (None, "0") or (text and not _WORD.fullmatch(text)):
        # A later line, or a value that is no word: a line of another format.
        return Finding(rule + ": that line is not in the format the defaults declare.", None)
    if not text:
        return None
    rule += (
        ": a word in the first line of a CSV file, where numbers are declared, is the "
        "file's header (its column names), not data; skip that line"
    )
    maybe = (
        f"{where.capitalize()}{said}, where `record_defaults` declares {article} {dtype}: a line "
        "in another format than the defaults declare (a header line of column names, or a "
        "value written as text)."
    )
    index = int(field)
    if direct:
        node = _records_node(call)  # type: ignore[arg-type]
        first = _first_record(node, line, context) if node is not None else None
        if first is None or not _field_is(first, index, text):
            return Finding(maybe, None)
        skipped = _skipped(node, line) if node is not None else None
        if skipped is None or line.statement is None:
            return Finding(rule + ".", None)
        fixed = rewrite(line.frame, line.statement, node, skipped)  # type: ignore[arg-type]
        return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)
    found = _dataset_fix(line, context, index, text)
    if found is None:
        return Finding(maybe, None)
    return Finding(rule + ".", code(found) if found else None)


def _field_is(record: str, index: int, text: str) -> bool:
    """Whether field ``index`` of the line ``record`` (comma-separated) is ``text``."""
    fields = record.rstrip("\r\n").split(",")
    return text != "" and index < len(fields) and fields[index].strip().strip('"') == text


def _first_record(node: ast.expr, line: FailingLine, context: ErrorContext) -> str | None:
    """The first line of the file the records come from: element 0 of ``lines`` for
    ``lines`` or ``lines[:k]`` (a small tensor, array or list of strings), else None."""
    base = node
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        lower = node.slice.lower
        if lower is not None and not (isinstance(lower, ast.Constant) and lower.value == 0):
            return None
        base = node.value
    found, value = value_of(base, line.frame, context)
    if not found:
        return None
    try:
        if type(value) is list:
            first = value[0] if value else None
        else:
            shape = getattr(value, "shape", None)
            if shape is None or len(shape) != 1 or not shape[0] or shape[0] > _MAX_LINES:
                return None
            numpy = getattr(value, "numpy", None)
            items = numpy() if callable(numpy) and type(value).__name__ == "EagerTensor" else value
            first = items[0]
        if isinstance(first, bytes):
            first = first.decode("utf-8", "replace")
        return first if type(first) is str else None
    except Exception:
        return None


def _file_first_line(node: ast.Call, frame: CellFrame, context: ErrorContext) -> str | None:
    """The first line of the file a ``TextLineDataset``/``CsvDataset`` reads (a path given
    as a string or a name holding one), read from at most a few KB."""
    if not node.args:
        return None
    argument = node.args[0]
    if isinstance(argument, ast.Constant):
        path = argument.value
    else:
        found, path = value_of(argument, frame, context)
        if not found:
            return None
    if type(path) is not str:
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(_MAX_HEAD)
    except Exception:
        return None
    return head.split(b"\n", 1)[0].decode("utf-8", "replace")


HEADER_LINE = ErrorFamily(
    "a CSV file's header line parsed as data",
    messages=(Message(_FIELD),),
    read=_read_header_line,
    section="tf-data-files",
)
