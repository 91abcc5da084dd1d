"""List arguments one per axis, written one per spatial axis (issue #25).

``tf.image.extract_patches(images, sizes=[P, P], strides=[P, P], rates=[1, 1], ...)``,
``tf.nn.conv3d(volume, kernel, strides=[2, 2, 2], ...)``, ``tf.nn.dilation2d(...,
strides=[1, 1], dilations=[1, 1])``: the op takes a window, a stride or a rate for every
axis of its input, batch and channels included, and says ``Length for attr 'strides' of 2
must be at least minimum 4``. The attribute it names is the op's (``ksizes``, ``rates``),
not always the Python argument's name, and it names one attribute only: the others may be
as short. So the reading does not trust the name: it reads the lengths of the list
arguments of the failing call (literal lists or tuples of whole numbers, or names holding
them) and names every one shorter than the minimum. When each is two entries short and the
layout is known (channels last, the default, or ``data_format="NC..."``), the fix gives the
batch and channel axes a 1: ``[1, P, P, 1]``.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite_all
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

SECTION = "shape-dtype-device"
_LIST_LENGTH = re.compile(
    r"Length for attr '(?P<attr>\w+)' of (?P<length>\d+) must be at least minimum "
    r"(?P<minimum>\d+)"
)
_MAX_MINIMUM = 8  # one entry per axis: no op has more axes than this


def _whole_numbers(node: ast.expr, line: FailingLine, context: ErrorContext) -> int | None:
    """The length of ``node`` when it is a list or tuple of whole numbers (written, or a
    name holding one); None for anything else (a tensor, a shape, a string)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        if any(isinstance(item, ast.Starred) for item in node.elts):
            return None
        for item in node.elts:
            if isinstance(item, ast.Constant):
                if type(item.value) is not int:
                    return None
                continue
            found, value = value_of(item, line.frame, context)
            if not found or type(value) is not int:
                return None
        return len(node.elts)
    if isinstance(node, ast.Name):
        found, value = value_of(node, line.frame, context)
        if found and type(value) in (list, tuple) and all(type(v) is int for v in value):
            return len(value)
    return None


def _channels_first(call: ast.Call) -> bool | None:
    """Whether the call's ``data_format`` puts channels second; None when it is not a
    string written in the call (then where the 1s go is not known)."""
    for keyword in call.keywords:
        if keyword.arg == "data_format":
            value = keyword.value
            if isinstance(value, ast.Constant) and type(value.value) is str:
                return value.value.upper().startswith("NC")
            return None
    return False


def _read_lengths(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or line.statement is None:
        return None
    minimum = int(error.group("minimum"))
    if not 2 < minimum <= _MAX_MINIMUM:
        return None
    short: list[tuple[str, ast.expr, int]] = []
    for index, node in enumerate(call.args):
        length = _whole_numbers(node, line, context)
        if length is not None and length < minimum:
            short.append((f"argument {index + 1}", node, length))
    for keyword in call.keywords:
        if keyword.arg is None:
            continue
        length = _whole_numbers(keyword.value, line, context)
        if length is not None and length < minimum:
            short.append((keyword.arg, keyword.value, length))
    if not short or not any(length == int(error.group("length")) for *_, length in short):
        return None
    callee = line.frame.segment(call.func)
    if not callee:
        return None
    written: list[str] = []
    for name, node, length in short:
        text = line.frame.segment(node)
        if not text:
            return None
        entries = "entry" if length == 1 else "entries"
        shown = code(f"{name}={text}") if not name.startswith("argument") else code(text)
        written.append(f"{shown} has {length} {entries}")
    names = [code(name) for name, *_ in short]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    each = " each" if len(names) > 1 else ""
    here = written[0] if len(written) == 1 else ", ".join(written[:-1]) + " and " + written[-1]
    rule = (
        f"{code(callee)} takes {listed} as {minimum} numbers{each}, one per axis of its "
        f"input, the batch and channel axes included (1 for those); here {here}"
    )
    first = _channels_first(call)
    if first is None or any(length != minimum - 2 for *_, length in short):
        return Finding(rule + ".", None)
    replacements: list[tuple[ast.AST, str]] = []
    for _name, node, _length in short:
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [line.frame.segment(item) for item in node.elts]
            if not all(items):
                return Finding(rule + ".", None)
            inner = ", ".join(str(item) for item in items)
        else:
            inner = f"*{line.frame.segment(node)}"
        spread = f"[1, 1, {inner}]" if first else f"[1, {inner}, 1]"
        replacements.append((node, spread))
    fixed = rewrite_all(line.frame, line.statement, replacements)
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


LIST_LENGTHS = ErrorFamily(
    "list arguments written one per spatial axis where the op takes one per axis",
    messages=(Message(_LIST_LENGTH),),
    read=_read_lengths,
    section=SECTION,
)
