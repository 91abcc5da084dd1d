"""TFC012: an input_signature that fixes the batch size."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.bindings import PY_NUMBER, keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Site

CODE = "TFC012"
NAME = "fixed-batch-in-signature"
SEVERITY = Severity.HINT
SECTION = "batch-dimension"
FIXABLE = True

DOCS = """
## What it does
Flags a `tf.TensorSpec` in a `tf.function` `input_signature` whose leading dimension is a
number instead of `None`.

## Why is this bad?
The leading dimension is usually the batch. A fixed number means the function only accepts
exactly that batch size: the last, smaller batch of an epoch, or a single example at inference
time, is rejected with a signature mismatch error. `None` accepts any size with one trace.

## Example
```python
@tf.function(input_signature=[tf.TensorSpec(shape=[32, 784], dtype=tf.float32)])
def predict(x):
    return model(x)
```

## Use instead
```python
@tf.function(input_signature=[tf.TensorSpec(shape=[None, 784], dtype=tf.float32)])
def predict(x):
    return model(x)
```

## Course module
Module 1, *The leading batch dimension and None* (`batch-dimension`).
"""


def _static_int(ctx: RuleContext, node: ast.expr, site: Site) -> int | None:
    """An int literal, or a name bound to one (``BATCH = 32``)."""
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(node, ast.Name):
        bound = ctx.value(node, site)
        if bound.kind == PY_NUMBER and isinstance(bound.number, int):
            return bound.number
    return None


def check(ctx: RuleContext) -> Iterator[Finding]:
    for site in ctx.calls_to("tf.function"):
        call = site.node
        assert isinstance(call, ast.Call)
        signature = keyword(call, "input_signature") or positional(call, 1)
        if signature is None:
            continue
        for node in ast.walk(signature):
            if not isinstance(node, ast.Call) or ctx.imports.resolve(node.func) != "tf.TensorSpec":
                continue
            shape = positional(node, 0) or keyword(node, "shape")
            if not isinstance(shape, (ast.List, ast.Tuple)) or not shape.elts:
                continue
            leading = shape.elts[0]
            size = _static_int(ctx, leading, site)
            if size is None:
                continue
            shown = str(size) if isinstance(leading, ast.Constant) else f"`{leading.id}` = {size}"  # type: ignore[attr-defined]
            yield ctx.finding(
                CODE,
                leading,
                f"input_signature fixes the leading (batch) dimension to {shown}; "
                "use None so any batch size fits one trace",
                Fix("Use `None` for the batch dimension", (ctx.replace(leading, "None"),)),
            )
