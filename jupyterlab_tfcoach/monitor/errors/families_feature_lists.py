"""A ``tf.train.Int64List``, ``FloatList`` or ``BytesList`` given values of another kind
while building a ``tf.train.Example``.

Protobuf checks each entry as it is stored and raises in the learner's own line with a
message about Python types only (``'str' object cannot be interpreted as an integer``,
``must be real number, not str``, ``expected bytes, str found``, ``must assign
iterable``), so nothing names the list or the value. The reading finds the list built on
the failing line, reads the value given as its ``value`` and says what each list takes
against what it got; the fix, when the value shows it: a single number wrapped in a list
(``value=[label]``), text encoded for a ``BytesList`` (``value=[text.encode()]``). Text
given to a list of numbers has no fix in the line: it is the words, not their ids, and the
entry says so (and that a function's argument came from its caller).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

_DATA_SECTION = "tf-data"
_LISTS = {
    "Int64List": "integers",
    "FloatList": "floats",
    "BytesList": "bytes (text encoded, e.g. `text.encode()`)",
}
_MESSAGES = (
    re.compile(r"^'\w+' object cannot be interpreted as an integer"),
    re.compile(r"^must be real number, not \w+"),
    re.compile(r"^expected bytes, \w+ found"),
    re.compile(r"^must assign iterable"),
)
_SHOWN = 40


def _what(value: Any) -> str | None:
    """Plain Python and NumPy values in words (built-in types only: no user repr)."""
    if type(value) is str:
        shown = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
        return f"the string {shown!r} (text, {len(value)} characters)"
    if type(value) in (int, float, bool):
        return f"the single {type(value).__name__} {value!r}, not a list"
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
        return f"a single NumPy {type(value).__name__}, not a list"
    if type(value) in (list, tuple) and value:
        kinds = sorted({type(item).__name__ for item in list(value)[:50]})
        return f"a {type(value).__name__} of {len(value)} {' and '.join(kinds)} values"
    return None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in _LISTS:
            continue
        given = next((k.value for k in node.keywords if k.arg == "value"), None)
        if given is None and node.args:
            given = node.args[0]
        source = line.frame.segment(given) if given is not None else None
        if given is None or not source or "\n" in source:
            continue
        try:
            if isinstance(given, ast.List):
                # ``value=[title]``: each entry read on its own.
                read = [value_of(entry, line.frame, context) for entry in given.elts]
                found, value = all(ok for ok, _ in read), [entry for _, entry in read]
            else:
                found, value = value_of(given, line.frame, context)
        except Exception:
            continue
        what = _what(value) if found else None
        if what is None:
            continue
        rule = (
            f"{code(source)} is {what}. A `tf.train.{name}` holds a list of {_LISTS[name]}, "
            "one per entry"
        )
        fix_text: str | None = None
        items = list(value) if type(value) in (list, tuple) else None
        if name == "BytesList" and type(value) is str:
            fix_text = f"[{source}.encode()]"
        elif name == "BytesList" and items and all(type(item) is str for item in items):
            written = [line.frame.segment(entry) for entry in getattr(given, "elts", [])]
            fix_text = (
                "[" + ", ".join(f"{entry}.encode()" for entry in written) + "]"
                if isinstance(given, ast.List) and all(written)
                else f"[entry.encode() for entry in {source}]"
            )
        elif name != "BytesList" and type(value) is not str and items is None:
            fix_text = f"[{source}]"
        elif name != "BytesList" and (
            type(value) is str or (items and all(type(item) is str for item in items))
        ):
            rule += (
                ": text has to become numbers (token ids, a "
                "parsed value) before it goes in, or go in a `BytesList` as text"
            )
            if "(in `" in line.where and isinstance(given, ast.Name):
                rule += (
                    f"; {code(source)} is an argument of the function, so the caller passed "
                    "text where numbers were meant"
                )
        if fix_text is None:
            return Finding(rule + ".", None, section=_DATA_SECTION)
        fixed = rewrite(line.frame, statement, given, fix_text)
        if not fixed or "\n" in fixed:
            return Finding(rule + ".", None, section=_DATA_SECTION)
        return Finding(rule + ".", code(fixed), section=_DATA_SECTION)
    return None


FEATURE_LIST_VALUES = ErrorFamily(
    "a tf.train feature list given values of another kind",
    messages=tuple(Message(pattern) for pattern in _MESSAGES),
    exception_type="TypeError",
    read=_read,
    section=_DATA_SECTION,
    without_library=True,
)
