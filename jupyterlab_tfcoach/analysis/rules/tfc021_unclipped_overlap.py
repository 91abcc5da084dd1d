"""TFC021: an overlap area multiplied from two lengths that can be negative."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.rules._common import own_nodes

CODE = "TFC021"
NAME = "unclipped-overlap"
SEVERITY = Severity.WARNING
SECTION = "indexing-slicing"

DOCS = """
## What it does
Flags the product of two differences `(a2 - a1) * (b2 - b1)` where each first term is a
name bound, in the same function or cell, to an elementwise minimum (`tf.minimum`,
`np.minimum`, `keras.ops.minimum`) and each second term to an elementwise maximum: the
overlap of two intervals on each axis, multiplied into an intersection area, with neither
length clipped at 0. Code that compares those names (`a2 > a1`, a mask) is left alone.

The fix clips each length at 0 with the maximum function the code already uses:
`tf.maximum(a2 - a1, 0.0) * tf.maximum(b2 - b1, 0.0)`.

## Why is this bad?
For two boxes that do not overlap, the smaller end is below the larger start, so the
length is negative. When both lengths are negative their product is positive: boxes far
apart get an intersection, and an IoU that is not zero (it can even be negative or above
1 when one length is negative). Matching, non-max suppression and every IoU-based score
are then wrong, without an error.

## Example
```python
top, left = tf.maximum(a[:, 0], b[:, 0]), tf.maximum(a[:, 1], b[:, 1])
bottom, right = tf.minimum(a[:, 2], b[:, 2]), tf.minimum(a[:, 3], b[:, 3])
overlap = (bottom - top) * (right - left)
```

## Use instead
```python
top, left = tf.maximum(a[:, 0], b[:, 0]), tf.maximum(a[:, 1], b[:, 1])
bottom, right = tf.minimum(a[:, 2], b[:, 2]), tf.minimum(a[:, 3], b[:, 3])
overlap = tf.maximum(bottom - top, 0.0) * tf.maximum(right - left, 0.0)
```

## Course module
Module 1, *Reading parts of a tensor: indexing and slicing* (`indexing-slicing`).
"""

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)
_EXTREMES = {"minimum": "min", "maximum": "max"}


def check(ctx: RuleContext) -> Iterator[Finding]:
    scopes: list[ast.AST] = [ctx.model.tree]
    scopes.extend(node for node in ast.walk(ctx.model.tree) if isinstance(node, _FUNCTION_NODES))
    for scope in scopes:
        yield from _scope_findings(ctx, scope)


def _extreme(call: ast.expr) -> tuple[str, ast.expr] | None:
    """``("min", func)`` for ``tf.minimum(a, b)``: which extreme, and the callee."""
    if not (isinstance(call, ast.Call) and len(call.args) == 2):
        return None
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    kind = _EXTREMES.get(name or "")
    return (kind, func) if kind is not None else None


def _scope_findings(ctx: RuleContext, scope: ast.AST) -> Iterator[Finding]:
    nodes = list(own_nodes(scope))
    bound: dict[str, list[tuple[str, ast.expr]]] = {}
    for node in nodes:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(target, ast.Name):
            pairs = [(target, value)]
        elif (
            isinstance(target, ast.Tuple)
            and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
        ):
            pairs = list(zip(target.elts, value.elts, strict=True))
        for name, expression in pairs:
            if isinstance(name, ast.Name):
                extreme = _extreme(expression)
                bound.setdefault(name.id, []).append(
                    extreme if extreme is not None else ("other", expression)
                )
    kinds = {name: {kind for kind, _ in values} for name, values in bound.items()}
    compared = {
        operand.id
        for node in nodes
        if isinstance(node, ast.Compare)
        for operand in (node.left, *node.comparators)
        if isinstance(operand, ast.Name)
    }
    for node in nodes:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        lengths = [_length(side, kinds, compared) for side in (node.left, node.right)]
        if any(length is None for length in lengths):
            continue
        maximum = next(
            (func for values in bound.values() for kind, func in values if kind == "max"), None
        )
        if maximum is None:
            continue
        spelled = ctx.text(maximum)
        texts = [ctx.text(side) for side in (node.left, node.right)]
        clipped = " * ".join(f"{spelled}({text}, 0.0)" for text in texts)
        edits = (ctx.replace(node, clipped),)
        yield ctx.finding(
            CODE,
            node,
            f"`{texts[0]}` and `{texts[1]}` are overlap lengths (a minimum minus a maximum) "
            f"that are negative for boxes that do not overlap, and their product is positive "
            f"when both are: clip each at 0 with `{spelled}(..., 0.0)` before multiplying",
            fix=Fix("Clip each length at 0", edits),
        )


def _length(side: ast.expr, kinds: dict[str, set[str]], compared: set[str]) -> bool | None:
    """True for ``end - start`` with ``end`` only ever a minimum and ``start`` a maximum."""
    if not (isinstance(side, ast.BinOp) and isinstance(side.op, ast.Sub)):
        return None
    end, start = side.left, side.right
    if not (isinstance(end, ast.Name) and isinstance(start, ast.Name)):
        return None
    if kinds.get(end.id) != {"min"} or kinds.get(start.id) != {"max"}:
        return None
    if end.id in compared or start.id in compared:
        return None
    return True
