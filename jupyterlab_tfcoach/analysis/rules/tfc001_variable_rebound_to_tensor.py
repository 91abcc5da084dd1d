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
such as `w = w - lr * g`, `self.w = self.w * 2` or `w -= lr * g`, and the same on an entry of
a dict or list built from variables (`params["w"] = params["w"] - lr * g`, `ws[0] -= lr * g`,
`for k in params: params[k] = params[k] - lr * grads[k]`).

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


def _same_entry(a: ast.AST, b: ast.Subscript) -> bool:
    """``params["w"]`` read in the value and ``params["w"]`` assigned (load vs store)."""
    return (
        isinstance(a, ast.Subscript)
        and ast.dump(a.value) == ast.dump(b.value)
        and ast.dump(a.slice) == ast.dump(b.slice)
    )


def _same_target(a: ast.AST, b: ast.expr) -> bool:
    """``w``/``w``, ``self.w``/``self.w`` or ``params["w"]``/``params["w"]``."""
    return same_reference(a, b) or (isinstance(b, ast.Subscript) and _same_entry(a, b))


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
        if isinstance(value.op, ast.Sub) and _same_target(value.left, target):
            return f"{owner}.assign_sub({ctx.text(value.right)})"
        if isinstance(value.op, ast.Add) and _same_target(value.left, target):
            return f"{owner}.assign_add({ctx.text(value.right)})"
        if isinstance(value.op, ast.Add) and _same_target(value.right, target):
            return f"{owner}.assign_add({ctx.text(value.left)})"
    return f"{owner}.assign({ctx.text(value)})"


def _reads_entry(expression: ast.expr, target: ast.Subscript) -> bool:
    return any(_same_entry(node, target) for node in ast.walk(expression))


def _rebound_target(ctx: RuleContext, site: Site) -> ast.expr | None:
    statement = site.node
    if isinstance(statement, ast.AugAssign):
        target = statement.target
    elif (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.value, (ast.BinOp, ast.UnaryOp))
    ):
        target = statement.targets[0]
        reads_itself = (
            _reads_entry(statement.value, target)
            if isinstance(target, ast.Subscript)
            else refers_to(statement.value, target)
        )
        if not reads_itself:
            return None
    else:
        return None
    if isinstance(target, ast.Subscript):
        return target if isinstance(target.value, ast.Name) else None
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


def _entries(container: ast.expr, key: ast.expr) -> list[ast.expr] | None:
    """The expressions ``container[key]`` may be, when ``container`` is a literal display.

    A constant key picks its own entry; any other key (a loop variable) may be any entry.
    Comprehensions stand for all their elements.
    """
    if isinstance(container, ast.Dict):
        if isinstance(key, ast.Constant):
            picked = [
                value
                for name, value in zip(container.keys, container.values, strict=True)
                if isinstance(name, ast.Constant) and name.value == key.value
            ]
            if picked:
                return picked[-1:]  # a repeated key keeps its last value
        return list(container.values) if container.keys and None not in container.keys else None
    if isinstance(container, (ast.List, ast.Tuple)):
        elements = container.elts
        if any(isinstance(element, ast.Starred) for element in elements):
            return None
        index = key.value if isinstance(key, ast.Constant) else None
        if (
            isinstance(index, int)
            and not isinstance(index, bool)
            and -len(elements) <= index < len(elements)
        ):
            return [elements[index]]
        return list(elements) or None
    if isinstance(container, (ast.ListComp, ast.DictComp)):
        return [container.elt if isinstance(container, ast.ListComp) else container.value]
    return None


def _holds_variables(ctx: RuleContext, target: ast.Subscript, site: Site) -> bool:
    """Whether every entry ``target`` may name was built as a tf.Variable.

    Only containers bound once by a literal display are followed (``params = {"w":
    tf.Variable(...)}``, ``ws = [tf.Variable(...) for _ in range(3)]``): a container filled
    later or passed in stays unknown, so it is never reported.
    """
    container = target.value
    assert isinstance(container, ast.Name)
    resolution = ctx.bindings.resolve(
        site.scope, container.id, (container.lineno, container.col_offset), site.path
    )
    if resolution is None:
        return False
    for binding in resolution.bindings:
        if binding.kind != "assign" or binding.value is None:
            return False
        entries = _entries(binding.value, target.slice)
        if not entries:
            return False
        # A comprehension's element is read in the enclosing scope: what makes it a
        # variable is the constructor call, not the loop names in its arguments.
        scope = binding.value_scope
        if any(
            ctx.bindings.infer(entry, scope, binding.path).kind != VARIABLE for entry in entries
        ):
            return False
    return True


def check(ctx: RuleContext) -> Iterator[Finding]:
    for site in ctx.model.assignments:
        target = _rebound_target(ctx, site)
        if target is None:
            continue
        if isinstance(target, ast.Subscript):
            if not _holds_variables(ctx, target, site):
                continue
        # The value *before* this statement: lookups at the target see earlier bindings.
        elif ctx.value(target, site).kind != VARIABLE or _is_local_alias(ctx, target, site):
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
