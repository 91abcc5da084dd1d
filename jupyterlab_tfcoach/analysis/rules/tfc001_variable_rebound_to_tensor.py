"""TFC001: a tf.Variable rebound to the tensor that arithmetic on it returns."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.bindings import VARIABLE
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Site, refers_to
from jupyterlab_tfcoach.analysis.rules._common import OPERATOR_TEXT, parenthesized, same_reference

CODE = "TFC001"
NAME = "variable-rebound-to-tensor"
SEVERITY = Severity.WARNING
SECTION = "rebinding-variables"
FIXABLE = True

DOCS = """
## What it does
Flags a name or attribute bound to a `tf.Variable` that is rebound by arithmetic on itself,
such as `w = w - lr * g`, `self.w = self.w * 2` or `w -= lr * g`.

A local name that only borrows a variable someone else holds (`kernel = self.kernel`, then
`kernel = kernel * mask`) is not reported: the owner still has the variable.

## Why is this bad?
Arithmetic on a variable returns a new, immutable tensor. Assigning it back to the name
replaces the variable with that tensor: the optimizer, `model.trainable_variables` and any
checkpoint still hold the old variable, so the update is lost and the weight stops being
trained. Inside a `tf.function` the rebinding is a trace-time Python operation, and augmented
assignment on a variable (`w -= ...`) raises an error in recent TensorFlow versions.

## Example
```python
w = tf.Variable(1.0)
w = w - 0.1 * grad
```

## Use instead
```python
w = tf.Variable(1.0)
w.assign_sub(0.1 * grad)   # or w.assign_add(...) / w.assign(...)
```

## Course module
Module 1, *Rebinding a variable to a tensor* (`rebinding-variables`).
"""

_ASSIGN_METHOD = {ast.Sub: "assign_sub", ast.Add: "assign_add"}


def _replacement(ctx: RuleContext, statement: ast.stmt, target: ast.expr) -> str:
    """The ``assign*`` call that updates the variable in place with the same value."""
    owner = ctx.text(target)
    if isinstance(statement, ast.AugAssign):
        operand = statement.value
        method = _ASSIGN_METHOD.get(type(statement.op))
        if method:
            return f"{owner}.{method}({ctx.text(operand)})"
        operator = OPERATOR_TEXT[type(statement.op)]
        return f"{owner}.assign({owner} {operator} {parenthesized(ctx.text(operand), operand)})"
    assert isinstance(statement, ast.Assign)
    value = statement.value
    if isinstance(value, ast.BinOp):
        if isinstance(value.op, ast.Sub) and same_reference(value.left, target):
            return f"{owner}.assign_sub({ctx.text(value.right)})"
        if isinstance(value.op, ast.Add) and same_reference(value.left, target):
            return f"{owner}.assign_add({ctx.text(value.right)})"
        if isinstance(value.op, ast.Add) and same_reference(value.right, target):
            return f"{owner}.assign_add({ctx.text(value.left)})"
    return f"{owner}.assign({ctx.text(value)})"


def _rebound_target(ctx: RuleContext, site: Site) -> ast.expr | None:
    statement = site.node
    if isinstance(statement, ast.AugAssign):
        target = statement.target
    elif (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.value, (ast.BinOp, ast.UnaryOp))
        and refers_to(statement.value, statement.targets[0])
    ):
        target = statement.targets[0]
    else:
        return None
    if isinstance(target, ast.Attribute):
        if ctx.bindings.self_attribute_bindings(target, site.scope) is None:
            return None
    elif not isinstance(target, ast.Name):
        return None
    return target


# Expressions that read an existing object rather than create one.
_ALIASES = (ast.Name, ast.Attribute, ast.Subscript)


def _is_local_alias(ctx: RuleContext, target: ast.expr, site: Site) -> bool:
    """Whether the name only borrows a variable someone else holds (``k = self.kernel``).

    ``k = k * mask`` then computes a tensor from the weight while the layer keeps the
    variable: nothing stops being trained. Only a plain ``=`` qualifies: augmented
    assignment on a variable raises, whoever holds it.
    """
    if not isinstance(target, ast.Name) or not isinstance(site.node, ast.Assign):
        return False
    resolution = ctx.bindings.resolve(
        site.scope, target.id, (target.lineno, target.col_offset), site.path
    )
    return resolution is not None and any(
        binding.kind == "assign" and isinstance(binding.value, _ALIASES)
        for binding in resolution.bindings
    )


def check(ctx: RuleContext) -> Iterator[Finding]:
    for site in ctx.model.assignments:
        target = _rebound_target(ctx, site)
        if target is None:
            continue
        # The value *before* this statement: lookups at the target see earlier bindings.
        if ctx.value(target, site).kind != VARIABLE or _is_local_alias(ctx, target, site):
            continue
        statement = site.node
        assert isinstance(statement, ast.stmt)
        replacement = _replacement(ctx, statement, target)
        name = ctx.text(target)
        yield ctx.finding(
            CODE,
            statement,
            f"`{name}` is a tf.Variable; `{ctx.short(statement)}` rebinds it to a plain "
            "tensor, so it stops being trained",
            Fix(
                f"Update the variable in place: `{replacement.split('(', 1)[0]}(...)`",
                (ctx.replace(statement, replacement),),
            ),
        )
