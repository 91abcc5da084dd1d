"""TFC008: a gradient with respect to a constant tensor the tape never watched."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.bindings import TENSOR, keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.rules._tapes import tape_calls

CODE = "TFC008"
NAME = "unwatched-tensor-gradient"
SEVERITY = Severity.WARNING
SECTION = "tape-watch"
FIXABLE = False

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
Module 1, *Watching tensors* (`tape-watch`).
"""


def _names(node: ast.AST | None) -> list[ast.Name]:
    if isinstance(node, ast.Name):
        return [node]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [element for element in node.elts if isinstance(element, ast.Name)]
    return []


def check(ctx: RuleContext) -> Iterator[Finding]:
    watched: dict[int, set[str]] = {}
    gradients = []
    for tape_call in tape_calls(ctx, frozenset({"watch", "gradient"})):
        if tape_call.binding.kind != "with":
            continue  # ``tape = tf.GradientTape()`` + ``with tape:``: block not tracked
        if tape_call.method == "watch":
            argument = positional(tape_call.call, 0) or keyword(tape_call.call, "tensor")
            names = watched.setdefault(id(tape_call.binding), set())
            names.update(name.id for name in _names(argument))
            if argument is not None and not _names(argument):
                names.add("*")  # watching something we cannot read: assume anything
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
