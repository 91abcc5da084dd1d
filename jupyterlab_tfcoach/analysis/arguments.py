"""Which expression a call passes for a parameter, read from the call's syntax alone.

``api_results.py`` reads TensorFlow calls' arguments with these, and so do the rules
(``tf.function(input_signature=...)``, ``tape.gradient(loss, sources)``).
"""

from __future__ import annotations

import ast


def positional(call: ast.Call, index: int) -> ast.expr | None:
    """The ``index``-th positional argument, unless a ``*args`` makes positions unknown."""
    for position, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return None
        if position == index:
            return argument
    return None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == name:
            return item.value
    return None


def has_unpacking(call: ast.Call) -> bool:
    """``f(*args)`` / ``f(**kwargs)``: which parameter gets what is unknown."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )
