"""A function that gives its NumPy array parameter a second name, writes into the array
through that name and returns it: the caller's array is overwritten.

``def perturb(a): out = a; out[mask] = 0; return out`` copies nothing: ``out`` is the very
array the caller passed, so the writes land in the caller's array, and a slice passed in
(``perturb(data[:10])``) is a view, so they land in ``data`` itself. The second name and
the ``return`` say a new array was meant; the caller gets its own array back, changed, and
every later cell reads the changed values. Nothing raises.

Read after a cell that completed, from two things that must agree:

- the function's source (its defining cell, as ``linecache`` keeps it, parsed once per
  function): a statement of its body ``N = P`` (``P`` a parameter; also ``P[:]``,
  ``P.view()`` and ``np.asarray(P)``, which make no copy of an array), then a write into
  ``N`` (``N[...] = v``, ``N[...] += v``, ``N += v``, or an in-place method: ``N.sort()``,
  ``N.fill(v)``, ``rng.shuffle(N)``, ...) and ``return N``; ``N`` bound once, ``P`` never
  bound again nor written under its own name (a function that writes into its parameter by
  that name means to work in place);
- the values after the cell: a statement of the cell, outside any function, ``R = f(...)``
  whose argument for ``P`` is a name ``A`` or a subscript of it (``A[:32]``), ``R`` not
  ``A``, neither bound again later in the cell, both holding NumPy arrays that share
  memory (``np.shares_memory``, its work bounded).

Told once per function, at the first such call. The fix gives ``N`` an array of its own:
``N = P.copy()`` (``np.array(P)`` for ``np.asarray(P)``). Silent: ``P = P.copy()`` first,
a copy passed in (``f(A.copy())``, ``f(A[idx])`` with an index array: both new arrays),
``A = f(A)`` (the caller replaces its array anyway), a function writing into its parameter
under its own name, or returning nothing (in place is its job), tensors (they take no
writes) and lists.
"""

from __future__ import annotations

import ast
import re
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    function_definition,
    outside_scopes,
    parsed_source,
    source_segment,
)

SECTION = "variable-references"
MAX_CELL_CHARS = 50_000
MAX_DEFINITION_CHARS = 50_000
# Bounds np.shares_memory's exact search (overlapping strided views can be costly); past
# it the arrays are taken as not shown to share memory.
MAX_OVERLAP_WORK = 10_000
_MAX_CALLS = 8
# A top-level (or loop-level) ``name = name(``: the only statements this check reads.
WANTED = re.compile(r"^\s*\w+\s*=\s*\w+\s*\(", re.M)
# Array methods that change the array they are called on.
_IN_PLACE_METHODS = frozenset({"sort", "fill", "put", "itemset", "partition", "resize"})
# Functions that change their first argument: ``np.random.shuffle(a)``, ``rng.shuffle(a)``,
# ``np.copyto(a, b)``, ``np.put(a, ...)``, ``np.fill_diagonal(a, v)``, ``np.place(a, ...)``.
_IN_PLACE_FUNCTIONS = frozenset({"shuffle", "copyto", "put", "fill_diagonal", "place", "putmask"})


@dataclass(frozen=True)
class ArrayAlias:
    function: str
    parameter: str  # ``a``
    position: int | None  # the parameter's place among the positional ones
    alias: str  # ``out``
    statement: str  # ``out = a``
    write: str  # ``out[mask] = 0``
    line: int  # of the write, in the defining cell
    fix: str  # ``out = a.copy()``


def _parameters(function: ast.FunctionDef) -> tuple[list[str], set[str]]:
    arguments = function.args
    positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
    return positional, {*positional, *(a.arg for a in arguments.kwonlyargs)}


