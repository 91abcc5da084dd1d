"""A size argument with another number of entries than the value has axes.

``tf.image.random_crop(image, size=[32, 32])`` on a ``(36, 36, 3)`` image needs one size
per axis of the image, channels included; with two it fails inside the op, comparing the
image's shape with the size (``Incompatible shapes: [3] vs. [2] [Op:GreaterEqual]``), and
the message reads as a broadcast clash the learner never wrote. The reading finds the
call on the line whose ``size`` or ``shape`` argument (by keyword, or by its place in the
library function's signature) is a list written with as many entries as the message's
other count while its first argument has the message's rank; the fix keeps the written
sizes and adds the value's own size for each missing trailing axis.
"""

from __future__ import annotations

import ast
import inspect
import re

from jupyterlab_tfcoach.monitor.errors.calls import library_callee
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
)

_SECTION = "shape-dtype-device"
_COUNTS = re.compile(r"Incompatible shapes: \[(?P<a>\d+)\] vs\. \[(?P<b>\d+)\]")
_SIZE_PARAMETERS = ("size", "shape")


def _size_argument(call: ast.Call, line: FailingLine, context: ErrorContext) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in _SIZE_PARAMETERS:
            return keyword.value
    callee = library_callee(call.func, line.frame, context)
    if callee is None:
        return None
    try:
        names = list(inspect.signature(callee).parameters)
    except (TypeError, ValueError):
        return None
    for index, name in enumerate(names[: len(call.args)]):
        if name in _SIZE_PARAMETERS and index > 0:
            return call.args[index]
    return None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    counts = {int(error.group("a")), int(error.group("b"))}
    statement = line.statement
    if statement is None or len(counts) != 2:
        return None
    for call in ast.walk(statement):
        if not isinstance(call, ast.Call) or not call.args:
            continue
        size = _size_argument(call, line, context)
        if not isinstance(size, ast.List | ast.Tuple):
            continue
        value = operand_of(call.args[0], line, context)
        shape = value.shape if value is not None else None
        if shape is None or {len(shape), len(size.elts)} != counts or len(size.elts) > len(shape):
            continue
        missing = shape[len(size.elts) :]
        if any(dim is None for dim in missing):
            continue
        frame = line.frame
        written = [frame.segment(element) for element in size.elts]
        function = frame.segment(call.func) or "the call"
        if value is None or any(not text for text in written):
            continue
        entries = [*written, *(str(dim) for dim in missing)]
        new_size = "[" + ", ".join(entries) + "]"  # type: ignore[arg-type]
        rule = (
            f"{value.sentence()}. {code(function)} needs one size per axis of "
            f"{code(value.source)}, {len(shape)} for its {show_shape(shape)}, and "
            f"{code(frame.segment(size) or 'the size')} gives {len(size.elts)}: the last "
            f"{'axis keeps' if len(missing) == 1 else 'axes keep'} its size "
            f"({', '.join(str(dim) for dim in missing)})"
        )
        fixed = rewrite(frame, statement, size, new_size)
        if not fixed or "\n" in fixed:
            return Finding(rule + ".", None, section=_SECTION)
        return Finding(rule + ".", code(fixed), section=_SECTION)
    return None


SIZE_ENTRIES = ErrorFamily(
    "a size argument with another number of entries than the value has axes",
    messages=(Message(_COUNTS),),
    read=_read,
    section=_SECTION,
)
