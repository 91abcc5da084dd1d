"""TFC005: calls and creations that make a tf.function trace again and again."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, replace

from jupyterlab_tfcoach.analysis.arguments import keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, RelatedLocation, Severity
from jupyterlab_tfcoach.analysis.model import Binding, Scope, Site
from jupyterlab_tfcoach.analysis.rules._common import number_literal
from jupyterlab_tfcoach.analysis.values import TF_FUNCTION

CODE = "TFC005"
NAME = "retrace-prone-call"
SEVERITY = Severity.WARNING
SECTION = "retracing"

DOCS = """
## What it does
Flags the patterns that make a `tf.function` retrace:

- the same `tf.function` called at several call sites with *different* Python number literals
  for the same parameter: reported once, at the first call site, with how many values and call
  sites there are; the other call sites come along as related locations;
- a `tf.function` called inside a `for` loop with a Python number taken from the loop: a loop
  over `range(...)`, over a literal list or tuple of numbers (`for lr in [0.1, 0.01]`), or over a
  name bound to such a literal (`for lr in RATES`), or the counter of `enumerate`
  (`for i, batch in enumerate(ds)`);
- a `tf.function` called inside a loop with a Python number counter that the loop steps
  (`epoch = 0` before a `while` loop, `epoch += 1` or `epoch = epoch + 1` in its body);
- a `tf.function` called inside a loop with an entry of a literal list or tuple of numbers
  (`LR_SCHEDULE = [0.1] * 5 + [0.01] * 5`) looked up with a loop variable or such a counter
  (`LR_SCHEDULE[epoch]`);
- a `tf.function` created inside a loop body (`tf.function(f)` or a decorated `def`), unless
  it wraps what the loop iterates over (`for model in models: tf.function(model)`).

The function may be called by name, as `self.step(...)` from another method of its class, or
through an instance of a class defined in the same file (`clf = Classifier(...)` then
`clf.train_step(...)`, also for methods inherited from a base class in the file). Calls on
different instances are not compared with each other: each instance traces its own method.

Booleans such as `training=True` are not reported: they have two values and are usually meant
to select a graph. Loops over strings (`for mode in ["train", "eval"]`) are left alone for the
same reason; loops over tensors (`tf.range`, a list of `tf.constant`s) do not retrace per value.

## Why is this bad?
A `tf.function` keeps one graph per *input signature*. Tensors are described by dtype and shape,
but a Python number is part of the signature by *value*: every new value traces and compiles a
new graph, which is slow and keeps growing memory (TensorFlow warns after a few retraces). A
`tf.function` created in a loop starts with an empty cache on every iteration, so it traces every
time.

## Example
```python
@tf.function
def scale(x, factor):
    return x * factor

for factor in range(10):
    scale(x, factor)        # ten traces
```

## Use instead
```python
@tf.function
def scale(x, factor):
    return x * factor

for factor in tf.range(10.0):
    scale(x, factor)        # one trace: factor is a float32 tensor, like x
# or: scale(x, tf.constant(factor, tf.float32)), or an input_signature
```

