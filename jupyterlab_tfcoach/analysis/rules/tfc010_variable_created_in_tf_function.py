"""TFC010: ``tf.Variable`` created unconditionally inside a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.model import Scope
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

A list comprehension copying weights made outside the function into new variables
(`fast = [tf.Variable(w) for w in weights]`) is a per-call copy: made once outside, it would
keep the previous call's updates. The finding says to copy as plain tensors,
`fast = list(weights)`, stepped with new tensors (`w - lr * g`) rather than `assign`.

A variable made from the function's own argument (`xv = tf.Variable(x)`) cannot move out: `x`
exists only in the call. Made to take a gradient with respect to the input (a saliency map),
it is not needed at all: `tape.watch(x)` inside the `GradientTape` block makes the tape record
`x`, and `tape.gradient(score, x)` then returns the gradient. The finding says so when the
function opens a `GradientTape`.

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

```python
@tf.function
def saliency(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        score = tf.reduce_max(model(x), axis=1)
    return tape.gradient(score, x)
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
        label = function_label(function)
        call = site.node
        assert isinstance(call, ast.Call)
        wrapped = _wrapped_parameter(call, function.node)
        copied = _copied_weights(site.scope, call)
        if wrapped is None and copied is not None:
            # A fresh copy of weights made outside, each call: made once outside, it would
            # keep the previous call's updates.
            held = _assigned_name(site.scope.node, function.node) or "copy"
            yield ctx.finding(
                CODE,
                call,
                f"tf.Variable created in tf.function {label} on every trace: a copy of "
                f"`{copied}` made as new variables at each call. Made once outside, the copy "
                f"would keep the previous call's updates; a per-call copy of weights is plain "
                f"tensors, `{held} = list({copied})`, stepped with new tensors "
                f"(`{held} = [w - lr * g for w, g in zip({held}, grads)]`) rather than "
                "`assign`",
            )
            continue
        if wrapped is None:
            yield ctx.finding(
                CODE,
                call,
                f"tf.Variable created in tf.function {label} on every trace; "
                "create it once outside the function (or guard it with `if ... is None:`)",
            )
            continue
        # The variable holds the call's argument: outside the function that argument does
        # not exist, so "create it outside" cannot be done as written.
        held = _assigned_name(call, function.node)
        shown = f"`{held} = {ctx.short(call)}`" if held else f"`{ctx.short(call)}`"
        tape = _tape_name(ctx, function)
        if tape is not None:
            instead = f"`{held}`" if held else "the variable"
            advice = (
                f"to take a gradient with respect to `{wrapped}`, watch the argument "
                f"instead: `{tape}.watch({wrapped})` at the top of the `with ... as {tape}:` "
                f"block, with `{wrapped}` in place of {instead}"
            )
        else:
            advice = (
                f"to keep a value across calls, create the variable once outside and "
                f"`.assign({wrapped})` to it in the function; otherwise use `{wrapped}` itself"
            )
        yield ctx.finding(
            CODE,
            call,
            f"tf.Variable created in tf.function {label} on every trace: {shown} wraps "
            f"the argument `{wrapped}`, new at each call; {advice}",
        )


def _wrapped_parameter(call: ast.Call, function: ast.AST) -> str | None:
    """The function's parameter the variable's initial value reads (``tf.Variable(x)``,
    ``tf.Variable(tf.cast(x, tf.float32))``), or None."""
    arguments = getattr(function, "args", None)
    if not isinstance(arguments, ast.arguments):
        return None
    names = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)} - {
        "self",
        "cls",
    }
    initial = call.args[0] if call.args else None
    if initial is None:
        initial = next((k.value for k in call.keywords if k.arg == "initial_value"), None)
    if initial is None:
        return None
    read = [n.id for n in ast.walk(initial) if isinstance(n, ast.Name) and n.id in names]
    return read[0] if read else None


def _copied_weights(scope: Scope, call: ast.Call) -> str | None:
    """``E`` of ``[tf.Variable(w) for w in E]`` in a tf.function, ``E`` a name or
    attribute chain (``weights``, ``model.trainable_variables``) that the function does not
    bind: weights made outside, copied at each call."""
    comprehension = scope.node
    if not (
        scope.kind == "comprehension"
        and isinstance(comprehension, ast.ListComp)
        and comprehension.elt is call
        and len(comprehension.generators) == 1
        and len(call.args) == 1
        and not call.keywords
    ):
        return None
    generator = comprehension.generators[0]
    if not (
        isinstance(generator.target, ast.Name)
        and isinstance(call.args[0], ast.Name)
        and call.args[0].id == generator.target.id
        and not generator.ifs
    ):
        return None
    chain = generator.iter
    while isinstance(chain, ast.Attribute):
        chain = chain.value
    if not isinstance(chain, ast.Name):
        return None
    function = scope.parent
    while function is not None and function.kind == "comprehension":
        function = function.parent
    bound = {
        n.id
        for n in ast.walk(function.node if function is not None else comprehension)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    arguments = getattr(function.node, "args", None) if function is not None else None
    if isinstance(arguments, ast.arguments):
        bound |= {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    if chain.id in bound:
        return None
    return ast.unparse(generator.iter)


def _assigned_name(call: ast.AST, function: ast.AST) -> str | None:
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Assign)
            and node.value is call
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            return node.targets[0].id
    return None


def _tape_name(ctx: RuleContext, function: Scope) -> str | None:
    """``tape`` of a ``with tf.GradientTape() as tape:`` in the function's own body, the
    tape call resolved through the file's imports like every other TF name."""
    tapes = {id(site.node) for site in ctx.calls_to("tf.GradientTape") if site.scope is function}
    if not tapes:
        return None
    for node in ast.walk(function.node):
        if isinstance(node, ast.With):
            for item in node.items:
                if id(item.context_expr) in tapes and isinstance(item.optional_vars, ast.Name):
                    return item.optional_vars.id
    return None