def _root(node: ast.AST) -> str | None:
    """``a`` for ``a``, ``a[i]``, ``a[i][j]``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _aliased(value: ast.expr, parameters: set[str]) -> tuple[str, bool] | None:
    """The parameter a value names again without a copy, and whether through
    ``np.asarray(P)`` (else ``P``, ``P[:]``, ``P.view()``)."""
    if isinstance(value, ast.Name) and value.id in parameters:
        return value.id, False
    if (
        isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Name)
        and value.value.id in parameters
        and isinstance(value.slice, ast.Slice)
        and value.slice.lower is None
        and value.slice.upper is None
        and value.slice.step is None
    ):
        return value.value.id, False
    if isinstance(value, ast.Call) and not value.keywords:
        func = value.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "view"
            and not value.args
            and isinstance(func.value, ast.Name)
            and func.value.id in parameters
        ):
            return func.value.id, False
        if (
            call_name(value) in ("asarray", "asanyarray")
            and len(value.args) == 1
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id in parameters
        ):
            return value.args[0].id, True
    return None


def _writes(function: ast.FunctionDef, name: str) -> list[ast.AST]:
    """The statements and calls of ``function`` that write into the array ``name`` holds."""
    found: list[ast.AST] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Subscript) and _root(t) == name for t in node.targets):
                found.append(node)
        elif isinstance(node, ast.AugAssign):
            target = node.target
            if (isinstance(target, ast.Name) and target.id == name) or (
                isinstance(target, ast.Subscript) and _root(target) == name
            ):
                found.append(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            receiver = node.func.value
            if method in _IN_PLACE_METHODS and _root(receiver) == name:
                found.append(node)
            elif (
                method in _IN_PLACE_FUNCTIONS
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == name
            ):
                found.append(node)
    return found


def _bindings(function: ast.FunctionDef, name: str) -> int:
    return sum(
        1
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
    )


def _returns(function: ast.FunctionDef, name: str) -> bool:
    for node in ast.walk(function):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        if any(isinstance(v, ast.Name) and v.id == name for v in values):
            return True
    return False


def _one_line(source: str, node: ast.AST) -> str | None:
    text = source_segment(source, node)
    return None if text is None or "\n" in text else text


def function_alias(source: str, function: ast.FunctionDef, numpy: str) -> ArrayAlias | None:
    """What a function's source says: a parameter named again, written through the new
    name and returned (``numpy``: the learner's name for NumPy, for the fix)."""
    positional, parameters = _parameters(function)
    for statement in function.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            continue
        found = _aliased(statement.value, parameters)
        alias = statement.targets[0].id
        if found is None or alias in parameters:
            continue
        parameter, through_asarray = found
        if _bindings(function, alias) != 1 or _bindings(function, parameter) != 0:
            continue
        if _writes(function, parameter):
            continue  # written under its own name too: working in place is meant
        writes = [w for w in _writes(function, alias) if getattr(w, "lineno", 0) > statement.lineno]
        if not writes or not _returns(function, alias):
            continue
        written, text = writes[0], _one_line(source, statement)
        write = _one_line(source, written)
        if text is None or write is None:
            continue
        copy = f"{numpy}.array({parameter})" if through_asarray else f"{parameter}.copy()"
        return ArrayAlias(
            function.name,
            parameter,
            positional.index(parameter) if parameter in positional else None,
            alias,
            text,
            write,
            getattr(written, "lineno", 0),
            f"{alias} = {copy}",
        )
    return None


def _argument(call: ast.Call, found: ArrayAlias) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == found.parameter:
            return keyword.value
    if found.position is not None and found.position < len(call.args):
        if not any(isinstance(a, ast.Starred) for a in call.args[: found.position + 1]):
            return call.args[found.position]
    return None


def _last_bound(tree: ast.Module) -> dict[str, int]:
    last: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            last[node.id] = max(last.get(node.id, 0), node.lineno)
    return last


def _shares_memory(numpy: Any, left: Any, right: Any) -> bool:
    array = numpy.ndarray
    if type(left) is not array or type(right) is not array or left.size == 0:
        return False
    try:
        return bool(numpy.shares_memory(left, right, max_work=MAX_OVERLAP_WORK))
    except Exception:
        return False


class ArrayAliasCheck:
    """Functions read once per code object; each told once."""

    def __init__(self) -> None:
        # (file, first line, name) -> what the function's source says: text only.
        self._read: dict[tuple[str, int, str], ArrayAlias | None] = {}
        self._told: set[tuple[str, int, str]] = set()

    def _alias_of(self, function: types.FunctionType, numpy: str) -> ArrayAlias | None:
        code = function.__code__
        key = (code.co_filename, code.co_firstlineno, code.co_name)
        if key not in self._read:
            found = None
            if code.co_argcount + code.co_kwonlyargcount > 0:
                definition = function_definition(code, MAX_DEFINITION_CHARS)
                if definition is not None and isinstance(definition[1], ast.FunctionDef):
                    found = function_alias(definition[0], definition[1], numpy)
            self._read[key] = found
        return self._read[key]

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        numpy = sys.modules.get("numpy")
        if numpy is None or len(source) > MAX_CELL_CHARS or WANTED.search(source) is None:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        last_bound: dict[str, int] | None = None
        calls = 0
        for statement in outside_scopes(tree):
            if not (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and isinstance(statement.value, ast.Call)
                and isinstance(statement.value.func, ast.Name)
            ):
                continue
            function = namespace.get(statement.value.func.id)
            if type(function) is not types.FunctionType:
                continue
            calls += 1
            if calls > _MAX_CALLS:
                break
            code = function.__code__
            key = (code.co_filename, code.co_firstlineno, code.co_name)
            if key in self._told:
                continue
            found = self._alias_of(function, _numpy_name(namespace, numpy))
            if found is None:
                continue
            argument = _argument(statement.value, found)
            caller = _root(argument) if argument is not None else None
            result = statement.targets[0].id
            if caller is None or caller == result:
                continue
            if last_bound is None:
                last_bound = _last_bound(tree)
            line = statement.lineno
            if last_bound.get(result, 0) > line or last_bound.get(caller, 0) > line:
                continue
            array = namespace.get(caller)
            if not _shares_memory(numpy, namespace.get(result), array):
                continue
            text = _note_text(found, statement, argument, caller, source, namespace)
            if text is None:
                continue
            self._told.add(key)
            return [reports.note(text, SECTION)]
        return []


def _numpy_name(namespace: Mapping[str, Any], numpy: Any) -> str:
    if namespace.get("np") is numpy:
        return "np"
    return name_bound_to(id(numpy), namespace) or "np"


def _note_text(
    found: ArrayAlias,
    statement: ast.Assign,
    argument: ast.expr | None,
    caller: str,
    source: str,
    namespace: Mapping[str, Any],
) -> str | None:
    call = _one_line(source, statement)
    passed = _one_line(source, argument) if argument is not None else None
    if call is None or passed is None:
        return None
    result = statement.targets[0]
    assert isinstance(result, ast.Name)
    base = getattr(namespace.get(caller), "base", None)
    owner = name_bound_to(id(base), namespace) if base is not None else None
    also = f" (and `{owner}`, whose view `{caller}` is)" if owner and owner != caller else ""
    reached = f"`{caller}`{also} now holds what `{found.function}` wrote"
    if passed != caller:
        reached = f"`{passed}` is a view of `{caller}`, not a copy, so {reached}"
    return (
        f"`{found.statement}` in `{found.function}` copies nothing: `{found.alias}` is the "
        f"very array passed as `{found.parameter}`, so `{found.write}` (line {found.line} of "
        f"the cell defining `{found.function}`) writes into the caller's array, and "
        f"`return {found.alias}` hands that same array back. `{call}` (line "
        f"{statement.lineno}) left `{result.id}` sharing its memory with `{caller}`: "
        f"{reached}, and every later use of `{caller}` reads the changed values. Nothing "
        f"raises. Give `{found.alias}` an array of its own, then run the cells that made "
        f"`{caller}` again: `{found.fix}`."
    )


_CHECK = ArrayAliasCheck()


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The check of this kernel (the functions read and told so far: source text only)."""
    return _CHECK.notes(source, namespace)
