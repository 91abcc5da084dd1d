"""Which ``GradientTape`` binding a ``tape.method(...)`` call uses (TFC006, TFC008)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis.bindings import TAPE, Value
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.model import Binding, Site


@dataclass(frozen=True)
class TapeCall:
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
        resolution = ctx.bindings.resolve(
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
