"""TFC007: a persistent GradientTape at module / notebook level that is never deleted."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.values import TAPE

CODE = "TFC007"
NAME = "persistent-tape-not-released"
SEVERITY = Severity.HINT
SECTION = "gradient-tape"

DOCS = """
## What it does
Flags a `tf.GradientTape(persistent=True)` created at module level (or at the top level of a
notebook) whose name is never `del`eted or rebound afterwards. The finding is on the `with`
item or the assignment that creates the tape.

## Why is this bad?
A persistent tape keeps every intermediate tensor it recorded alive, so that it can compute
several gradients. Inside a function it is released when the function returns; at module or
notebook level the name keeps it, and its memory, alive for the rest of the session.

## Example
```python
with tf.GradientTape(persistent=True) as tape:
    y = x * x
    z = y * y
dz_dx = tape.gradient(z, x)
dy_dx = tape.gradient(y, x)
```

## Use instead
```python
with tf.GradientTape(persistent=True) as tape:
    y = x * x
    z = y * y
dz_dx = tape.gradient(z, x)
dy_dx = tape.gradient(y, x)
del tape   # release the recorded tensors
```

## Course module
Module 3, *GradientTape* (`gradient-tape`).
"""


def check(ctx: RuleContext) -> Iterator[Finding]:
    module = ctx.model.module
    for name, bindings in module.bindings.items():
        # Computed once per name: comparing each tape binding with every other binding
        # was quadratic for a name rebound to thousands of tapes.
        has_remote = any(other.remote for other in bindings)
        latest = max(other.pos for other in bindings)
        for binding in bindings:
            if binding.remote or binding.kind not in ("with", "assign"):
                continue
            created = binding.value
            if not (
                isinstance(created, ast.Call)
                and ctx.imports.resolve(created.func) == "tf.GradientTape"
            ):
                continue
            tape = ctx.bindings.binding_value(binding)
            if tape.kind != TAPE or tape.persistent is not True:
                continue
            # A later ``del`` or rebinding (also from a function, via ``global``) releases it.
            if has_remote or latest > binding.pos:
                continue
            node = binding.node
            if isinstance(node, ast.withitem) and node.optional_vars is not None:
                where = ctx.source.span_range(node.context_expr, node.optional_vars)
            else:
                where = ctx.range_of(node)
            yield ctx.finding(
                CODE,
                where,
                f"Persistent GradientTape `{name}` is never deleted, so it keeps all recorded "
                f"tensors alive; add `del {name}` after its last use",
            )