## Course module
Module 2, *Retracing* (`retracing`).
"""


@dataclass(frozen=True)
class _Callee:
    label: str
    identity: ast.AST  # the def / lambda, or the creating call when the function is unknown
    parameters: tuple[str, ...] | None  # positional parameter names, when known
    # Whose cache the calls share: a tf.function method keeps one per instance, so
    # ``a.step(x, 1)`` and ``b.step(x, 2)`` trace once each. ``None`` for plain functions.
    receiver: tuple[int, str] | None = None


def _has_signature(creator: ast.AST | None) -> bool:
    """``input_signature`` turns Python numbers into tensors: no retrace per value."""
    if not isinstance(creator, ast.Call):
        return False
    return keyword(creator, "input_signature") is not None or len(creator.args) > 1


def _parameters(node: ast.AST | None, skip_self: bool) -> tuple[str, ...] | None:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return None
    names = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    return tuple(names[1:] if skip_self else names)


def _is_instance_method(node: ast.AST) -> bool:
    """A plain method (its first parameter is the instance), not a static/class method."""
    return not any(
        isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod")
        for decorator in getattr(node, "decorator_list", ())
    )


def _method_callee(
    ctx: RuleContext, class_scope: Scope, attr: str, label: str, receiver: tuple[int, str]
) -> _Callee | None:
    """A ``@tf.function`` method ``attr`` of ``class_scope`` (or of a base in this file)."""
    binding = ctx.bindings.names.method_binding(class_scope, attr)
    if binding is None or binding.kind != "def" or not _is_instance_method(binding.node):
        return None
    value = ctx.bindings.traced.tf_function_defs().get(binding.node)
    if value is None or _has_signature(value.creator):
        return None
    return _Callee(label, binding.node, _parameters(value.node, skip_self=True), receiver)


def _callee(ctx: RuleContext, call: ast.Call, site: Site) -> _Callee | None:
    func = call.func
    if isinstance(func, ast.Name):
        value = ctx.value(func, site)
        if value.kind != TF_FUNCTION or _has_signature(value.creator):
            return None
        identity = value.node or value.creator
        if identity is None:
            return None
        return _Callee(func.id, identity, _parameters(value.node, skip_self=False))
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        owner = func.value
        label = f"{owner.id}.{func.attr}"
        function = site.scope.function
        if (
            function is not None
            and function.class_scope is not None
            and owner.id == function.self_name
        ):
            # ``self.step(...)`` inside a method: a tf.function method of the same class.
            receiver = (id(function.class_scope), owner.id)
            return _method_callee(ctx, function.class_scope, func.attr, label, receiver)
        # ``clf = Classifier(...)`` then ``clf.train_step(...)``.
        class_scope = ctx.bindings.names.instance_class(site.scope, owner, site.path)
        if class_scope is None:
            return None
        resolution = ctx.bindings.names.resolve(
            site.scope, owner.id, (owner.lineno, owner.col_offset), site.path
        )
        owner_scope = resolution.owner if resolution is not None else site.scope
        return _method_callee(ctx, class_scope, func.attr, label, (id(owner_scope), owner.id))
    return None


def _arguments(call: ast.Call, callee: _Callee) -> Iterator[tuple[str, ast.expr]]:
    """(parameter key, argument) pairs; keys are names when known, else ``#index``."""
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break
        parameters = callee.parameters
        if parameters is not None and index < len(parameters):
            yield parameters[index], argument
        else:
            yield f"#{index}", argument
    for item in call.keywords:
        if item.arg is not None:
            yield item.arg, item.value


def _numbers_literal(node: ast.AST | None) -> bool:
    """A list or tuple of Python numbers written in the source (bools excluded): a non-empty
    display (``[0.1, 0.01]``), or displays repeated and joined (``[0.1] * 5 + [0.01] * 5``)."""
    pending: list[ast.AST | None] = [node]
    while pending:  # iterative: a long ``[a] * 5 + [b] * 5 + ...`` chain nests deeply
        current = pending.pop()
        if isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add):
            pending += (current.left, current.right)
        elif isinstance(current, ast.BinOp) and isinstance(current.op, ast.Mult):
            # ``[0.1] * 5`` / ``n * [0.1]``: the side that is a sequence, not the count.
            sequence = (ast.List, ast.Tuple, ast.BinOp)
            pending.append(current.left if isinstance(current.left, sequence) else current.right)
        elif not (
            isinstance(current, (ast.List, ast.Tuple))
            and bool(current.elts)
            and all(number_literal(element) is not None for element in current.elts)
        ):
            return False
    return True


def _names_numbers(ctx: RuleContext, site: Site, name: ast.Name) -> bool:
    """Whether every binding ``name`` may have here is a literal list/tuple of numbers."""
    resolution = ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    return resolution is not None and all(
        binding.kind == "assign" and _numbers_literal(binding.value)
        for binding in resolution.bindings
    )


