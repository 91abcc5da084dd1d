"""A ``KeyError`` from the learner's own lookup table: a string the table does not hold.

``[char2id[c] for c in prompt]`` raises ``KeyError: 'T'`` when the prompt holds a
character the vocabulary was never built with (an upper-case letter, a digit, a
character of another text). Python's message is only the key, and the traceback never
enters TensorFlow. The reading finds the subscript of the failing line whose dict (read
from the frame, never called) has string keys and not the asked key, asked with a
variable, and names the dict, its size and the key missing; when the table has the key
in another case it says so (the table was built from lower-cased text). A key written as
a constant (``word_to_id["The"]``) is read only when the table holds it in another case,
and then the fix is the constant in the table's case (else a constant is ``DICT_KEY``'s
or a typo). No other fix is printed: whether to clean the input, extend the table or map
unknown keys to a reserved entry is the learner's choice.
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Recognised,
)

_MAX_SHOWN = 8


def _asked(message: str) -> str | None:
    try:
        key = ast.literal_eval(message.strip())
    except Exception:
        return None
    return key if type(key) is str else None


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    key = _asked(error.parsed.message)
    statement = line.statement
    if key is None or statement is None:
        return None
    for node in ast.walk(statement):
        if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)):
            continue
        constant = isinstance(node.slice, ast.Constant)
        if constant and getattr(node.slice, "value", None) != key:
            continue
        found, table = value_of(node.value, line.frame, context)
        if not found or type(table) is not dict or not table or key in table:
            continue
        keys: list[Any] = list(table)
        if not all(isinstance(each, str) for each in keys):  # NumPy str_ keys too
            continue
        name = line.frame.segment(node.value) or "the dict"
        asked = line.frame.segment(node) or name
        shown = ", ".join(repr(str(each)) for each in keys[:_MAX_SHOWN])  # np.str_ as text
        more = ", ..." if len(keys) > _MAX_SHOWN else ""
        rule = (
            f"{code(asked)} asked {code(name)} for the key {code(repr(key))}, which it does "
            f"not have: {code(name)} is a dict of {len(keys)} string keys ({shown}{more}), "
            "and a dict raises KeyError for any key it was not built with"
        )
        other_case = [
            each
            for each in (key.lower(), key.upper(), key.capitalize(), key.strip())
            if each != key and each in table
        ]
        if constant and not other_case:
            continue
        if constant and statement is not None:
            # The user's quote character: the constant may sit inside an f-string.
            quote = (line.frame.segment(node.slice) or "'")[:1]
            quote = quote if quote in ("'", '"') and quote not in other_case[0] else "'"
            written = f"{quote}{other_case[0]}{quote}" if "\\" not in other_case[0] else None
            fixed = rewrite(line.frame, statement, node.slice, written) if written else None
            fix = code(fixed) if fixed and "\n" not in fixed else None
            rule += (
                f". It has {code(repr(other_case[0]))}: the table was built from text in "
                "another case (a vocabulary made from lower-cased text, as TextVectorization "
                "and most tokenizers lower-case by default), so ask for the key in its case"
            )
            return Finding(rule + ".", fix, section=GENERAL_SECTION)
        if other_case:
            rule += (
                f". It has {code(repr(other_case[0]))}: the table was built from text in "
                f"another case, so the input must be put in that case too (or the table "
                "built from both)"
            )
        else:
            rule += (
                ". The input holds a value the table was never built with: keep the input "
                "to the table's keys, or map unknown ones to a reserved entry with `.get`"
            )
        return Finding(rule + ".", None, section=GENERAL_SECTION)
    return None


LOOKUP_KEY = ErrorFamily(
    "a string missing from the learner's lookup dict",
    messages=(),
    exception_type="KeyError",
    read=_read,
    section=GENERAL_SECTION,
    without_library=True,
)
