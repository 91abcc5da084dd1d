"""TFC003: Python state mutated inside a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.model import Scope, Site, refers_to
from jupyterlab_tfcoach.analysis.rules._common import (
    guarded_by_is_none,
    in_spans,
    init_scope_spans,
    names_tracing,
    traced_code,
)
from jupyterlab_tfcoach.analysis.traced import TraceReach
from jupyterlab_tfcoach.analysis.values import PY_CONTAINER, PY_NUMBER, VARIABLE, Value

CODE = "TFC003"
NAME = "python-side-effect-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "side-effects"

DOCS = """
## What it does
Flags changes to Python state that run while a `tf.function` traces.

That is: assignments to `global` or `nonlocal` names, mutating calls (`append`, `extend`,
`update`, ...) and item assignment on lists, dicts and sets that live outside the function, or
on an item of one (`history["loss"].append(loss)`, `stats["n"] += 1`), and increments of `self`
attributes that hold Python numbers rather than variables. The same changes are flagged in a
plain function the tf.function's body calls (`helper(x)`, a function nested in it, or
`self.helper(x)` from a tf.function method; one call deep), since that function runs while the
caller traces. Containers created inside the function are its own business and are not reported.

Keras 3 methods that a compiled model traces count as tf.functions, with or without TensorFlow
imported: `call()` of a layer, `call()` / `train_step()` / `test_step()` / `predict_step()` of
a model, when the file compiles a model without `run_eagerly=True` (the rules of TFC002), and
the function given to a `tf.data` dataset's `map` / `filter` / `flat_map`.

Three once-per-trace patterns are deliberate and left alone or softened: an assignment under
`if <name> is None:` or `if not <name>:` (creating something once, on the first trace), code
under `with tf.init_scope():` (the explicit escape for one-time work while tracing), and trace
counters, whose name says so (`num_traces += 1`, `self.trace_count += 1`, `traces.append(1)`),
reported at information severity only.

## Why is this bad?
The Python body of a `tf.function` runs only while tracing. A counter incremented there counts
traces, not calls; a list appended to collects symbolic tensors from the trace and then stops
growing. The program silently computes something other than what it says.

## Example
```python
calls = 0
history = []

@tf.function
def step(x):
    global calls
    calls += 1
    history.append(x)
    return x * 2
```

With Keras 3, a model that counts its own steps:
```python
class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.steps = 0

    def train_step(self, data):
        self.steps += 1          # counts traces, not steps
        return super().train_step(data)
```

## Use instead
```python
calls = tf.Variable(0)

@tf.function
def step(x):
    calls.assign_add(1)
    return x * 2

history = [step(x) for x in batches]   # collect results outside the function
```

```python
class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.steps = keras.Variable(0, trainable=False)

    def train_step(self, data):
        self.steps.assign_add(1)  # a variable: updated on every step
        return super().train_step(data)
```