def _iterates_numbers(ctx: RuleContext, site: Site, loop: ast.For) -> bool:
    """Whether the loop yields Python numbers: ``range(...)`` (the builtin), a literal
    list/tuple of numbers, or a name every binding of which is such a literal."""
    iterable = loop.iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
        func = iterable.func
        return func.id == "range" and ctx.bindings.names.is_builtin(
            site.scope, "range", (func.lineno, func.col_offset), site.path
        )
    if isinstance(iterable, ast.Name):
        return _names_numbers(ctx, site, iterable)
    return _numbers_literal(iterable)


def _enumerate_counter(ctx: RuleContext, site: Site, loop: ast.For, name: str) -> bool:
    """``for name, item in enumerate(...)``: ``name`` is the builtin's Python int counter
    (whatever ``start=`` is), a new value on every iteration."""
    target, iterable = loop.target, loop.iter
    if not (
        isinstance(target, ast.Tuple)
        and target.elts
        and isinstance(target.elts[0], ast.Name)
        and target.elts[0].id == name
        and isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Name)
        and iterable.func.id == "enumerate"
    ):
        return False
    func = iterable.func
    return ctx.bindings.names.is_builtin(
        site.scope, "enumerate", (func.lineno, func.col_offset), site.path
    )


def _enclosing_for(ctx: RuleContext, site: Site, name: ast.Name) -> ast.For | None:
    """The enclosing ``for`` whose target binds ``name``, if that binding still holds here."""
    resolution = ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    if resolution is None or not resolution.flow_sensitive or len(resolution.bindings) != 1:
        return None
    binding = resolution.bindings[0]
    loop = binding.node
    if binding.kind not in ("for", "unpack") or not isinstance(loop, ast.For):
        return None
    if not any(block.owner is loop and block.is_loop_body for block in site.path):
        return None
    return loop


def _loop_source(ctx: RuleContext, site: Site, name: ast.Name) -> ast.For | None:
    """The enclosing ``for`` that binds ``name`` to Python numbers, if it still does here:
    the loop variable of a loop over numbers, or the counter of ``enumerate``."""
    loop = _enclosing_for(ctx, site, name)
    if loop is None:
        return None
    if isinstance(loop.target, ast.Name):
        return loop if _iterates_numbers(ctx, site, loop) else None
    # ``for n, m in ...``: the element type is unknown, except for enumerate's counter.
    return loop if _enumerate_counter(ctx, site, loop, name.id) else None


def _is_number_step(binding: Binding) -> bool:
    """``n += 1`` / ``n -= 0.5`` / ``n = n + 1``: a Python number stays a Python number."""
    value = binding.value
    if binding.kind == "augassign":
        node = binding.node
        return (
            isinstance(node, ast.AugAssign)
            and isinstance(node.op, (ast.Add, ast.Sub))
            and value is not None
            and number_literal(value) is not None
        )
    target = binding.target
    if binding.kind != "assign" or not isinstance(target, ast.Name):
        return False
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub))):
        return False
    left, right = value.left, value.right
    return (
        isinstance(left, ast.Name) and left.id == target.id and number_literal(right) is not None
    ) or (
        isinstance(value.op, ast.Add)
        and isinstance(right, ast.Name)
        and right.id == target.id
        and number_literal(left) is not None
    )


