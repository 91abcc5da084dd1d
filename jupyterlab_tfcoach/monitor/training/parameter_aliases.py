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

The same mistake at a cell's top level: ``tuned = list(params)`` (or ``params[:]``,
``params.copy()``, ``copy.copy(params)``, ``[w for w in params]``) copies the list, not
the variables in it. Told when ``P`` is a name of the namespace holding a list or tuple of
variables only, ``N`` is bound once in the cell and never grown as a list (``append``,
``extend``, ``insert``, ``+=``: gathering several lists of variables to train them all is
meant), ``N``'s items are updated in place in the cell and ``P``'s are not under its own
name, and ``P`` is read in the cell besides the copy (used as a set of weights of its
own: "before" measured with it, or given to the same function as ``N``). Told once per
statement.
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


_GROWS = frozenset({"append", "extend", "insert"})


def _shallow_copy_of(value: ast.expr) -> str | None:
    """``P`` of ``list(P)``, ``P[:]``, ``P.copy()``, ``copy.copy(P)``, ``[w for w in P]``."""
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        argument = value.args[0]
        if isinstance(argument, ast.Name) and (
            (isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple"))
            or (
                isinstance(value.func, ast.Attribute)
                and value.func.attr == "copy"
                and isinstance(value.func.value, ast.Name)
                and value.func.value.id == "copy"
            )
        ):
            return argument.id
    if (
        isinstance(value, ast.Call)
        and not value.args
        and not value.keywords
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "copy"
        and isinstance(value.func.value, ast.Name)
    ):
        return value.func.value.id
    if (
        isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Name)
        and isinstance(value.slice, ast.Slice)
        and value.slice.lower is None
        and value.slice.upper is None
        and value.slice.step is None
    ):
        return value.value.id
    if (
        isinstance(value, ast.ListComp)
        and len(value.generators) == 1
        and not value.generators[0].ifs
        and isinstance(value.elt, ast.Name)
        and isinstance(value.generators[0].target, ast.Name)
        and value.elt.id == value.generators[0].target.id
        and isinstance(value.generators[0].iter, ast.Name)
    ):
        return value.generators[0].iter.id
    return None


def _is_variable(value: Any) -> bool:
    cls = type(value)
    module = getattr(cls, "__module__", "") or ""
    return "Variable" in cls.__name__ and module.startswith(("tensorflow", "keras"))


def _holds_variables(value: Any) -> bool:
    if type(value) not in (list, tuple) or not value or len(value) > 10_000:
        return False
    return all(_is_variable(item) for item in value)


def _grown(tree: ast.AST, name: str) -> bool:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _GROWS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
        ):
            return True
        if (
            isinstance(node, ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
        ):
            return True
    return False


def _read_elsewhere(tree: ast.AST, name: str, statement: ast.stmt) -> bool:
    inside = {id(node) for node in ast.walk(statement)}
    return any(
        isinstance(node, ast.Name)
        and node.id == name
        and isinstance(node.ctx, ast.Load)
        and id(node) not in inside
        for node in ast.walk(tree)
    )


def _top_level_copies(source: str, tree: ast.Module, namespace: Mapping[str, Any]) -> list[Alias]:
    found = []
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            continue
        original = _shallow_copy_of(statement.value)
        copy = statement.targets[0].id
        if original is None or original == copy:
            continue
        if not _holds_variables(namespace.get(original)):
            continue
        if _bindings(tree, copy) != 1 or _grown(tree, copy):  # type: ignore[arg-type]
            continue
        if _in_place_update(tree, original) is not None:  # type: ignore[arg-type]
            continue
        update = _in_place_update(tree, copy)  # type: ignore[arg-type]
        if update is None or update.lineno <= statement.lineno:
            continue
        if not _read_elsewhere(tree, original, statement):
            continue
        text = _segment(source, update)
        if text:
            found.append(
                Alias("", copy, original, _segment(source, statement), text, update.lineno)
            )
    return found


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
        if len(source) > MAX_CELL_CHARS or not any(
            word in source for word in (".assign", "apply", "minimize")
        ):
            return []  # no update in place: neither form can be here
        tree = parsed_source(source)
        if tree is None:
            return []
        found: list[Note] = self._copy_notes(source, tree, namespace)
        if "def " not in source or "return" not in source:
            return found
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

    def _copy_notes(
        self, source: str, tree: ast.Module, namespace: Mapping[str, Any]
    ) -> list[Note]:
        found: list[Note] = []
        for copy in _top_level_copies(source, tree, namespace):
            if ("", copy.statement) in self._told:
                continue
            self._told.add(("", copy.statement))
            tf = _module_alias(namespace, "tensorflow", "tf")
            fix = f"{copy.alias} = [{tf}.Variable(w) for w in {copy.parameter}]"
            found.append(
                reports.note(
                    f"`{copy.statement}` copies the list, not the variables in it: "
                    f"`{copy.alias}` holds the very variables of `{copy.parameter}`, so "
                    f"`{copy.update}` (line {copy.line}) changed `{copy.parameter}` too. "
                    f"After this cell `{copy.parameter}` holds the values trained here, and "
                    f"every later use of it starts from them, not from the values it had. "
                    f"Copy the variables, then run the cells that made "
                    f"`{copy.parameter}` again: `{fix}`.",
                    SECTION,
                )
            )
        return found


_CHECK = ParameterAliasCheck()


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The check of this kernel (the functions told so far: source text only)."""
    return _CHECK.notes(source, namespace)
