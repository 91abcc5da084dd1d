"""TFC011: ``.numpy()`` inside a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.rules._common import function_label, in_eager_only_branch

CODE = "TFC011"
NAME = "numpy-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "numpy-in-graphs"
FIXABLE = False

DOCS = """
## What it does
Flags `.numpy()` calls inside the body of a `tf.function` (not inside nested functions, which
may be `tf.py_function` callbacks that run eagerly).

## Why is this bad?
While tracing, tensors are symbolic: they describe values the graph will compute later and
have no value yet. `.numpy()` on them raises
`AttributeError: 'SymbolicTensor' object has no attribute 'numpy'`. NumPy code in a graph must
be expressed with TensorFlow ops (or `tf.experimental.numpy`).

## Example
```python
@tf.function
def normalize(x):
    mean = x.numpy().mean()
    return x - mean
```

## Use instead
```python
@tf.function
def normalize(x):
    mean = tf.reduce_mean(x)
    return x - mean
```

## Course module
Module 1, *NumPy in graphs* (`numpy-in-graphs`).
"""


def check(ctx: RuleContext) -> Iterator[Finding]:
    for site in ctx.calls_named("numpy"):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr != "numpy":
            continue
        if call.args or call.keywords or ctx.imports.resolve(func) is not None:
            continue  # ``tf.experimental.numpy`` and friends are modules, not tensors
        function = ctx.tf_function_body(site.scope)
        if function is None or in_eager_only_branch(ctx.imports, site.path):
            continue
        yield ctx.finding(
            CODE,
            call,
            f"`{ctx.short(call)}` in tf.function {function_label(function)}: graph tensors "
            "have no value to convert; use TensorFlow ops instead",
        )
