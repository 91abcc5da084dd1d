"""TFC002: Python ``print`` inside a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.rules._common import (
    TRACE_WORD,
    in_eager_only_branch,
    traced_code,
)

CODE = "TFC002"
NAME = "print-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "side-effects"

DOCS = """
## What it does
Flags calls to Python's built-in `print(...)` that run while a `tf.function` traces.

That is a `print` in the body of a function decorated with (or wrapped by) `tf.function`, in
a function nested in it
that the body calls, and in a plain function the body calls by name (`helper(x)`, or
`self.helper(x)` from a tf.function method). Only one call deep: what a helper calls in turn
is not followed. A nested function that the body only hands to `tf.py_function` runs
eagerly and is not reported, nor is a `print` under `if tf.executing_eagerly():`.

Keras 3 traces code without a `tf.function` in sight, and it is checked the same way, with
or without TensorFlow imported: `call()` of a `keras.layers.Layer` subclass and `call()` /
`train_step()` / `test_step()` / `predict_step()` of a `keras.Model` subclass, when the file
compiles a model (`model.compile(...)`) without `run_eagerly=True`, since `fit` / `evaluate`
/ `predict` then run them in a tf.function. A model subclass counts when an instance of it is
compiled, or when a model of unknown class is and no instance of it runs eagerly. An instance
a function of the file returns (`model = build()`) is of the class that function names, as
bound when it is called: a notebook that redefines the class and calls `build()` again
compiles the new one. A compiled `keras.Sequential(...)` or functional `keras.Model(inputs,
outputs)` traces the `call()` of a model subclass (one may be nested in it as a layer), never
its `train_step()` / `test_step()` / `predict_step()`: its `fit` runs Keras's own. A class
none of whose instances can join a model is traced by none: every instance the file makes is
only called at module level on concrete values (literals, NumPy arrays, `tf.ones(...)`, not
`keras.Input`) or has its result thrown away, as when a layer is debugged by running it once
on sample data (`Probe()(tf.ones((2, 3)))`); listed in a model, stored on `self`, passed along
or called on symbolic inputs, it is traced. `__init__` and `build()` run eagerly and are never
reported. So is the function a `tf.data` dataset's
`map` / `filter` / `flat_map` gets: tf.data always traces it.

A `print` whose first argument is a string mentioning tracing (`print("Tracing with", x)`,
`print(f"Retraced for {x.shape}")`) is the usual way to count traces on purpose; it is
reported at information severity, as a reminder that it shows traces, not calls.

## Why is this bad?
A `tf.function` runs its Python code only while tracing. `print` is a Python side effect:
it prints once per trace (showing symbolic tensors such as `Tensor("x:0", ...)`), then never
again when the graph runs. `tf.print` is a TensorFlow op: it becomes part of the graph and
prints the actual values on every call. A helper function called from the body is traced
with it, so its `print` behaves the same way, even when the helper also runs eagerly
elsewhere.

## Example
```python
def report(x):
    print("x is", x)

@tf.function
def step(x):
    print("x is", x)
    report(x)
    return x * 2
```

With Keras 3, in a layer of a compiled model:
```python
class Scale(keras.layers.Layer):
    def call(self, x):
        print("batch mean", keras.ops.mean(x))
        return x * 2

model = keras.Sequential([keras.Input((4,)), Scale()])
model.compile(optimizer="adam", loss="mse")
```

## Use instead
```python
def report(x):
    tf.print("x is", x)

@tf.function
def step(x):
    tf.print("x is", x)
    report(x)
    return x * 2
```

```python
class Scale(keras.layers.Layer):
    def call(self, x):
        tf.print("batch mean", keras.ops.mean(x))   # or compile(..., run_eagerly=True) to debug
        return x * 2
```

## Course module
Module 2, *Python side effects happen only while tracing* (`side-effects`).
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


def _counts_traces(call: ast.Call) -> bool:
    """``print("Tracing with", x)``: the first argument is a string literal (or an
    f-string) whose text talks about tracing, so printing once per trace is the point."""
    if not call.args:
        return False
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        text = first.value
    elif isinstance(first, ast.JoinedStr):
        # The literal parts only; a formatted value splits words like a space would.
        text = " ".join(
            part.value
            for part in first.values
            if isinstance(part, ast.Constant) and isinstance(part.value, str)
        )
    else:
        return False
    return TRACE_WORD.search(text) is not None


def check(ctx: RuleContext) -> Iterator[Finding]:
    tf_print = None
    for site in ctx.calls_named("print"):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not isinstance(func, ast.Name) or func.id != "print":
            continue
        reach = ctx.trace_reach(site.scope)
        if reach is None or in_eager_only_branch(ctx.imports, site.path):
            continue
        if not ctx.bindings.names.is_builtin(
            site.scope, "print", (func.lineno, func.col_offset), site.path
        ):
            continue
        fix = None
        if _fixable(call):
            tf_print = tf_print or ctx.tf_ref("tf.print")
            if tf_print:
                fix = Fix(f"Replace `print` with `{tf_print}`", (ctx.replace(func, tf_print),))
        where = traced_code(reach, "`print(...)`")
        if _counts_traces(call):
            yield ctx.finding(
                CODE,
                call,
                f"{where} runs once per trace: fine for counting traces; "
                "use tf.print to see values on every call",
                fix,
                severity=Severity.INFORMATION,
            )
            continue
        yield ctx.finding(
            CODE,
            call,
            f"{where} runs only while tracing; use tf.print to print on every call",
            fix,
        )
