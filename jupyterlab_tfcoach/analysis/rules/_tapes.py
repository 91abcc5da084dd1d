"""Which ``GradientTape`` binding a ``tape.method(...)`` call uses (TFC006, TFC008)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.model import Binding, Site
from jupyterlab_tfcoach.analysis.values import TAPE, Value


class TapeCall(NamedTuple):  # one per tape method call in the file: cheap to build
    site: Site
    call: ast.Call
    method: str
    tape_name: str
    binding: Binding  # the one binding creating the tape this call uses
    tape: Value


def tape_calls(ctx: RuleContext, methods: frozenset[str]) -> Iterator[TapeCall]:
    """Calls ``<name>.<method>(...)`` where ``<name>`` surely is one tape created in this scope."""
    for site in ctx.calls_named(*sorted(methods)):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in methods
            and isinstance(func.value, ast.Name)
        ):
            continue
        name = func.value
        resolution = ctx.bindings.names.resolve(
            site.scope, name.id, (name.lineno, name.col_offset), site.path
        )
        # Only a tape bound in this very scope: from a nested function we cannot
        # know how many times, or in which order, the calls run.
        if resolution is None or not resolution.flow_sensitive or len(resolution.bindings) != 1:
            continue
        binding = resolution.bindings[0]
        if binding.kind not in ("with", "assign"):
            continue
        tape = ctx.bindings.binding_value(binding)
        if tape.kind == TAPE:
            yield TapeCall(site, call, func.attr, name.id, binding, tape)


@dataclass(frozen=True)
class HelperTapeUse:
    """A call ``helper(tape, ...)`` passing a tape to a function of this file that computes
    gradients with it: ``calls`` are the helper's own ``<param>.<method>(...)`` calls."""

    site: Site
    call: ast.Call
    helper: str
    tape_name: str
    binding: Binding  # the binding creating the tape passed in
    tape: Value
    calls: tuple[Site, ...]  # in source order


def _parameter_tape_calls(
    ctx: RuleContext, methods: frozenset[str]
) -> dict[ast.AST, dict[str, list[Site]]]:
    """Per function definition, the ``<param>.<method>(...)`` calls on each parameter.

    One pass over the method calls; a parameter rebound in the function is not followed.
    """
    found: dict[ast.AST, dict[str, list[Site]]] = {}
    for site in ctx.calls_named(*sorted(methods)):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            continue
        function = site.scope.function
        if function is None or function is not site.scope or function.kind != "function":
            continue  # only the helper's own body: a nested def may run any number of times
        bindings = function.bindings.get(func.value.id, ())
        if len(bindings) != 1 or bindings[0].kind != "param":
            continue
        found.setdefault(function.node, {}).setdefault(func.value.id, []).append(site)
    return found


def _parameter_for(definition: ast.AST, call: ast.Call, argument: ast.expr) -> str | None:
    """The parameter of ``definition`` that ``argument`` of ``call`` binds."""
    assert isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef))
    positional = [*definition.args.posonlyargs, *definition.args.args]
    for index, passed in enumerate(call.args):
        if passed is argument:
            if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
                return None
            return positional[index].arg if index < len(positional) else None
    for passed_keyword in call.keywords:
        if passed_keyword.value is argument and passed_keyword.arg is not None:
            return passed_keyword.arg
    return None


def helper_tape_uses(ctx: RuleContext, methods: frozenset[str]) -> Iterator[HelperTapeUse]:
    """Calls of same-file functions that compute gradients on a tape passed to them."""
    by_definition = _parameter_tape_calls(ctx, methods)
    if not by_definition:
        return
    names = sorted({definition.name for definition in by_definition})  # type: ignore[attr-defined]
    for site in ctx.calls_named(*names):
        call = site.node
        assert isinstance(call, ast.Call)
        if not isinstance(call.func, ast.Name):
            continue  # ``obj.helper(tape)``: which definition runs is not known here
        callee = ctx.bindings.names.resolve(
            site.scope, call.func.id, (call.func.lineno, call.func.col_offset), site.path
        )
        if callee is None or len(callee.bindings) != 1 or callee.bindings[0].kind != "def":
            continue
        definition = callee.bindings[0].node
        per_parameter = by_definition.get(definition)
        if per_parameter is None:
            continue
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            if not isinstance(argument, ast.Name):
                continue
            parameter = _parameter_for(definition, call, argument)
            if parameter is None or parameter not in per_parameter:
                continue
            resolution = ctx.bindings.names.resolve(
                site.scope, argument.id, (argument.lineno, argument.col_offset), site.path
            )
            if resolution is None or not resolution.flow_sensitive:
                continue
            if len(resolution.bindings) != 1 or resolution.bindings[0].kind not in (
                "with",
                "assign",
            ):
                continue
            binding = resolution.bindings[0]
            tape = ctx.bindings.binding_value(binding)
            if tape.kind == TAPE:
                yield HelperTapeUse(
                    site,
                    call,
                    call.func.id,
                    argument.id,
                    binding,
                    tape,
                    tuple(per_parameter[parameter]),
                )
