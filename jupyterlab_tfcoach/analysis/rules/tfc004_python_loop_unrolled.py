"""TFC004: a Python ``for`` loop with a static trip count inside a tf.function."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Iterator, Sequence

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Binding, Scope, Site
from jupyterlab_tfcoach.analysis.rules._common import function_label, number_literal
from jupyterlab_tfcoach.analysis.values import PY_NUMBER

CODE = "TFC004"
NAME = "python-loop-unrolled"
SEVERITY = Severity.INFORMATION
SECTION = "python-loops"

# Up to this many iterations, unrolling is the normal, often faster, way to write a short
# fixed loop (the layers of a model, a few scales); the course says as much. Past it, the
# loop is most likely steps or time steps that belong in a graph loop.
MAX_UNROLLED_ITERATIONS = 8

DOCS = f"""
## What it does
Reports a Python `for` loop inside a `tf.function` that iterates over `range(<Python int>)` or
over a literal list or tuple, when it unrolls more than {MAX_UNROLLED_ITERATIONS} iterations
into the graph, and says how many.

A few fixed iterations ({MAX_UNROLLED_ITERATIONS} or fewer: `range(3)`, a loop over a short
list of layers) are not reported: unrolling them is fine and sometimes faster. The count must
be known statically: integer literals, names bound to them (`STEPS = 1000`) and `+ - * //` of
those. A count that depends on something else (a parameter, `len(x)`, an attribute) is not
reported: a tensor bound makes AutoGraph build a graph loop, and a small Python count is fine.

