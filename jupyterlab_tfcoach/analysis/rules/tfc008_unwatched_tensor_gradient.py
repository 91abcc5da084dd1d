"""TFC008: a gradient with respect to a constant tensor the tape never watched."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.arguments import keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.rules._tapes import TapeCall, tape_calls
from jupyterlab_tfcoach.analysis.values import PY_CONTAINER, TENSOR

CODE = "TFC008"
NAME = "unwatched-tensor-gradient"
SEVERITY = Severity.WARNING
SECTION = "tape-watch"

DOCS = """
## What it does
Flags `tape.gradient(target, x)` where `x` is bound to the result of `tf.constant(...)` or
`tf.convert_to_tensor(...)` and is not passed to `tape.watch(...)` on that tape.

## Why is this bad?
A `GradientTape` automatically watches trainable variables only. Operations on a plain tensor
are not recorded with respect to it, so the gradient comes back as `None`, and code that
follows typically fails far from the cause (or an optimizer silently skips the update).

## Example
```python
x = tf.constant(3.0)
with tf.GradientTape() as tape:
    y = x * x
dy_dx = tape.gradient(y, x)   # None
```

## Use instead
```python
x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x * x
dy_dx = tape.gradient(y, x)   # 6.0
```
(or make `x` a `tf.Variable` if it is a parameter you train).

## Course module
Module 3, *Watching tensors* (`tape-watch`).
"""


def _names(node: ast.AST | None) -> list[ast.Name]:
    if isinstance(node, ast.Name):
        return [node]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [element for element in node.elts if isinstance(element, ast.Name)]
    return []


def _is_parameter(ctx: RuleContext, name: ast.Name, tape_call: TapeCall) -> bool:
    site = tape_call.site
    resolution = ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    return resolution is not None and all(b.kind == "param" for b in resolution.bindings)


def _watched_names(ctx: RuleContext, argument: ast.AST | None, tape_call: TapeCall) -> set[str]:
    """The names ``tape.watch(argument)`` surely watches; ``"*"`` when it may watch anything.

    ``tape.watch(params)`` with ``params = [a, b]`` (or ``params = model.inputs()``)
    watches what the structure holds, so any source may be watched. A tensor, or a
    parameter (it cannot hold a constant the function creates), is just that name.
    """
    if argument is None:
        return set()
    elements = argument.elts if isinstance(argument, (ast.List, ast.Tuple)) else [argument]
    names = set()
    for element in elements:
        if not isinstance(element, ast.Name):
            return {"*"}  # ``*rest``, ``self.x``, a call: we cannot tell what it holds
        value = ctx.value(element, tape_call.site)
        if not value.is_tensor_like and (
            value.kind == PY_CONTAINER or not _is_parameter(ctx, element, tape_call)
        ):
            return {"*"}
        names.add(element.id)
    return names


def check(ctx: RuleContext) -> Iterator[Finding]:
    watched: dict[int, set[str]] = {}
    gradients = []
    for tape_call in tape_calls(ctx, frozenset({"watch", "gradient"})):
        if tape_call.binding.kind != "with":
            continue  # ``tape = tf.GradientTape()`` + ``with tape:``: block not tracked
        if tape_call.method == "watch":
            argument = positional(tape_call.call, 0) or keyword(tape_call.call, "tensor")
            names = watched.setdefault(id(tape_call.binding), set())
            names.update(_watched_names(ctx, argument, tape_call))
        else:
            gradients.append(tape_call)
    for tape_call in gradients:
        names_watched = watched.get(id(tape_call.binding), set())
        if "*" in names_watched:
            continue
        sources = positional(tape_call.call, 1) or keyword(tape_call.call, "sources")
        for source in _names(sources):
            if source.id in names_watched:
                continue
            value = ctx.value(source, tape_call.site)
            if value.kind != TENSOR or value.origin != "constant":
                continue
            yield ctx.finding(
                CODE,
                source,
                f"`{source.id}` is a constant tensor that GradientTape `{tape_call.tape_name}` "
                f"does not watch, so `{tape_call.tape_name}.gradient` returns None for it; "
                f"call `{tape_call.tape_name}.watch({source.id})` in the tape block",
            )