class _Counters:
    """Python number counters stepped inside a loop (``epoch = 0`` before a ``while``,
    ``epoch += 1`` in its body). The bindings of each name are grouped by the loops they
    are made in once, so each call costs a lookup per enclosing loop, not a rescan."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        # (scope id, name) -> {loop statement id: bindings made in that loop's body}
        self._by_loop: dict[tuple[int, str], dict[int, list[Binding]]] = {}

    def _bindings_by_loop(self, owner: Scope, name: str) -> dict[int, list[Binding]]:
        key = (id(owner), name)
        grouped = self._by_loop.get(key)
        if grouped is None:
            grouped = {}
            for binding in owner.bindings.get(name, ()):
                for block in binding.path:
                    if block.is_loop_body:
                        grouped.setdefault(id(block.owner), []).append(binding)
            self._by_loop[key] = grouped
        return grouped

    def step(self, site: Site, name: ast.Name) -> tuple[ast.AST, Binding] | None:
        """(the loop, one step in it) when ``name`` is a Python number counter that the
        innermost loop around ``site`` rebinding it only ever steps by a number."""
        ctx = self.ctx
        resolution = ctx.bindings.names.resolve(
            site.scope, name.id, (name.lineno, name.col_offset), site.path
        )
        if resolution is None or not resolution.flow_sensitive:
            return None
        grouped = self._bindings_by_loop(resolution.owner, name.id)
        for depth in range(len(site.path) - 1, -1, -1):
            block = site.path[depth]
            if not block.is_loop_body:
                continue
            in_loop = grouped.get(id(block.owner))
            if not in_loop:
                continue
            if not all(_is_number_step(binding) for binding in in_loop):
                return None
            # Its value on entering the loop: every binding reaching the loop statement
            # must be a number literal (``epoch = tf.constant(0)`` then ``+= 1`` is a tensor).
            loop = block.owner
            entering = ctx.bindings.names.resolve(
                site.scope,
                name.id,
                (loop.lineno, loop.col_offset),  # type: ignore[attr-defined]
                site.path[:depth],
            )
            if entering is None or not all(
                binding.kind == "assign" and number_literal(binding.value) is not None
                for binding in entering.bindings
            ):
                return None
            return loop, in_loop[0]
        return None


def _loop_kind(loop: ast.AST) -> str:
    return "while" if isinstance(loop, ast.While) else "for"


def _varies_per_iteration_message(
    ctx: RuleContext, counters: _Counters, site: Site, argument: ast.expr
) -> str | None:
    """Why ``argument`` is a different Python number on each iteration of a loop around
    the call (the end of the message), or None."""
    if isinstance(argument, ast.Name):
        loop = _loop_source(ctx, site, argument)
        if loop is not None:
            return (
                f"gets the Python number `{argument.id}` from the loop over "
                f"`{ctx.short(loop.iter)}`"
            )
        counter = counters.step(site, argument)
        if counter is not None:
            loop, step = counter
            return (
                f"gets the Python number `{argument.id}`, which the `{_loop_kind(loop)}` loop "
                f"steps (`{ctx.short(step.node)}`)"
            )
        return None
    if not isinstance(argument, ast.Subscript) or not isinstance(argument.slice, ast.Name):
        return None
    # ``LR_SCHEDULE[epoch]``: a list of numbers read at an index that changes per iteration.
    table, index = argument.value, argument.slice
    if isinstance(table, ast.Name):
        if not _names_numbers(ctx, site, table):
            return None
    elif not _numbers_literal(table):
        return None
    shown = ctx.short(argument)
    index_loop = _enclosing_for(ctx, site, index)
    if index_loop is not None:
        return (
            f"gets the Python number `{shown}`, looked up with `{index.id}` from the loop over "
            f"`{ctx.short(index_loop.iter)}`"
        )
    counter = counters.step(site, index)
    if counter is not None:
        loop, step = counter
        return (
            f"gets the Python number `{shown}`, looked up with `{index.id}`, which the "
            f"`{_loop_kind(loop)}` loop steps (`{ctx.short(step.node)}`)"
        )
    return None


def _in_loop(site: Site) -> bool:
    return any(block.is_loop_body for block in site.path)


def _candidate_names(ctx: RuleContext) -> list[str]:
    """Names that may be bound to a tf.function anywhere; other calls need no inference."""
    tf_function_defs = ctx.bindings.traced.tf_function_defs()
    names = {node.name for node in tf_function_defs}  # type: ignore[attr-defined]
    resolve = ctx.imports.resolve
    for binding in ctx.model.call_assignments:
        if resolve(binding.value.func) == "tf.function":  # type: ignore[union-attr]
            names.add(binding.name)
    return sorted(names)


@dataclass(frozen=True)
class _LiteralCall:
    """One call site passing a Python number literal for a parameter."""

    callee: _Callee
    key: str
    argument: ast.expr
    number: int | float


def _parameter_label(key: str) -> str:
    return f"argument {int(key[1:]) + 1}" if key.startswith("#") else f"`{key}`"


def _different_values(ctx: RuleContext, calls: list[_LiteralCall]) -> Finding | None:
    """One finding for a function called with several Python values for one parameter:
    at the first call site, with the other call sites as related locations."""
    distinct = sorted({call.number for call in calls})
    if len(distinct) < 2:
        return None
    first, *others = sorted(calls, key=lambda c: (c.argument.lineno, c.argument.col_offset))
    parameter = _parameter_label(first.key)
    shown = ", ".join(repr(n) for n in distinct[:5]) + (", ..." if len(distinct) > 5 else "")
    message = (
        f"tf.function `{first.callee.label}` is called with {len(distinct)} different Python "
        f"values for {parameter} ({shown}) at {len(calls)} call sites: one trace each"
    )
    related = []
    for other in others:
        span = ctx.range_of(other.argument)
        related.append(
            RelatedLocation(
                span.line,
                span.column,
                span.end_line,
                span.end_column,
                f"also called with {parameter} = {other.number!r}",
            )
        )
    return replace(ctx.finding(CODE, first.argument, message), related=tuple(related))


def check(ctx: RuleContext) -> Iterator[Finding]:
    literal_groups: dict[tuple[int, tuple[int, str] | None, str], list[_LiteralCall]] = {}
    counters = _Counters(ctx)
    for site in ctx.calls_named(*_candidate_names(ctx)):
        call = site.node
        assert isinstance(call, ast.Call)
        if not call.args and not call.keywords:
            continue
        callee = _callee(ctx, call, site)
        if callee is None:
            continue
        for key, argument in _arguments(call, callee):
            number = number_literal(argument)
            if number is not None:
                group_key = (id(callee.identity), callee.receiver, key)
                group = literal_groups.setdefault(group_key, [])
                group.append(_LiteralCall(callee, key, argument, number))
                continue
            reason = _varies_per_iteration_message(ctx, counters, site, argument)
            if reason is not None:
                yield ctx.finding(
                    CODE,
                    argument,
                    f"tf.function `{callee.label}` {reason}: every value traces a new graph",
                )
    for group in literal_groups.values():
        finding = _different_values(ctx, group)
        if finding is not None:
            yield finding
    yield from _created_in_loops(ctx)


def _varies_per_iteration(ctx: RuleContext, wrapped: ast.expr, site: Site) -> bool:
    """Whether ``wrapped`` reads a name the enclosing loop rebinds (``for m in models:
    tf.function(m)``): each iteration then wraps a different callable, which needs its
    own function anyway, so creating it there is not what makes it retrace."""
    loop_blocks = [block for block in site.path if block.is_loop_body]
    for node in ast.walk(wrapped):
        if not isinstance(node, ast.Name):
            continue
        resolution = ctx.bindings.names.resolve(
            site.scope, node.id, (node.lineno, node.col_offset), site.path
        )
        if resolution is None or not resolution.flow_sensitive:
            continue
        for binding in resolution.bindings:
            if any(block in loop_blocks for block in binding.path):
                return True
    return False


def _created_in_loops(ctx: RuleContext) -> Iterator[Finding]:
    message = (
        "tf.function `{}` is created inside a loop: each iteration makes a new function "
        "that traces again; create it once, before the loop"
    )
    for site in ctx.calls_to("tf.function"):
        call = site.node
        assert isinstance(call, ast.Call)
        wrapped = positional(call, 0) or keyword(call, "func")
        if wrapped is None or not _in_loop(site):
            continue  # a decorator factory call; decorated defs are handled below
        if _varies_per_iteration(ctx, wrapped, site):
            continue
        yield ctx.finding(CODE, call, message.format(ctx.short(wrapped, 30)))
    tf_function_defs = ctx.bindings.traced.tf_function_defs()
    for site in ctx.model.defs:
        value = tf_function_defs.get(site.node)
        if value is None or value.creator not in site.node.decorator_list:  # type: ignore[attr-defined]
            continue
        if _in_loop(site):
            yield ctx.finding(CODE, value.creator, message.format(site.node.name))  # type: ignore[attr-defined]