For `range(...)` a fix iterates over `tf.range(...)` instead. In a graph loop the body is
traced once and the index is an int32 tensor, so the fix is offered only for a body that
computes with tensors. It is not offered (the finding says why) when the body has a Python
side effect, which would run once instead of once per step: it appends to or changes a Python
list or other object (`outputs.append(y)`: collect into a `tf.TensorArray` instead), sets an
item or attribute (`self.count += 1`), or calls Python's `print`; nor when it uses the index
as a Python int: to index a Python value (`layers[i]`, or anything called), in arithmetic or
a comparison (`x + i` mixes int32 with float), in a string (`f"step {{i}}"`), or as an argument
of a call that is not a TensorFlow op; nor when a name first set in the loop is read after it
(a graph loop needs it set before), or the loop has an `else:` block. The index may index a
tensor (`x[i]`, the tf.function's parameters count as tensors) and be an argument of
TensorFlow ops and of a `tf.TensorArray`'s `write` / `read`.

## Why is this bad?
AutoGraph turns a loop into a graph loop (`tf.while_loop`) only when it iterates over a
tensor. A loop over Python values runs while tracing, so the graph gets one copy of the body
per iteration: long loops make huge graphs that are slow to trace and to optimize, and the
trip count is frozen into the graph. That is fine for a few layers; it is usually not what you
want for training steps or time steps.

## Example
```python
@tf.function
def total(x):
    acc = tf.constant(0.0)
    for i in range(1000):
        acc += x[i]
    return acc
```

## Use instead
```python
@tf.function
def total(x):
    acc = tf.constant(0.0)
    for i in tf.range(1000):
        acc += x[i]
    return acc
```

## Course module
Module 2, *Python loops are unrolled* (`python-loops`).
"""

# Integer arithmetic a loop count may be written with (``range(EPOCHS * STEPS)``).
_INT_OPERATIONS: dict[type[ast.operator], Callable[[int, int], int | None]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b if b else None,
}


def _int_argument(ctx: RuleContext, node: ast.expr, site: Site, depth: int = 0) -> int | None:
    """The value of an int literal, a name bound to one, or ``+ - * //`` of those."""
    literal = number_literal(node)
    if isinstance(literal, int):
        return literal
    if isinstance(node, ast.Name):
        value = ctx.value(node, site)
        if value.kind == PY_NUMBER and isinstance(value.number, int):
            return value.number
    if isinstance(node, ast.BinOp) and depth < 8:
        operation = _INT_OPERATIONS.get(type(node.op))
        if operation is None:
            return None
        left = _int_argument(ctx, node.left, site, depth + 1)
        right = _int_argument(ctx, node.right, site, depth + 1)
        if left is None or right is None:
            return None
        return operation(left, right)
    return None


def _range_count(ctx: RuleContext, call: ast.Call, site: Site) -> int | None:
    if call.keywords or not 1 <= len(call.args) <= 3:
        return None
    bounds = []
    for argument in call.args:
        bound = _int_argument(ctx, argument, site)
        if bound is None:
            return None  # a bound of unknown type may be a tensor: then it is a graph loop
        bounds.append(bound)
    if len(bounds) == 3 and bounds[2] == 0:
        return None
    loop_range = range(*bounds)
    start, stop, step = loop_range.start, loop_range.stop, loop_range.step
    # Counted by hand: ``len(range(...))`` overflows past sys.maxsize (``range(10**20)``).
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


def check(ctx: RuleContext) -> Iterator[Finding]:
    tf_range: str | None = None
    function_events: dict[int, _NameEvents] = {}
    for site in ctx.model.loops:
        loop = site.node
        if not isinstance(loop, ast.For):
            continue
        function = ctx.tf_function_body(site.scope)
        if function is None:
            continue
        iterable = loop.iter
        fix = None
        withheld: str | None = None
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            func = iterable.func
            if func.id != "range" or not ctx.bindings.names.is_builtin(
                site.scope, "range", (func.lineno, func.col_offset), site.path
            ):
                continue
            count = _range_count(ctx, iterable, site)
            if count is None:
                continue
            tf_range = tf_range or ctx.tf_ref("tf.range")
            if tf_range and count > MAX_UNROLLED_ITERATIONS:
                withheld = _graph_loop_changes_meaning(ctx, loop, site, function, function_events)
                if withheld is None:
                    fix = Fix(
                        f"Iterate over `{tf_range}(...)` so AutoGraph builds a graph loop",
                        (ctx.replace(func, tf_range),),
                    )
        elif isinstance(iterable, (ast.List, ast.Tuple)):
            if any(isinstance(element, ast.Starred) for element in iterable.elts):
                continue
            count = len(iterable.elts)
        else:
            continue
        if count <= MAX_UNROLLED_ITERATIONS:
            continue
        message = (
            f"Python `for` loop over `{ctx.short(iterable)}` in tf.function "
            f"{function_label(function)} unrolls {count} iterations into the graph "
            f"(more than {MAX_UNROLLED_ITERATIONS})"
        )
        if withheld is not None:
            message += f"; a `tf.range` loop would not do the same here: {withheld}"
        yield ctx.finding(CODE, iterable, message, fix)


# -- where a graph loop would not mean what the Python loop means --------------------------

# Methods that change a Python container in place: in a graph loop they run once, while
# tracing, not once per iteration (and a list of per-iteration tensors raises
# ``InaccessibleTensorError`` when read after the loop).
_MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "add", "update", "setdefault", "clear"}
)
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _graph_loop_changes_meaning(
    ctx: RuleContext,
    loop: ast.For,
    site: Site,
    function: Scope,
    function_events: dict[int, _NameEvents],
) -> str | None:
    """Why iterating over ``tf.range`` would change what the loop does, or None.

    Under ``tf.range`` the body is traced once into a ``tf.while_loop``: Python side
    effects in it run once, and the index is an int32 tensor, not a Python int. So the
    fix is kept for bodies that only compute with tensors: the index may only index a
    tensor (``x[i]``) or be an argument of a TensorFlow call (``tf.gather(x, i)``).
    """
    if loop.orelse:
        return "the loop has an `else:` block"
    if not isinstance(loop.target, ast.Name):
        return f"it unpacks `{ctx.short(loop.target)}`"
    index = loop.target.id
    stored = {index}
    parents: dict[int, ast.AST] = {}
    stack: list[ast.AST] = list(loop.body)
    while stack:
        node = stack.pop()
        reason = _side_effect(ctx, node)
        if reason is not None:
            return reason
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
            stack.append(child)
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                stored.add(node.id)
            elif node.id == index:
                reason = _python_use_of_index(ctx, node, parents, site, function)
                if reason is not None:
                    return reason
    # Names the function binds first in this loop (the model knows where each binding is):
    # only these may be missing after a graph loop; most loops have none.
    start = (loop.lineno, loop.col_offset)
    first_set_here = {
        name
        for name in stored
        # Bindings are listed in source order: the first is the earliest.
        if (bindings := function.bindings.get(name)) and bindings[0].pos >= start
    }
    if not first_set_here:
        return None
    # Last, as it reads the whole function (once, kept in ``function_events``).
    events = function_events.get(id(function))
    if events is None:
        assert isinstance(function.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        events = function_events[id(function)] = _NameEvents(function.node)
    return events.set_in_loop_and_read_after(loop, first_set_here)


def _side_effect(ctx: RuleContext, node: ast.AST) -> str | None:
    """A Python side effect ``node`` makes (runs once in a graph loop), or None."""
    if isinstance(node, ast.Call):
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _MUTATING_METHODS
            and ctx.imports.resolve(func) is None
        ):
            owner = ctx.short(func.value, 30)
            if func.attr in ("append", "extend", "insert"):
                return f"the body appends to the Python list `{owner}` (a `tf.TensorArray` can)"
            return f"the body changes the Python object `{owner}`"
        if isinstance(func, ast.Name) and func.id == "print":
            return "the body calls Python's `print` (`tf.print` prints at every step)"
    elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, (ast.Subscript, ast.Attribute)):
                    return f"the body sets `{ctx.short(part, 30)}`"
    elif isinstance(node, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom)):
        return "the body changes Python state outside the loop"
    return None


