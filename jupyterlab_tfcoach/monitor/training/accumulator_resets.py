"""Gradient accumulators applied and never set back to zero.

Gradient accumulation adds each micro-batch's gradients into variables
(``for a, g in zip(acc, grads): a.assign_add(g / k)``) and every ``k`` micro-batches
hands them to the optimizer (``opt.apply_gradients(zip(acc, model.trainable_variables))``).
The accumulators must then be zeroed: left as they are, each later update applies the sum
of every gradient since the first step, old gradients are applied again and again and the
steps keep growing. Nothing raises.

After a completed cell holding ``assign_add`` and ``apply_gradients`` (or ``.apply(``;
substring tests otherwise), read with ``ast``: a loop (in a function the cell defines, or
at its top level) whose body both adds into the items of a list ``acc`` (an inner
``for a, ... in zip(acc, ...)`` / ``for a in acc`` whose body calls ``a.assign_add``, or
``acc[i].assign_add``) and applies ``acc`` (``X.apply_gradients(zip(acc, ...))``,
``list(zip(...))``, or ``X.apply(acc, ...)``), where ``acc`` appears nowhere else in the
loop (no ``assign`` of zeros, no new list bound to it, no function given it) and the
namespace after the cell holds ``acc`` as a list of variables. The note names the list,
the two lines and the function; the fix is the reset to write under the apply line.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "training-loop"
MAX_CELL_CHARS = 50_000
_MAX_ITEMS = 10_000
_LOOPS = (ast.For, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


def _variables(value: Any) -> bool:
    """A list (or tuple) of TensorFlow or Keras variables, by type names only."""
    if type(value) not in (list, tuple) or not value or len(value) > _MAX_ITEMS:
        return False
    for item in value:
        names = {k.__name__ for k in type(item).__mro__}
        if not names & {"Variable", "ResourceVariable", "BaseResourceVariable"}:
            return False
    return True


def _names_in(node: ast.AST, name: str) -> list[ast.Name]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]


def _added_into(loop: ast.stmt) -> dict[str, tuple[ast.For | None, ast.Call]]:
    """The lists whose items the loop's body adds into, with the inner loop (or None for
    ``acc[i].assign_add``) and the ``assign_add`` call."""
    found: dict[str, tuple[ast.For | None, ast.Call]] = {}
    for inner in ast.walk(loop):
        if isinstance(inner, ast.For) and inner is not loop:
            walked: list[tuple[str, str]] = []  # (item name, list name)
            target, iterable = inner.target, inner.iter
            if isinstance(target, ast.Name) and isinstance(iterable, ast.Name):
                walked.append((target.id, iterable.id))
            elif (
                isinstance(target, ast.Tuple)
                and isinstance(iterable, ast.Call)
                and isinstance(iterable.func, ast.Name)
                and iterable.func.id == "zip"
                and len(iterable.args) == len(target.elts)
            ):
                for element, argument in zip(target.elts, iterable.args, strict=True):
                    if isinstance(element, ast.Name) and isinstance(argument, ast.Name):
                        walked.append((element.id, argument.id))
            for item, listed in walked:
                for call in ast.walk(inner):
                    if (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and call.func.attr == "assign_add"
                        and isinstance(call.func.value, ast.Name)
                        and call.func.value.id == item
                    ):
                        found.setdefault(listed, (inner, call))
        elif (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr == "assign_add"
            and isinstance(inner.func.value, ast.Subscript)
            and isinstance(inner.func.value.value, ast.Name)
        ):
            found.setdefault(inner.func.value.value.id, (None, inner))
    return found


def _applied(loop: ast.stmt, name: str) -> ast.Call | None:
    """``X.apply_gradients(zip(name, ...))`` (or ``list(zip(...))``), ``X.apply(name, ...)``
    in the loop's body."""
    for call in ast.walk(loop):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        first = call.args[0] if call.args else None
        if call.func.attr == "apply_gradients" and first is not None:
            if (
                isinstance(first, ast.Call)
                and isinstance(first.func, ast.Name)
                and first.func.id == "list"
                and first.args
            ):
                first = first.args[0]
            if (
                isinstance(first, ast.Call)
                and isinstance(first.func, ast.Name)
                and first.func.id == "zip"
                and first.args
                and isinstance(first.args[0], ast.Name)
                and first.args[0].id == name
            ):
                return call
        if call.func.attr == "apply" and isinstance(first, ast.Name) and first.id == name:
            return call
    return None


def _only_uses(loop: ast.stmt, name: str, allowed: list[ast.AST]) -> bool:
    """``name`` read in the loop only inside the ``allowed`` nodes."""
    inside = {id(n) for node in allowed for n in ast.walk(node)}
    return all(id(n) in inside for n in _names_in(loop, name))


def _scopes(tree: ast.Module) -> list[tuple[str | None, ast.AST]]:
    scopes: list[tuple[str | None, ast.AST]] = [(None, tree)]
    scopes += [(n.name, n) for n in ast.walk(tree) if isinstance(n, _SCOPES)]
    return scopes


def _loops_of(scope: ast.AST) -> list[ast.stmt]:
    """The loops of a scope, not those of functions defined inside it."""
    found: list[ast.stmt] = []
    pending = list(getattr(scope, "body", []))
    while pending:
        statement = pending.pop()
        if isinstance(statement, (*_SCOPES, ast.ClassDef)):
            continue
        if isinstance(statement, _LOOPS):
            found.append(statement)
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                pending.append(child)
    return found


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if (
        "assign_add" not in source
        or ("apply_gradients" not in source and ".apply(" not in source)
        or len(source) > MAX_CELL_CHARS
    ):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    lines = source.splitlines()
    for function, scope in _scopes(tree):
        for loop in _loops_of(scope):
            for listed, (inner, added) in _added_into(loop).items():
                applied = _applied(loop, listed)
                if applied is None or not _variables(namespace.get(listed)):
                    continue
                allowed: list[ast.AST] = [applied, inner.iter if inner is not None else added]
                if not _only_uses(loop, listed, allowed):
                    continue
                statement = next(
                    (s for s in ast.walk(loop) if isinstance(s, ast.Expr) and s.value is applied),
                    None,
                )
                if statement is None or applied.lineno != applied.end_lineno:
                    continue
                tf = name_bound_to(id(sys.modules.get("tensorflow")), namespace) or "tf"
                return [_note(function, listed, added, applied, statement, lines, tf)]
    return []


def _note(
    function: str | None,
    listed: str,
    added: ast.Call,
    applied: ast.Call,
    statement: ast.Expr,
    lines: list[str],
    tf: str,
) -> Note:
    added_line = lines[added.lineno - 1].strip()
    applied_line = lines[applied.lineno - 1].strip()
    where = f"`{function}`" if function else "This cell's loop"
    item = "a" if listed != "a" else "v"
    reset = f"for {item} in {listed}: {item}.assign({tf}.zeros_like({item}))"
    indent = " " * statement.col_offset
    text = (
        f"{where} adds each batch's gradients into `{listed}` (`{added_line}`, line "
        f"{added.lineno}) and applies them (`{applied_line}`, line {applied.lineno}) in "
        f"the same loop, but never sets `{listed}` back to zero: every later update applies "
        f"the sum of all the gradients since the first step, so old gradients are applied "
        f"again and again and the steps keep growing. Nothing raises. Zero the "
        f"accumulators right after applying them: under line {applied.lineno}, at its "
        f"indentation{' (' + str(len(indent)) + ' spaces)' if indent else ''}, write "
        f"`{reset}`."
    )
    return reports.note(text, SECTION)
