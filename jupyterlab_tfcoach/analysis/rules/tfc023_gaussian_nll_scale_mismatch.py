"""TFC023: a Gaussian log-likelihood whose log term reads a standard deviation as a variance.

The negative log-likelihood of a normal distribution is ``0.5 * log(2 * pi * s**2) +
(y - mu)**2 / (2 * s**2)``: both terms hold the variance. Code that writes
``log(2 * pi * s)`` while dividing by ``2 * s**2`` in the same function (or statement)
treats ``s`` as a variance in one term and a standard deviation in the other; whichever
``s`` is, one term is wrong. The squared term decides: it squares ``s``, so ``s`` is the
standard deviation and the log needs ``s**2``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.rules._common import number_literal, parenthesized

CODE = "TFC023"
NAME = "gaussian-nll-scale-mismatch"
SEVERITY = Severity.WARNING
SECTION = "nan-inf"

DOCS = """
## What it does
Flags `log(2 * pi * s)` (any `log`: `np.log`, `tf.math.log`, `keras.ops.log`, `math.log`;
`pi` from any module) where `s` is not squared, when the same function (or, outside a
function, the same statement) divides by `2 * s**2` or `2 * tf.square(s)` with the same
`s`: the log term takes `s` for a variance, the squared term for a standard deviation.
Code that uses a variance in both (`log(2 * pi * var)` with `/ (2 * var)`) is not
flagged.

The fix squares `s` inside the log: `log(2 * pi * s**2)` (the same as
`log(2 * pi) + 2 * log(s)`).

## Why is this bad?
The Gaussian negative log-likelihood is `0.5 * log(2 * pi * s**2) + (y - mu)**2 / (2 *
s**2)`. With `log(2 * pi * s)` the value is off by `0.5 * log(s)` per example. As a
reported score it cannot be compared with any other model's; as a training loss the
penalty on a large `s` is half what it should be, so the model learns a spread that is too
wide. Nothing raises.

## Example
```python
nll = np.mean(0.5 * np.log(2 * np.pi * sigma) + (y - mu) ** 2 / (2 * sigma**2))
```

## Use instead
```python
nll = np.mean(0.5 * np.log(2 * np.pi * sigma**2) + (y - mu) ** 2 / (2 * sigma**2))
```

## Course module
Module 8, *Finding and preventing NaN and inf* (`nan-inf`): the closest section (it works
through logs and variances); no section derives the Gaussian likelihood.
"""

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


def _callee(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _factors(term: ast.expr) -> list[ast.expr]:
    """The factors of a product, left to right (a loop: chains can be long)."""
    found: list[ast.expr] = []
    stack = [term]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.BinOp) and isinstance(current.op, ast.Mult):
            stack.extend((current.right, current.left))
        else:
            found.append(current)
    return found


def _is_pi(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "pi") or (
        isinstance(node, ast.Name) and node.id == "pi"
    )


def _squared(node: ast.expr) -> ast.expr | None:
    """``s`` for ``s**2`` or ``square(s)`` (any callee named ``square``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return node.left if number_literal(node.right) == 2 else None
    if _callee(node) == "square" and len(node.args) == 1:  # type: ignore[attr-defined]
        return node.args[0]  # type: ignore[attr-defined]
    return None


def _log_of_scale(node: ast.AST) -> ast.expr | None:
    """``s`` for ``log(2 * pi * s)``: the one factor besides the constants, not squared."""
    if _callee(node) != "log" or len(node.args) != 1:  # type: ignore[attr-defined]
        return None
    factors = _factors(node.args[0])  # type: ignore[attr-defined]
    if not any(_is_pi(factor) for factor in factors):
        return None
    if not any(number_literal(factor) == 2 for factor in factors):
        return None
    rest = [f for f in factors if not _is_pi(f) and number_literal(f) is None]
    if len(rest) != 1 or _squared(rest[0]) is not None:
        return None
    scale = rest[0]
    if not isinstance(scale, (ast.Name, ast.Attribute, ast.Subscript)):
        return None
    return scale


def _divided_by_squares(nodes: list[ast.AST]) -> list[tuple[ast.expr, ast.BinOp]]:
    """``(s, quotient)`` for every ``... / (2 * s**2)`` or ``... / s**2``."""
    found = []
    for node in nodes:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
            continue
        factors = _factors(node.right)
        others = [f for f in factors if number_literal(f) is None]
        if len(others) != 1 or any(number_literal(f) not in (None, 2) for f in factors):
            continue
        scale = _squared(others[0])
        if scale is not None:
            found.append((scale, node))
    return found


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    nodes: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        nodes.append(node)
        if not isinstance(node, (*_FUNCTION_NODES, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return nodes


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    """Each function, and each statement outside functions and classes."""
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTION_NODES):
            yield node
    for statement in tree.body:
        if not isinstance(statement, (*_FUNCTION_NODES, ast.ClassDef)):
            yield statement


def _label(scope: ast.AST) -> str:
    """``In `nll`, `` for the function or the one name the statement assigns, or nothing."""
    if isinstance(scope, _FUNCTION_NODES):
        return f"In `{scope.name}`, "
    if (
        isinstance(scope, ast.Assign)
        and len(scope.targets) == 1
        and isinstance(scope.targets[0], ast.Name)
    ):
        return f"In `{scope.targets[0].id}`, "
    return ""


def check(ctx: RuleContext) -> Iterator[Finding]:
    for scope in _scopes(ctx.model.tree):
        nodes = _own_nodes(scope)
        if not isinstance(scope, _FUNCTION_NODES):
            nodes.append(scope)
        logs = [(node, scale) for node in nodes if (scale := _log_of_scale(node)) is not None]
        if not logs:
            continue
        squares = _divided_by_squares(nodes)
        label = _label(scope)
        for log, scale in logs:
            match = next((d for s, d in squares if ast.dump(s) == ast.dump(scale)), None)
            if match is None:
                continue
            name = ctx.text(scale)
            squared = f"{parenthesized(name, scale)}**2"
            yield ctx.finding(
                CODE,
                log,
                f"{label}`{ctx.text(log)}` takes `{name}` for a variance, but "
                f"`{ctx.short(match)}` squares it in the same formula, so `{name}` is a "
                f"standard deviation: the Gaussian log term is `log(2 * pi * {squared})`, "
                f"and this one is off by a multiple of `log({name})` per example (no error, "
                f"just a wrong likelihood). "
                f"Square `{name}` inside the log",
                fix=Fix(f"Use `{squared}` inside the log", (ctx.replace(scale, squared),)),
            )
