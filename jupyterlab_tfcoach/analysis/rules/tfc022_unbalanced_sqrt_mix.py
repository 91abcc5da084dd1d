"""TFC022: a mix of two terms weighted by the square root of ``c`` and by ``1 - c`` unrooted.

A variance-preserving mix (the forward step of a diffusion model, noise blended into a
signal) weights its two terms by ``sqrt(c)`` and ``sqrt(1 - c)``. Writing one weight with
its square root and the other without is a slip the code never reports: it runs, and the
second term's variance is ``(1 - c)**2`` instead of ``1 - c``. A plain interpolation
(``c * a + (1 - c) * b``, no square root) is another formula and is left alone.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.positions import Range
from jupyterlab_tfcoach.analysis.rules._common import number_literal, parenthesized

CODE = "TFC022"
NAME = "unbalanced-sqrt-mix"
SEVERITY = Severity.WARNING
SECTION = "creating-slicing-reducing"

DOCS = """
## What it does
Flags a sum of two terms where one is weighted by the square root of an expression `c`
(`tf.sqrt(c)`, `np.sqrt(c)`, `keras.ops.sqrt(c)`, any `sqrt`) and the other by its
complement `1 - c` without a square root, or the mirror image (`sqrt(1 - c)` and a bare
`c`): `tf.sqrt(ab) * x0 + (1.0 - ab) * noise`. The two weights of a mix that keeps the
variance are `sqrt(c)` and `sqrt(1 - c)`. A plain interpolation `c * a + (1 - c) * b`
has no square root and is not flagged.

The fix wraps the unrooted weight in the same `sqrt` the other weight uses.

## Why is this bad?
If `a` and `b` are independent with variance 1, `sqrt(c) * a + sqrt(1 - c) * b` has
variance `c + (1 - c) = 1` for every `c`. With `(1 - c)` in place of `sqrt(1 - c)` the
second term contributes `(1 - c)**2`: too little noise (for `c = 0.5`, a quarter instead
of a half), and at the end of a diffusion schedule the samples are nowhere near the unit
Gaussian the sampler starts from. Nothing raises; the model trains on the wrong inputs.

## Example
```python
def add_noise(x0, noise, ab):
    return tf.sqrt(ab) * x0 + (1.0 - ab) * noise
```

## Use instead
```python
def add_noise(x0, noise, ab):
    return tf.sqrt(ab) * x0 + tf.sqrt(1.0 - ab) * noise
```

## Course module
Module 1, *Making tensors: zeros, ranges and random numbers* (`creating-slicing-reducing`).
"""


def _flatten(node: ast.expr, operators: tuple[type[ast.operator], ...]) -> list[ast.expr]:
    """The operands of a chain of these operators, left to right (a loop: chains are long)."""
    found: list[ast.expr] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.BinOp) and isinstance(current.op, operators):
            # A quotient counts by its numerator: ``sqrt(c) * x / 2`` is weighted by sqrt(c).
            if isinstance(current.op, ast.Div):
                stack.append(current.left)
            else:
                stack.extend((current.right, current.left))
        else:
            found.append(current)
    return found


def _factors(term: ast.expr) -> list[ast.expr]:
    return _flatten(term, (ast.Mult, ast.Div))


def _terms(node: ast.expr) -> list[ast.expr]:
    return _flatten(node, (ast.Add,))


def _sqrt_argument(node: ast.expr) -> ast.expr | None:
    """``c`` for ``tf.sqrt(c)`` (any callee named ``sqrt``, one argument)."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return node.args[0] if name == "sqrt" else None


def _complemented(node: ast.expr) -> ast.expr | None:
    """``c`` for ``1 - c`` (or ``1.0 - c``)."""
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and number_literal(node.left) == 1
    ):
        return node.right
    return None


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def _is_sum(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)


def check(ctx: RuleContext) -> Iterator[Finding]:
    # Each chain of additions once, from its top: the inner additions are part of it.
    inner = {
        id(child)
        for node in ast.walk(ctx.model.tree)
        if _is_sum(node)
        for child in (node.left, node.right)  # type: ignore[attr-defined]
        if _is_sum(child)
    }
    for node in ast.walk(ctx.model.tree):
        if not _is_sum(node) or id(node) in inner:
            continue
        terms = _terms(node)  # type: ignore[arg-type]
        if not any(_sqrt_argument(f) is not None for term in terms for f in _factors(term)):
            continue  # no square root: nothing to compare (most sums)
        seen: set[int] = set()
        for first, second in itertools.permutations(terms, 2):
            found = _unbalanced(first, second)
            if found is None or id(found[1]) in seen:
                continue
            seen.add(id(found[1]))
            yield _finding(ctx, *found, _Places(ctx.model.tree))


