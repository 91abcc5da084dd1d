"""A function that names its weights parameter again, steps it in place and returns it.

``def finetune(ws, ...): fast = ws`` copies nothing: ``fast`` is the very list the caller
passed, holding the caller's tf.Variables. Stepping them in place (``for w, g in zip(fast,
grads): w.assign_sub(lr * g)``, or an optimizer's ``apply_gradients(zip(grads, fast))``)
changes the caller's weights, and ``return fast`` hands back the same objects: the caller
that passes its weights to fine-tune a copy loses them, each later call starts from the
previous one's result, and "before" and "after" are one set of weights. Nothing raises.
The second name, and returning it, say a copy was meant: a function written to train in
place updates its parameter under its own name and need not return it.

Read from the source of the cell that defines the function (``ast``, never run): in a
function, a statement ``N = P`` (``P`` a parameter, ``N`` another plain name), the items of
``N`` updated in place afterwards (``.assign*`` on the loop name of a loop over ``N`` or
``zip(N, ...)``, on ``N[i]``, or ``N`` given to ``apply_gradients``/``minimize``), ``N``
never bound again, ``P`` never updated under its own name, and ``return N``. Told once per
function, in the cell that defines it. Silent in a ``tf.function`` (the copy would be a
variable made on every call: ``errors/variable_copies.py``). The fix copies the variables:
``N = [tf.Variable(w) for w in P]``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, function_scopes, parsed_source

SECTION = "variable-references"
MAX_CELL_CHARS = 50_000
_ASSIGNS = frozenset({"assign", "assign_add", "assign_sub"})
_APPLIES = frozenset({"apply_gradients", "minimize", "apply"})


@dataclass(frozen=True)
class Alias:
    function: str
    alias: str  # ``fast``
    parameter: str  # ``ws``
    statement: str  # ``fast = ws``
    update: str  # ``w.assign_sub(lr * g)``
    line: int  # of the update, in the cell


def _segment(source: str, node: ast.AST) -> str:
    return " ".join((ast.get_source_segment(source, node) or "").split())


def _parameters(function: ast.FunctionDef) -> set[str]:
    arguments = function.args
    return {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}


def _compiled(function: ast.FunctionDef) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "function":
            return True
    return False


def _iterates(loop: ast.For, name: str) -> str | None:
    """The loop name holding ``name``'s items: ``for w in N``, ``for w, g in zip(N, ...)``,
    ``for i, w in enumerate(N)``."""
    iterated = loop.iter
    target = loop.target
    if isinstance(iterated, ast.Name) and iterated.id == name and isinstance(target, ast.Name):
        return target.id
    if not (isinstance(iterated, ast.Call) and isinstance(target, ast.Tuple)):
        return None
    called = call_name(iterated)
    if called == "zip" and len(iterated.args) == len(target.elts):
        for argument, element in zip(iterated.args, target.elts, strict=True):
            if isinstance(argument, ast.Name) and argument.id == name:
                return element.id if isinstance(element, ast.Name) else None
    if (
        called == "enumerate"
        and iterated.args
        and isinstance(iterated.args[0], ast.Name)
        and iterated.args[0].id == name
        and len(target.elts) == 2
        and isinstance(target.elts[1], ast.Name)
    ):
        return target.elts[1].id
    return None


def _in_place_update(function: ast.FunctionDef, name: str) -> ast.Call | None:
    """The first call that changes ``name``'s items in place."""
    items: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.For):
            item = _iterates(node, name)
            if item is not None:
                items.add(item)
    for node in ast.walk(function):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method = node.func.attr
        receiver = node.func.value
        if method in _ASSIGNS:
            if isinstance(receiver, ast.Name) and receiver.id in items:
                return node
            if (
                isinstance(receiver, ast.Subscript)
                and isinstance(receiver.value, ast.Name)
                and receiver.value.id == name
            ):
                return node
        if method in _APPLIES and any(
            isinstance(n, ast.Name) and n.id == name
            for argument in [*node.args, *(k.value for k in node.keywords)]
            for n in ast.walk(argument)
        ):
            return node
    return None


def _bindings(function: ast.FunctionDef, name: str) -> int:
    count = 0
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            count += 1
    return count


def _function_aliases(source: str, function: ast.FunctionDef) -> Alias | None:
    if _compiled(function):
        return None
    parameters = _parameters(function)
    for statement in function.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Name)
            and statement.value.id in parameters
            and statement.targets[0].id != statement.value.id
        ):
            continue
        alias, parameter = statement.targets[0].id, statement.value.id
        if _bindings(function, alias) != 1 or _bindings(function, parameter) != 0:
            continue
        if _in_place_update(function, parameter) is not None:
            continue  # the parameter is trained under its own name too: in place is meant
        update = _in_place_update(function, alias)
        if update is None:
            continue
        returned = any(
            isinstance(node, ast.Return)
            and node.value is not None
            and any(isinstance(n, ast.Name) and n.id == alias for n in ast.walk(node.value))
            for node in ast.walk(function)
        )
        if not returned:
            continue
        text = _segment(source, update)
        if not text:
            continue
        return Alias(
            function.name, alias, parameter, _segment(source, statement), text, update.lineno
        )
    return None


def _module_alias(namespace: Mapping[str, Any], module: str, default: str) -> str:
    loaded = sys.modules.get(module)
    if loaded is None or namespace.get(default) is loaded:
        return default
    for name, value in list(namespace.items())[:5000]:
        if value is loaded and type(name) is str and not name.startswith("_"):
            return name
    return default


class ParameterAliasCheck:
    """Each function told once, in the cell that defines it."""

    def __init__(self) -> None:
        self._told: set[tuple[str, str]] = set()

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if len(source) > MAX_CELL_CHARS or "def " not in source or "return" not in source:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        found: list[Note] = []
        for scope in function_scopes(tree)[1:]:
            if not isinstance(scope, ast.FunctionDef):
                continue
            alias = _function_aliases(source, scope)
            if alias is None or (alias.function, alias.statement) in self._told:
                continue
            self._told.add((alias.function, alias.statement))
            tf = _module_alias(namespace, "tensorflow", "tf")
            fix = f"{alias.alias} = [{tf}.Variable(w) for w in {alias.parameter}]"
            found.append(
                reports.note(
                    f"`{alias.statement}` in `{alias.function}` copies nothing: "
                    f"`{alias.alias}` is the very list passed as `{alias.parameter}`, holding "
                    f"the caller's variables, so `{alias.update}` (line {alias.line}) changes "
                    f"the caller's weights in place, and `return` hands back the same "
                    f"objects. A caller that passes its weights to `{alias.function}` loses "
                    f"them: each later call starts from the previous call's result, and the "
                    f"weights before and after are one set. Copy the variables first: "
                    f"`{fix}`.",
                    SECTION,
                )
            )
        return found


_CHECK = ParameterAliasCheck()


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The check of this kernel (the functions told so far: source text only)."""
    return _CHECK.notes(source, namespace)
