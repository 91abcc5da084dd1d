"""TFC010: ``tf.Variable`` created unconditionally inside a tf.function."""

from __future__ import annotations

from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.rules._common import function_label

CODE = "TFC010"
NAME = "variable-created-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "variables-in-functions"

DOCS = """
## What it does
Flags `tf.Variable(...)` created unconditionally in the body of a `tf.function`. Creation
guarded by a condition, such as `if self.v is None:`, is not reported.

## Why is this bad?
A `tf.function` may create variables only on its first trace. A variable created on every trace
would be a new variable each time, so `tf.function` refuses it with
`ValueError: tf.function only supports singleton tf.Variables created on the first call`.
Create variables once, outside the function (or in `__init__` / `build`), and update them with
`assign`.

## Example
```python
@tf.function
def step(x):
    total = tf.Variable(0.0)
    total.assign_add(tf.reduce_sum(x))
    return total
```

## Use instead
```python
total = tf.Variable(0.0)

@tf.function
def step(x):
    total.assign_add(tf.reduce_sum(x))
    return total
```

## Course module
Module 3, *Variables in tf.function* (`variables-in-functions`).
"""


def check(ctx: RuleContext) -> Iterator[Finding]:
    for site in ctx.calls_to("tf.Variable"):
        function = ctx.tf_function_body(site.scope)
        if function is None:
            continue
        # Any enclosing ``if`` / ``while`` / ``try`` may be the once-only guard;
        # only a plain ``for`` body still runs the creation on every trace.
        if any(block.kind != "for" or block.branch != 0 for block in site.path):
            continue
        yield ctx.finding(
            CODE,
            site.node,
            f"tf.Variable created in tf.function {function_label(function)} on every trace; "
            "create it once outside the function (or guard it with `if ... is None:`)",
        )