def _unbalanced(rooted: ast.expr, other: ast.expr) -> tuple[ast.Call, ast.expr, str] | None:
    """``(sqrt call, unrooted weight, kind)`` when ``rooted`` has a ``sqrt(c)`` weight and
    ``other`` the complement without a square root."""
    rooted_factors, other_factors = _factors(rooted), _factors(other)
    if any(_sqrt_argument(factor) is not None for factor in other_factors):
        return None
    for factor in rooted_factors:
        argument = _sqrt_argument(factor)
        if argument is None or number_literal(argument) is not None:
            continue
        assert isinstance(factor, ast.Call)
        inner = _complemented(argument)
        for weight in other_factors:
            complement = _complemented(weight)
            if complement is not None and _same(complement, argument):
                # sqrt(c) with (1 - c): the complement lost its root.
                if not any(_complemented(f) is not None for f in rooted_factors):
                    return factor, weight, "complement"
            if inner is not None and _same(weight, inner):
                # sqrt(1 - c) with c: the weight itself lost its root.
                return factor, weight, "weight"
    return None


def _grouped_range(ctx: RuleContext, node: ast.expr) -> Range:
    """The node's range, with the parentheses around it when they enclose it directly."""
    span = ctx.range_of(node)
    before = ctx.source.line_text(span.line)[: span.column - 1]
    after = ctx.source.line_text(span.end_line)[span.end_column - 1 :]
    if before.rstrip().endswith("(") and after.lstrip().startswith(")"):
        column = len(before.rstrip())
        end_column = span.end_column + (len(after) - len(after.lstrip())) + 1
        return Range(span.line, column, span.end_line, end_column)
    return span


_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


class _Places:
    """Where a node sits: its function and the one binding of a name there (built only
    when there is a finding to describe)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[int, ast.AST] = {
            id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)
        }

    def function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        current = self.parents.get(id(node))
        while current is not None and not isinstance(current, _FUNCTION_NODES):
            current = self.parents.get(id(current))
        return current

    def binding(self, scope: ast.AST, name: str) -> ast.Assign | None:
        """The single ``name = ...`` of the scope (not of functions inside it), or None."""
        found = []
        stack = list(ast.iter_child_nodes(scope))
        while stack:
            node = stack.pop()
            if isinstance(node, (*_FUNCTION_NODES, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                found.append(node)
            stack.extend(ast.iter_child_nodes(node))
        return found[0] if len(found) == 1 and len(found[0].targets) == 1 else None


def _finding(
    ctx: RuleContext, root: ast.Call, weight: ast.expr, kind: str, places: _Places
) -> Finding:
    sqrt = ctx.text(root.func)
    rooted = ctx.text(root)
    unrooted = ctx.text(weight)
    replacement = f"{sqrt}({unrooted})"
    squared = f"{parenthesized(unrooted, weight)}**2"
    fix = Fix(
        f"Take the square root of `{unrooted}` too",
        (ctx.replace(_grouped_range(ctx, weight), replacement),),
    )
    what = (
        "its complement" if kind == "complement" else "the value whose complement that root takes"
    )
    function = places.function(weight)
    where = f"In `{function.name}`, one" if function is not None else "One"
    # Where the shared value comes from, when it is a name bound once in the same scope.
    shared = root.args[0] if kind == "complement" else weight
    shared = _complemented(shared) or shared
    origin = ""
    if isinstance(shared, ast.Name):
        binding = places.binding(function or places.tree, shared.id)
        if binding is not None:
            origin = f" (`{shared.id} = {ctx.short(binding.value)}`)"
    return ctx.finding(
        CODE,
        weight,
        f"{where} term is weighted by `{rooted}` and the other by `{unrooted}`, {what} "
        f"without a square root{origin}: a mix that keeps the variance weights its terms by "
        f"the square roots of `c` and `1 - c`, and this one gives the term weighted by "
        f"`{unrooted}` a variance of `{squared}` instead of `{unrooted}`. "
        f"Write `{replacement}`",
        fix=fix,
    )
