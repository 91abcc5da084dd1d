"""TFC012: an input_signature that fixes the batch size."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.arguments import keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Site
from jupyterlab_tfcoach.analysis.values import PY_NUMBER

CODE = "TFC012"
NAME = "fixed-batch-in-signature"
SEVERITY = Severity.HINT
SECTION = "batch-dimension"

DOCS = """
## What it does
Flags a `tf.TensorSpec` in a `tf.function` `input_signature` whose leading dimension is a
number instead of `None`, when the spec has rank 2 or more. The signature may be written in
place or bound to a name first (`SIG = [tf.TensorSpec(...)]`, then `input_signature=SIG`); the
finding is on the spec itself, where the fix goes.

A rank-1 spec (`tf.TensorSpec([2], tf.int32)`, `tf.TensorSpec((3,))`) is not reported: it is a
single vector whose length is part of its meaning (an image size, RGB means), not a batch of
scalars; only specs of rank 2 or more have a batch axis to free. A leading 1 is reported like
any other size: a batch-1 export signature cannot be told apart from a mistake statically.
Nor is a spec whose leading size is a feature size of another input with a free batch
(`TensorSpec([num_tags, num_tags])` beside `TensorSpec([None, None, num_tags])`): it describes a
parameter, such as a transition matrix, not a batch.

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


_MAX_NAME_HOPS = 4  # SIG = BASE_SIG = [...]: how many names to follow to the specs


def _specs(
    ctx: RuleContext, node: ast.AST, site: Site, hops: int = 0
) -> Iterator[tuple[ast.Call, Site]]:
    """The ``tf.TensorSpec(...)`` calls an input_signature is built from, each with the
    site (scope and path) its names are read in: written in place, inside nested lists,
    tuples and dicts, or behind names bound to them (``SIG = [...]``)."""
    if isinstance(node, ast.Call):
        if ctx.imports.resolve(node.func) == "tf.TensorSpec":
            yield node, site
            return
        for argument in (*node.args, *(item.value for item in node.keywords)):
            yield from _specs(ctx, argument, site, hops)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for element in node.elts:
            yield from _specs(ctx, element, site, hops)
    elif isinstance(node, ast.Dict):
        for value in node.values:
            yield from _specs(ctx, value, site, hops)
    elif isinstance(node, ast.Starred):
        yield from _specs(ctx, node.value, site, hops)
    elif isinstance(node, ast.Name) and hops < _MAX_NAME_HOPS:
        resolution = ctx.bindings.names.resolve(
            site.scope, node.id, (node.lineno, node.col_offset), site.path
        )
        if resolution is None:
            return
        for binding in resolution.bindings:
            if binding.kind == "assign" and binding.value is not None:
                bound_site = Site(binding.value, binding.value_scope, binding.path)
                yield from _specs(ctx, binding.value, bound_site, hops + 1)


def _feature_sizes(specs: list[tuple[ast.Call, Site]]) -> set[str]:
    """The sizes after the batch axis of the specs whose batch is free (``None``), as
    source-independent dumps (``num_tags`` in ``TensorSpec([None, None, num_tags])``)."""
    sizes: set[str] = set()
    for spec, _ in specs:
        shape = positional(spec, 0) or keyword(spec, "shape")
        if (
            isinstance(shape, (ast.List, ast.Tuple))
            and len(shape.elts) >= 2
            and isinstance(shape.elts[0], ast.Constant)
            and shape.elts[0].value is None
        ):
            sizes.update(
                ast.dump(size)
                for size in shape.elts[1:]
                if not (isinstance(size, ast.Constant) and size.value is None)
            )
    return sizes


def check(ctx: RuleContext) -> Iterator[Finding]:
    reported: set[int] = set()  # a named signature shared by several functions: once
    for site in ctx.calls_to("tf.function"):
        call = site.node
        assert isinstance(call, ast.Call)
        signature = keyword(call, "input_signature") or positional(call, 1)
        if signature is None:
            continue
        specs = list(_specs(ctx, signature, site))
        feature_sizes = _feature_sizes(specs)
        for spec, spec_site in specs:
            shape = positional(spec, 0) or keyword(spec, "shape")
            # Rank 1: one vector whose length means something (see DOCS), no batch axis.
            if not isinstance(shape, (ast.List, ast.Tuple)) or len(shape.elts) < 2:
                continue
            leading = shape.elts[0]
            if ast.dump(leading) in feature_sizes:
                # Sized like another input's features (a CRF's ``[num_tags, num_tags]``
                # beside ``[None, None, num_tags]``): a parameter, not a batch.
                continue
            size = _static_int(ctx, leading, spec_site)
            if size is None or id(leading) in reported:
                continue
            reported.add(id(leading))
            shown = str(size) if isinstance(leading, ast.Constant) else f"`{leading.id}` = {size}"  # type: ignore[attr-defined]
            yield ctx.finding(
                CODE,
                leading,
                f"input_signature fixes the leading (batch) dimension to {shown}; "
                "use None so any batch size fits one trace",
                Fix("Use `None` for the batch dimension", (ctx.replace(leading, "None"),)),
            )