## Course module
Module 2, *Python side effects happen only while tracing* (`side-effects`).
"""

_MUTATING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "add",
        "discard",
        "setdefault",
        "popitem",
        "sort",
        "reverse",
    }
)


def _outer_container(ctx: RuleContext, receiver: ast.expr, site: Site, reach: TraceReach) -> Value:
    """The value of the container that ``receiver`` is (or is an item of: ``logs[k]``), if it
    is a Python container living outside the traced function."""
    while isinstance(receiver, ast.Subscript):
        receiver = receiver.value  # ``history["loss"]`` changes what ``history`` holds
    if isinstance(receiver, ast.Name):
        resolution = ctx.bindings.names.resolve(
            site.scope, receiver.id, (receiver.lineno, receiver.col_offset), site.path
        )
        if (
            resolution is None
            or resolution.flow_sensitive
            # Made by the traced function itself (a helper nested in it sees its locals):
            # a fresh container on every trace, not state that outlives the trace.
            or resolution.owner is reach.function
            or resolution.owner is reach.helper
        ):
            return Value()
        value = ctx.value(receiver, site)
    elif isinstance(receiver, ast.Attribute):
        if ctx.bindings.names.self_attribute_bindings(receiver, site.scope) is None:
            return Value()
        value = ctx.value(receiver, site)
    else:
        return Value()
    return value if value.kind == PY_CONTAINER else Value()


def _container_name(ctx: RuleContext, receiver: ast.expr) -> str:
    """``history`` for ``history["loss"]``: the container named in the message."""
    while isinstance(receiver, ast.Subscript):
        receiver = receiver.value
    return ctx.text(receiver)


def _creates_variable(ctx: RuleContext, node: ast.AST | None) -> bool:
    """``tf.Variable(...)``: storing a new variable is lazy creation, not lost state.

    Keeping it in a global, or in a list or dict, happens once, on the trace that
    creates it; creating it on every trace is TFC010's finding, not this rule's.
    """
    return isinstance(node, ast.Call) and ctx.imports.resolve(node.func) == "tf.Variable"


def _container_label(value: Value) -> str:
    return value.origin or "container"


def _scope_of(reach: TraceReach) -> Scope:
    """The function whose body the code is in: the helper, else the tf.function."""
    return reach.helper if reach.helper is not None else reach.function


def _trace_counter_finding(ctx: RuleContext, node: ast.AST, where: str, name: str) -> Finding:
    """A counter named for traces: running once per trace is what it is for."""
    return ctx.finding(
        CODE,
        node,
        f"{where} counts traces in `{name}`: it runs once per trace, which is what a trace "
        "counter wants; use a tf.Variable to count calls",
        severity=Severity.INFORMATION,
    )


def _assignment_findings(ctx: RuleContext, site: Site, reach: TraceReach) -> Iterator[Finding]:
    statement = site.node
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    else:
        targets = [statement.target]  # type: ignore[attr-defined]
    if _creates_variable(ctx, statement.value):  # type: ignore[attr-defined]
        return
    function = _scope_of(reach)
    where = traced_code(reach, f"`{ctx.short(statement)}`")
    for target in targets:
        if isinstance(target, ast.Name):
            if target.id in function.global_names:
                kind = "global"
            elif target.id in function.nonlocal_names:
                kind = "nonlocal"
                if _binder(ctx, target, site) is reach.function:
                    continue  # a nested helper updating the tf.function's own local
            else:
                continue
            if ctx.value(target, site).kind == VARIABLE:
                continue  # rebinding a variable is TFC001's finding
            if guarded_by_is_none(site.path, target):
                continue  # created once, on the first trace: the point of the guard
            if names_tracing(target.id):
                yield _trace_counter_finding(ctx, statement, where, target.id)
                continue
            yield ctx.finding(
                CODE,
                statement,
                f"{where} changes the Python {kind} `{target.id}` only while tracing, "
                "not on every call",
            )
        elif isinstance(target, ast.Attribute):
            increments = isinstance(statement, ast.AugAssign) or (
                isinstance(statement, ast.Assign)
                and isinstance(statement.value, (ast.BinOp, ast.UnaryOp))
                and refers_to(statement.value, target)
            )
            if (
                not increments
                or ctx.bindings.names.self_attribute_bindings(target, site.scope) is None
            ):
                continue
            if ctx.value(target, site).kind != PY_NUMBER:
                continue
            if guarded_by_is_none(site.path, target):
                continue
            if names_tracing(target.attr):
                yield _trace_counter_finding(ctx, statement, where, ctx.text(target))
                continue
            yield ctx.finding(
                CODE,
                statement,
                f"`{ctx.text(target)}` is a Python number; {where} runs only while tracing, "
                "not on every call",
            )
        elif isinstance(target, ast.Subscript):
            container = _outer_container(ctx, target.value, site, reach)
            if container.kind != PY_CONTAINER or guarded_by_is_none(site.path, target):
                continue
            yield ctx.finding(
                CODE,
                statement,
                f"{where} changes the Python {_container_label(container)} "
                f"`{_container_name(ctx, target.value)}` only while tracing",
            )


def _binder(ctx: RuleContext, target: ast.Name, site: Site) -> Scope | None:
    """The scope that owns the name a ``nonlocal`` declaration refers to."""
    resolution = ctx.bindings.names.resolve(
        site.scope, target.id, (target.lineno, target.col_offset), site.path
    )
    return resolution.owner if resolution is not None else None


def check(ctx: RuleContext) -> Iterator[Finding]:
    init_scopes = init_scope_spans(ctx)
    reaches = ctx.traced_scopes()
    for site in ctx.model.assignments:
        reach = reaches.get(site.scope)
        if reach is not None and not in_spans(site.node, init_scopes):
            yield from _assignment_findings(ctx, site, reach)
    for site in ctx.calls_named(*sorted(_MUTATING_METHODS)):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr not in _MUTATING_METHODS:
            continue
        reach = ctx.trace_reach(site.scope)
        if reach is None or in_spans(call, init_scopes):
            continue
        if any(_creates_variable(ctx, argument) for argument in call.args):
            continue
        container = _outer_container(ctx, func.value, site, reach)
        if container.kind != PY_CONTAINER:
            continue
        name = _container_name(ctx, func.value)
        where = traced_code(reach, f"`{ctx.short(call)}`")
        if names_tracing(name.rsplit(".", 1)[-1]):
            yield _trace_counter_finding(ctx, call, where, name)
            continue
        yield ctx.finding(
            CODE,
            call,
            f"{where} changes the Python "
            f"{_container_label(container)} `{_container_name(ctx, func.value)}` "
            "only while tracing",
        )
