"""TFC004: a Python ``for`` loop with a static trip count inside a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.bindings import PY_NUMBER
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Site
from jupyterlab_tfcoach.analysis.rules._common import function_label, number_literal

CODE = "TFC004"
NAME = "python-loop-unrolled"
SEVERITY = Severity.INFORMATION
SECTION = "python-loops"
FIXABLE = True

DOCS = """
## What it does
Reports a Python `for` loop inside a `tf.function` that iterates over `range(<Python int>)` or
over a literal list or tuple, and says how many times it is unrolled.

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


def _int_argument(ctx: RuleContext, node: ast.expr, site: Site) -> int | None:
    literal = number_literal(node)
    if isinstance(literal, int):
        return literal
    if isinstance(node, ast.Name):
        value = ctx.value(node, site)
        if value.kind == PY_NUMBER and isinstance(value.number, int):
            return value.number
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
    return len(range(*bounds))


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
            if func.id != "range" or not ctx.bindings.is_builtin(
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
        if count < 2:
            continue
        yield ctx.finding(
            CODE,
            iterable,
            f"Python `for` loop over `{ctx.short(iterable)}` in tf.function "
            f"{function_label(function)} is unrolled {count} times in the graph",
            fix,
        )