def _python_use_of_index(
    ctx: RuleContext, name: ast.Name, parents: dict[int, ast.AST], site: Site, function: Scope
) -> str | None:
    """How the body uses the loop index as a Python int, or None for a tensor use."""
    child: ast.AST = name
    parent = parents.get(id(child))
    # ``x[i]``, ``x[i, 0]``, ``x[:i]``: the index is (part of) a subscript.
    while isinstance(parent, (ast.Tuple, ast.Slice)):
        child, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.Subscript) and parent.slice is child:
        called = parents.get(id(parent))
        # ``layers[i](x)``: what is called is no tensor, whatever holds it.
        is_called = isinstance(called, ast.Call) and called.func is parent
        if not is_called and _is_tensor(ctx, parent.value, site, function):
            return None
        return f"the body indexes `{ctx.short(parent.value, 30)}`, a Python value, with `{name.id}`"
    if isinstance(parent, ast.Call) and child is not parent.func:
        if ctx.imports.resolve(parent.func) is not None or _tensor_array_method(
            ctx, parent.func, site
        ):
            return None  # an argument of a TensorFlow op takes a tensor
        return (
            f"the body passes `{name.id}` to `{ctx.short(parent.func, 30)}`, "
            "which is not a TensorFlow op"
        )
    if isinstance(parent, ast.keyword):
        call = parents.get(id(parent))
        if isinstance(call, ast.Call) and ctx.imports.resolve(call.func) is not None:
            return None
        return f"the body passes `{name.id}` to a call that is not a TensorFlow op"
    where = f" (in `{ctx.short(parent, 40)}`)" if isinstance(parent, ast.expr) else ""
    return f"the body uses `{name.id}` as a Python int{where}; `tf.range` gives int32 tensors"


_TENSOR_ARRAY_METHODS = frozenset({"write", "read", "gather", "scatter"})


