"""TFC002: Python ``print`` inside a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.rules._common import function_label, in_eager_only_branch

CODE = "TFC002"
NAME = "print-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "side-effects"
FIXABLE = True

DOCS = """
## What it does
Flags calls to Python's built-in `print(...)` inside a function decorated with (or wrapped
by) `tf.function`.

## Why is this bad?
A `tf.function` runs its Python body only while tracing. `print` is a Python side effect:
it prints once per trace (showing symbolic tensors such as `Tensor("x:0", ...)`), then never
again when the graph runs. `tf.print` is a TensorFlow op: it becomes part of the graph and
prints the actual values on every call.

## Example
```python
@tf.function
def step(x):
    print("x is", x)
    return x * 2
```

## Use instead
```python
@tf.function
def step(x):
    tf.print("x is", x)
    return x * 2
```

## Course module
Module 1, *Python side effects happen only while tracing* (`side-effects`).
"""

# Keyword arguments of ``print`` that ``tf.print`` accepts with the same meaning.
_PORTABLE_KEYWORDS = {"sep", "end"}


def _fixable(call: ast.Call) -> bool:
    if any(k.arg not in _PORTABLE_KEYWORDS for k in call.keywords):
        return False  # file=, flush= and **kwargs have no tf.print equivalent
    # An f-string that formats values freezes their trace-time text: tf.print
    # would still print the symbolic tensor, so the fix would not mean the same.
    return not any(
        isinstance(arg, ast.JoinedStr)
        and any(isinstance(part, ast.FormattedValue) for part in arg.values)
        for arg in call.args
    )


def check(ctx: RuleContext) -> Iterator[Finding]:
    tf_print = None
    for site in ctx.calls_named("print"):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not isinstance(func, ast.Name) or func.id != "print":
            continue
        function = ctx.tf_function_body(site.scope)
        if function is None or in_eager_only_branch(ctx.imports, site.path):
            continue
        if not ctx.bindings.is_builtin(
            site.scope, "print", (func.lineno, func.col_offset), site.path
        ):
            continue
        fix = None
        if _fixable(call):
            tf_print = tf_print or ctx.tf_ref("tf.print")
            if tf_print:
                fix = Fix(f"Replace `print` with `{tf_print}`", (ctx.replace(func, tf_print),))
        yield ctx.finding(
            CODE,
            call,
            f"`print(...)` in tf.function {function_label(function)} runs only while tracing; "
            "use tf.print to print on every call",
            fix,
        )
