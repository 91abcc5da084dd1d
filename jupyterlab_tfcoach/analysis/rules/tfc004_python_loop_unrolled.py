"""TFC004: a Python ``for`` loop with a static trip count inside a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Site
from jupyterlab_tfcoach.analysis.rules._common import function_label, number_literal
from jupyterlab_tfcoach.analysis.values import PY_NUMBER

CODE = "TFC004"
NAME = "python-loop-unrolled"
SEVERITY = Severity.INFORMATION
SECTION = "python-loops"

# Up to this many iterations, unrolling is the normal, often faster, way to write a short
# fixed loop (the layers of a model, a few scales); the course says as much. Past it, the
# loop is most likely steps or time steps that belong in a graph loop.
MAX_UNROLLED_ITERATIONS = 8

DOCS = f"""
## What it does
Reports a Python `for` loop inside a `tf.function` that iterates over `range(<Python int>)` or
over a literal list or tuple, when it unrolls more than {MAX_UNROLLED_ITERATIONS} iterations
into the graph, and says how many.

A few fixed iterations ({MAX_UNROLLED_ITERATIONS} or fewer: `range(3)`, a loop over a short
list of layers) are not reported: unrolling them is fine and sometimes faster. The count must
be known statically: integer literals, names bound to them (`STEPS = 1000`) and `+ - * //` of
those. A count that depends on something else (a parameter, `len(x)`, an attribute) is not
reported: a tensor bound makes AutoGraph build a graph loop, and a small Python count is fine.

## Why is this bad?
AutoGraph turns a loop into a graph loop (`tf.while_loop`) only when it iterates over a
tensor. A loop over Python values runs while tracing, so the graph gets one copy of the body
per iteration: long loops make huge graphs that are slow to trace and to optimize, and the
trip count is frozen into the graph. That is fine for a few layers; it is usually not what you
want for training steps or time steps.

## Example
```python
@tf.function
def total(x):
    acc = tf.constant(0.0)
    for i in range(1000):
        acc += x[i]
    return acc
```

## Use instead
```python
@tf.function
def total(x):
    acc = tf.constant(0.0)
    for i in tf.range(1000):
        acc += x[i]
    return acc
```

## Course module
Module 1, *Python loops are unrolled* (`python-loops`).
"""

# Integer arithmetic a loop count may be written with (``range(EPOCHS * STEPS)``).
_INT_OPERATIONS: dict[type[ast.operator], Callable[[int, int], int | None]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b if b else None,
}


def _int_argument(ctx: RuleContext, node: ast.expr, site: Site, depth: int = 0) -> int | None:
    """The value of an int literal, a name bound to one, or ``+ - * //`` of those."""
    literal = number_literal(node)
    if isinstance(literal, int):
        return literal
    if isinstance(node, ast.Name):
        value = ctx.value(node, site)
        if value.kind == PY_NUMBER and isinstance(value.number, int):
            return value.number
    if isinstance(node, ast.BinOp) and depth < 8:
        operation = _INT_OPERATIONS.get(type(node.op))
        if operation is None:
            return None
        left = _int_argument(ctx, node.left, site, depth + 1)
        right = _int_argument(ctx, node.right, site, depth + 1)
        if left is None or right is None:
            return None
        return operation(left, right)
    return None


def _range_count(ctx: RuleContext, call: ast.Call, site: Site) -> int | None:
    if call.keywords or not 1 <= len(call.args) <= 3:
        return None
    bounds = []
    for argument in call.args:
        bound = _int_argument(ctx, argument, site)
        if bound is None:
            return None  # a bound of unknown type may be a tensor: then it is a graph loop
        bounds.append(bound)
    if len(bounds) == 3 and bounds[2] == 0:
        return None
    loop_range = range(*bounds)
    start, stop, step = loop_range.start, loop_range.stop, loop_range.step
    # Counted by hand: ``len(range(...))`` overflows past sys.maxsize (``range(10**20)``).
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


def check(ctx: RuleContext) -> Iterator[Finding]:
    tf_range: str | None = None
    for site in ctx.model.loops:
        loop = site.node
        if not isinstance(loop, ast.For):
            continue
        function = ctx.tf_function_body(site.scope)
        if function is None:
            continue
        iterable = loop.iter
        fix = None
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            func = iterable.func
            if func.id != "range" or not ctx.bindings.names.is_builtin(
                site.scope, "range", (func.lineno, func.col_offset), site.path
            ):
                continue
            count = _range_count(ctx, iterable, site)
            if count is None:
                continue
            tf_range = tf_range or ctx.tf_ref("tf.range")
            if tf_range:
                fix = Fix(
                    f"Iterate over `{tf_range}(...)` so AutoGraph builds a graph loop",
                    (ctx.replace(func, tf_range),),
                )
        elif isinstance(iterable, (ast.List, ast.Tuple)):
            if any(isinstance(element, ast.Starred) for element in iterable.elts):
                continue
            count = len(iterable.elts)
        else:
            continue
        if count <= MAX_UNROLLED_ITERATIONS:
            continue
        yield ctx.finding(
            CODE,
            iterable,
            f"Python `for` loop over `{ctx.short(iterable)}` in tf.function "
            f"{function_label(function)} unrolls {count} iterations into the graph "
            f"(more than {MAX_UNROLLED_ITERATIONS})",
            fix,
        )
