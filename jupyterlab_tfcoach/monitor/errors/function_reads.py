"""Which of some global names a call of the learner's own function reads (issue #25).

``omega, zeta = params()`` written before ``with tf.GradientTape() as tape:``, where
``params`` returns ``tf.exp(log_omega), tf.nn.softplus(raw_zeta)``: the expression names no
variable, yet it reads them through the function, so the tape that opens after it never
sees how the variables made ``omega``. To tell that, the calls of a plain name in an
expression (``params()``, ``forward(x)``) are followed to the functions they name in the
namespace: their source (the cell that defined them, as ``linecache`` keeps it) is read,
never run, for the global names each reads (a name loaded in its body that is neither a
parameter nor bound inside it), and the functions those call in turn, ``MAX_DEPTH`` deep.
Only plain Python functions are read (``type(f) is types.FunctionType``): a class, a
Keras model or a ``tf.function`` is not followed.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Callable, Collection
from typing import Any

# The module, not the name: ``syntax`` imports ``errors`` (``cell_sources``), which imports
# this module through ``dtypes``, while ``syntax`` is still being initialised.
from jupyterlab_tfcoach.monitor import syntax

MAX_DEPTH = 2
MAX_FUNCTIONS = 8
_MAX_SOURCE_CHARS = 100_000

Lookup = Callable[[str], tuple[bool, Any]]


def _called_names(node: ast.AST) -> list[str]:
    """The plain names called in ``node`` (``params`` of ``params()``), in order, once."""
    found: list[str] = []
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
            if inner.func.id not in found:
                found.append(inner.func.id)
    return found


def _global_reads(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names the function's body loads that it neither takes as a parameter nor binds."""
    arguments = definition.args
    bound = {
        a.arg
        for a in (
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            *(x for x in (arguments.vararg, arguments.kwarg) if x is not None),
        )
    }
    loaded: set[str] = set()
    for statement in definition.body:
        for inner in ast.walk(statement):
            if isinstance(inner, ast.Name):
                if isinstance(inner.ctx, ast.Load):
                    loaded.add(inner.id)
                else:
                    bound.add(inner.id)
            elif isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(inner.name)
    return loaded - bound


def _definition(function: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    if type(function) is not types.FunctionType:
        return None
    found = syntax.function_definition(function.__code__, _MAX_SOURCE_CHARS)
    return found[1] if found is not None else None


def names_in_source_order(node: ast.AST) -> list[str]:
    """The names ``node`` reads, each once, in the order they are written."""
    loads = [n for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    loads.sort(key=lambda n: (n.lineno, n.col_offset))
    return list(dict.fromkeys(n.id for n in loads))


def reads_through_calls(
    expression: ast.AST, wanted: Collection[str], lookup: Lookup
) -> tuple[str, list[str]] | None:
    """(the called function's name as written in ``expression``, the ``wanted`` names it
    reads, directly or through the functions it calls) for the first such call; None when
    no call of a learner's function in ``expression`` reads one of them."""
    wanted = set(wanted)
    if not wanted:
        return None
    read_functions = 0
    for called in _called_names(expression):
        seen: set[str] = set()
        frontier = [called]
        reads: set[str] = set()
        for _ in range(MAX_DEPTH):
            following: list[str] = []
            for name in frontier:
                if name in seen or read_functions >= MAX_FUNCTIONS:
                    continue
                seen.add(name)
                known, function = lookup(name)
                definition = _definition(function) if known else None
                if definition is None:
                    continue
                read_functions += 1
                globals_read = _global_reads(definition)
                reads |= globals_read & wanted
                following.extend(
                    n for n in _called_names(definition) if n in globals_read and n not in seen
                )
            frontier = following
        if reads:
            return called, sorted(reads)
    return None
