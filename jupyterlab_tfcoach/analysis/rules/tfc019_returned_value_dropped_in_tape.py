"""TFC019: a value your own function returns, unpacked in a GradientTape and never used."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity

CODE = "TFC019"
NAME = "returned-value-dropped-in-tape"
SEVERITY = Severity.WARNING
SECTION = "custom-train-step"

DOCS = """
## What it does
Flags a name unpacked from a call of a function defined in the same file or notebook
(`z, log_det = flow(x)`) inside a `with tf.GradientTape()` block, when that name is never
read anywhere in the enclosing function (or, at the top level, anywhere in the file), while
another name of the same unpacking is read inside the tape. Every `return` of the function
gives a tuple of as many items, and the item dropped is computed (not a constant), so it was
written to be used.

Names starting with `_` are never flagged: `z, _ = flow(x)` says the value is not wanted.
Calls of models, layers and library functions are not looked at.

## Why is this bad?
What the tape records is there to build the loss. A value the learner's own function
returns next to the output (a log-determinant, a regularisation term, an auxiliary loss,
a KL divergence) is usually a term of that loss: unpacked and then left out, the loss being
minimised is not the one intended. Nothing raises and the loss goes down, often faster,
because the term left out is the one that holds the model back (a flow without its
log-determinant squeezes every point to the origin).

## Example
```python
with tf.GradientTape() as tape:
    recon, kl = vae_forward(x)
    loss = tf.reduce_mean(tf.square(x - recon))
grads = tape.gradient(loss, variables)
```

## Use instead
```python
with tf.GradientTape() as tape:
    recon, kl = vae_forward(x)
    loss = tf.reduce_mean(tf.square(x - recon)) + tf.reduce_mean(kl)
grads = tape.gradient(loss, variables)
```
(or `recon, _ = vae_forward(x)` when the value is really not wanted).

## Course module
Module 7, *A custom train_step in Keras 3* (`custom-train-step`).
"""

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


def check(ctx: RuleContext) -> Iterator[Finding]:
    tree = ctx.model.tree
    returned = _tuple_functions(tree)
    if not returned:
        return
    module_reads: set[str] | None = None
    for site in ctx.model.withs:
        node = site.node
        if not isinstance(node, ast.With) or not _is_tape(ctx, node):
            continue
        function = site.scope.function
        if function is None:
            if module_reads is None:
                module_reads = _reads(tree)
            reads = module_reads
        else:
            reads = _reads(function.node)
        tape_reads = set().union(*(_reads(statement) for statement in node.body))
        for statement in _statements(node.body):
            yield from _dropped(ctx, statement, returned, reads, tape_reads)


def _is_tape(ctx: RuleContext, node: ast.With) -> bool:
    return any(
        isinstance(item.context_expr, ast.Call)
        and ctx.imports.resolve(item.context_expr.func) == "tf.GradientTape"
        for item in node.items
    )


def _tuple_functions(tree: ast.Module) -> dict[str, tuple[ast.FunctionDef, int]]:
    """Top-level functions every ``return`` of which gives a tuple display of one length."""
    found: dict[str, tuple[ast.FunctionDef, int]] = {}
    for statement in tree.body:
        if not isinstance(statement, ast.FunctionDef):
            continue
        lengths = {
            len(node.value.elts) if isinstance(node.value, ast.Tuple) else -1
            for node in _own_nodes(statement)
            if isinstance(node, ast.Return)
        }
        if len(lengths) == 1 and (length := lengths.pop()) >= 2:
            found[statement.name] = (statement, length)
        else:
            found.pop(statement.name, None)
    return found


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of functions or classes nested in it."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (*_FUNCTION_NODES, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _reads(node: ast.AST) -> set[str]:
    return {
        child.id
        for child in ast.walk(node)
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load)
    }


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a block and its nested blocks, not of nested definitions."""
    for statement in body:
        yield statement
        if isinstance(statement, (*_FUNCTION_NODES, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _dropped(
    ctx: RuleContext,
    statement: ast.stmt,
    returned: dict[str, tuple[ast.FunctionDef, int]],
    reads: set[str],
    tape_reads: set[str],
) -> Iterator[Finding]:
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], (ast.Tuple, ast.List))
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
    ):
        return
    callee = statement.value.func.id
    known = returned.get(callee)
    targets = statement.targets[0].elts
    if known is None or len(targets) != known[1]:
        return
    if not all(isinstance(target, ast.Name) for target in targets):
        return
    names = [target.id for target in targets]  # type: ignore[attr-defined]
    if len(set(names)) != len(names):
        return
    if not any(name in tape_reads for name in names):
        return
    function, _ = known
    for position, target in enumerate(targets):
        name = names[position]
        if name.startswith("_") or name in reads:
            continue
        items = _returned_items(function, position)
        if not items or any(isinstance(item, ast.Constant) for item in items):
            continue
        item_text = ctx.short(items[0], 40)
        yield ctx.finding(
            CODE,
            target,
            f"`{name}` (the value `{callee}` returns as `{item_text}`) is computed inside the "
            f"GradientTape and never used: the loss leaves it out. If it is a term of the "
            f"loss, add it to the loss; if it is really not wanted, unpack it to `_`",
        )


def _returned_items(function: ast.FunctionDef, position: int) -> list[ast.expr]:
    return [
        node.value.elts[position]
        for node in _own_nodes(function)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple)
    ]