def _tensor_array_method(ctx: RuleContext, func: ast.expr, site: Site) -> bool:
    """``outputs.write`` where ``outputs`` is only ever bound to ``tf.TensorArray(...)`` or to
    ``outputs.write(...)``: the graph loop's way to collect a value per step."""
    if not (
        isinstance(func, ast.Attribute)
        and func.attr in _TENSOR_ARRAY_METHODS
        and isinstance(func.value, ast.Name)
    ):
        return False
    name = func.value
    resolution = ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    if resolution is None or not resolution.bindings:
        return False
    for binding in resolution.bindings:
        value = binding.value
        if not isinstance(value, ast.Call):
            return False
        made = ctx.imports.resolve(value.func) == "tf.TensorArray"
        written = (
            isinstance(value.func, ast.Attribute)
            and value.func.attr == "write"
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id == name.id
        )
        if not (made or written):
            return False
    return True


def _is_tensor(ctx: RuleContext, node: ast.expr, site: Site, function: Scope) -> bool:
    """A parameter of the tf.function (a tensor in practice), or a value known to be one."""
    if isinstance(node, ast.Name) and node.id != function.self_name:
        # Cheap first (a function may hold a thousand such loops): the function binds the
        # name only as a parameter, or from itself.
        if _parameter_only(function.bindings.get(node.id, ())):
            return True
        resolution = ctx.bindings.names.resolve(
            site.scope, node.id, (node.lineno, node.col_offset), site.path
        )
        if (
            resolution is not None
            and resolution.owner is function
            and _parameter_only(resolution.bindings)
        ):
            return True
    return ctx.value(node, site).is_tensor_like


def _parameter_only(bindings: Sequence[Binding]) -> bool:
    """A parameter, maybe updated from itself (``x += x[i]`` keeps what ``x`` is)."""
    return any(binding.kind == "param" for binding in bindings) and all(
        binding.kind == "param" or binding.self_referential for binding in bindings
    )


class _NameEvents:
    """Where a function body sets and reads each name, in order: built once per function,
    asked once per loop (a function may hold many loops)."""

    def __init__(self, definition: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.parameters = {a.arg for a in ast.walk(definition.args) if isinstance(a, ast.arg)}
        # Per name: (line, stored, column), sorted; on one line the reads come first
        # (``y = y + 1`` reads ``y`` before it sets it).
        self.events: dict[str, list[tuple[int, bool, int]]] = {}
        stack: list[ast.AST] = list(definition.body)
        while stack:
            node = stack.pop()
            if isinstance(node, _SCOPE_NODES):
                self.parameters.add(getattr(node, "name", ""))
                continue  # names in nested functions are theirs
            if isinstance(node, ast.Name):
                stored = not isinstance(node.ctx, ast.Load)
                self.events.setdefault(node.id, []).append((node.lineno, stored, node.col_offset))
                continue
            stack.extend(ast.iter_child_nodes(node))
        # Per name, the line of its first setting (the loop sets it, or an earlier line).
        self.first_store: dict[str, int] = {}
        for name, events in self.events.items():
            events.sort()
            line = next((line for line, stored, _ in events if stored), None)
            if line is not None:
                self.first_store[name] = line

    def set_in_loop_and_read_after(self, loop: ast.For, stored: set[str]) -> str | None:
        """A name of ``stored`` (the names the loop sets) first set in the loop body and
        read after the loop (before it is set again): a graph loop needs every value it
        carries out to exist before it (AutoGraph raises otherwise)."""
        first, last = loop.lineno, loop.end_lineno or loop.lineno
        carried = []
        for name in stored - self.parameters:
            events = self.events.get(name, [])
            first_store = self.first_store.get(name)
            if first_store is None or first_store < first:
                continue  # set before the loop (or not a plain name: ``a.b``)
            after = bisect.bisect_left(events, (last + 1, False, -1))
            if after < len(events) and not events[after][1]:
                carried.append(name)
        if carried:
            return f"`{min(carried)}` is first set in the loop and read after it"
        return None
