"""TFC011: ``.numpy()`` inside a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.rules._common import in_eager_only_branch, traced_code

CODE = "TFC011"
NAME = "numpy-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "numpy-in-graphs"
FIXABLE = False

DOCS = """
## What it does
Flags `.numpy()` calls that run while a `tf.function` traces: in its body, in a function nested
in it that the body calls, and in a plain function the body calls by name (`helper(x)`, or
`self.helper(x)` from a tf.function method; one call deep). A nested function that is only
handed to `tf.py_function` / `tf.numpy_function` runs eagerly and is not reported, nor is code
under `if tf.executing_eagerly():`.

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
        reach = ctx.trace_reach(site.scope)
        if reach is None or in_eager_only_branch(ctx.imports, site.path):
            continue
        where = traced_code(reach, f"`{ctx.short(call)}`")
        # The helper form needs the reason spelled out: it may also run eagerly elsewhere.
        when = ": graph" if reach.helper is None else " runs while tracing, where graph"
        yield ctx.finding(
            CODE,
            call,
            f"{where}{when} tensors have no value to convert; use TensorFlow ops instead",
        )
