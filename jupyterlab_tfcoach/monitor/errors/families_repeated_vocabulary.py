"""A lookup layer given, as its vocabulary, data that lists each value once per occurrence
(issue #25).

``genre_lookup = layers.StringLookup(vocabulary=listened_genres)`` where
``listened_genres`` holds one genre per play: Keras refuses a vocabulary with a repeated
term (``The passed vocabulary has at least one repeated term. Please uniquify your
dataset.``), and the message lists the terms but not why they repeat. Recognised by that
message; the reading takes the vocabulary the failing line passes (``vocabulary=`` of a
``StringLookup``/``IntegerLookup``/``TextVectorization``, or ``set_vocabulary``'s
argument), counts its entries and its different values (an array, a tensor or a list of
at most ``MAX_COUNTED`` values), and says that the data is a column of observations, not
a list of terms. The fix passes its different values (``np.unique(...)``); ``adapt`` on
the column, which counts the values itself, is named beside it.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, kind_of, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.errors.lookup_ids import LOOKUP_SECTION

_REPEATED = re.compile(r"The passed vocabulary has at least one repeated term")
_LAYERS = ("StringLookup", "IntegerLookup", "TextVectorization")
MAX_COUNTED = 1_000_000
_MAX_SHOWN = 160


def _vocabulary_argument(call: ast.AST | None) -> ast.expr | None:
    """The vocabulary the failing call passes: ``Layer(..., vocabulary=X)`` or
    ``layer.set_vocabulary(X)``."""
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    keyword = next((k.value for k in call.keywords if k.arg == "vocabulary"), None)
    if called in _LAYERS:
        return keyword
    if called == "set_vocabulary":
        return keyword or (call.args[0] if call.args else None)
    return None


def _counts(value: Any) -> tuple[int, int] | None:
    """(entries, different values) of a 1-D array, tensor or flat list of terms."""
    kind = kind_of(value)
    try:
        if kind in ("array", "tensor"):
            if len(value.shape) != 1 or int(value.shape[0]) > MAX_COUNTED:
                return None
            items = (value.numpy() if kind == "tensor" else value).tolist()
        elif type(value) in (list, tuple) and len(value) <= MAX_COUNTED:
            items = list(value)
        else:
            return None
        # Python's or NumPy's own scalars only: hashing runs no code of the learner's.
        if not all(
            type(item) in (str, bytes, int) or type(item).__module__ == "numpy" for item in items
        ):
            return None
        return len(items), len(set(items))
    except Exception:
        return None


def _assigned_layer(line: FailingLine) -> str | None:
    """``genre_lookup`` of ``genre_lookup = layers.StringLookup(...)``."""
    statement = line.statement
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id
    call = line.call
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        receiver = call.func.value
        return receiver.id if isinstance(receiver, ast.Name) else None
    return None


def _read_repeated_vocabulary(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    vocabulary = _vocabulary_argument(line.call)
    statement = line.statement
    if vocabulary is None or statement is None:
        return None
    source = line.frame.segment(vocabulary)
    found, value = value_of(vocabulary, line.frame, context)
    counts = _counts(value) if found else None
    if not source or "\n" in source or counts is None:
        return None
    entries, different = counts
    if different >= entries:
        return None
    rule = (
        f"{code(source)} has {entries} entries but only {different} different values: it "
        "lists a value each time it occurs (a column of the data, one row per "
        "observation), while a vocabulary lists each term once, its position giving the "
        "term's index"
    )
    np = context.module_alias("numpy", "np")
    fixed = rewrite(line.frame, statement, vocabulary, f"{np}.unique({source})")
    if not fixed or "\n" in fixed or len(fixed) > _MAX_SHOWN:
        return Finding(rule + ".", None)
    # Made here without the vocabulary, the layer counts the values itself with adapt.
    layer = _assigned_layer(line) if _makes_layer(line.call) else None
    adapt = (
        f"; or make the layer without `vocabulary=` and let it find the terms: "
        f"{code(f'{layer}.adapt({source})')}"
        if layer is not None
        else ""
    )
    return Finding(rule + ".", f"pass its different values, {code(fixed)}{adapt}")


def _makes_layer(call: ast.AST | None) -> bool:
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return called in _LAYERS


REPEATED_VOCABULARY = ErrorFamily(
    "a lookup layer's vocabulary given a column of observations, each value repeated",
    messages=(Message(_REPEATED),),
    exception_type="ValueError",
    read=_read_repeated_vocabulary,
    section=LOOKUP_SECTION,
)
