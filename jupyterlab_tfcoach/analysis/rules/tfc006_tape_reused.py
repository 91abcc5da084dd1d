"""TFC006: a second gradient computation on a non-persistent GradientTape."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis.arguments import keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Edit, Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Binding, Path, Site
from jupyterlab_tfcoach.analysis.rules._tapes import (
    helper_tape_uses,
    release_after_last_use,
    released_later,
    tape_calls,
)

CODE = "TFC006"
NAME = "tape-reused"
SEVERITY = Severity.WARNING
SECTION = "gradient-tape"

DOCS = """
## What it does
Flags a second `gradient`, `jacobian` or `batch_jacobian` call on a `tf.GradientTape` that was
created without `persistent=True`. A tape passed to a function of the same file counts with
the gradient computations that function makes on it: `grads_for(tape, loss_a, loss_b)`
is reported when `grads_for` calls `tape.gradient` twice, or once after the caller already did.
A gradient call in a loop that the tape was created outside of (`for v in variables:
tape.gradient(loss, v)`) is reported too: its second iteration is the second computation.
When that loop also changes what the tape recorded (it rebinds a name the gradient call
reads, `ws = [w - lr * g ...]`, or updates variables with `assign_sub` or
`apply_gradients`), the message says to move the tape's `with` block into the loop, and
no fix is offered: a persistent tape would keep differentiating the loss recorded before
the loop (and tensors rebound after it have no gradient).

The fix creates the tape with `persistent=True`. A persistent tape at module (or notebook)
level keeps what it recorded until it is deleted (TFC007), so there the fix also adds
`del tape` on a line of its own after the statement holding the tape's last use, in the block
that creates the tape: a tape made in each iteration of a loop is deleted in that iteration,
a tape used in a loop after that loop. It adds no `del` where the tape is released anyway: in
a function, or when the name is deleted or rebound later. The fix is not offered (the
message says what to write) when a function, class or lambda of the file names the tape (it
may run after any `del`), when the statement with the last use shares its line with another
(`a = 1; g = t.gradient(...)`), or when the tape is created in another notebook cell than the
one to edit.

## Why is this bad?
A non-persistent tape releases the operations it recorded as soon as its first gradient
computation is done. The second call raises
`RuntimeError: A non-persistent GradientTape can only be used to compute one set of gradients`.

## Example
```python
with tf.GradientTape() as tape:
    loss_a = f(w)
    loss_b = g(w)
grad_a = tape.gradient(loss_a, w)
grad_b = tape.gradient(loss_b, w)   # RuntimeError
```

## Use instead
```python
with tf.GradientTape(persistent=True) as tape:
    loss_a = f(w)
    loss_b = g(w)
grad_a = tape.gradient(loss_a, w)
grad_b = tape.gradient(loss_b, w)
del tape   # release the recorded operations
```
When the two gradients are only added up afterwards, item by item and weighted
(`[0.5 * a + b for a, b in zip(grad_a, grad_b)]`), the message says so and offers no fix:
a persistent tape would leave None where one loss does not reach a variable, and the sum
would fail on it; record the weighted total of the losses inside the tape and take one
gradient of it. When the plain sum of the two gradients is what you need, one call on a
plain tape gives it: `tape.gradient([loss_a, loss_b], w)` returns a single summed gradient,
not one per loss. For one gradient per variable, pass the variables at once:
`tape.gradient(loss, variables)`.

## Course module
Module 3, *GradientTape* (`gradient-tape`).
"""

_GRADIENT_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian"})


def _exclusive(first: Path, second: Path, tape: Path) -> bool:
    """Whether code at ``first`` and code at ``second`` (later) cannot both run on one tape.

    True when they sit in different branches of the same ``if`` / ``match``, when
    ``first`` is in a block that ends with ``return`` / ``raise`` and that does not
    contain ``second``, or when that block ends with ``continue`` / ``break`` and
    ``second`` comes later in the same loop body, whose every iteration makes a new
    tape (``tape`` is the path of the tape's creation).
    """
    common = 0
    while common < min(len(first), len(second)) and first[common] is second[common]:
        common += 1
    if common < len(first) and common < len(second):
        a, b = first[common], second[common]
        if a.owner is b.owner and a.kind in ("if", "case"):
            return True
    for index in range(common, len(first)):
        block = first[index]
        if block.exits:
            return True
        if block.leaves_iteration:
            # The loop that ``break`` / ``continue`` leaves: the innermost loop body.
            loop = next((b for b in reversed(first[:index]) if b.is_loop_body), None)
            if loop is not None and loop in second[:common] and loop in tape:
                return True
    return False


def _persistent_fix(ctx: RuleContext, constructor: ast.Call, binding: Binding) -> Fix | None:
    """``persistent=True`` in the constructor and, for a module-level tape (which TFC007
    wants released), ``del <tape>`` after its last use; None where either cannot be written."""
    flag = keyword(constructor, "persistent")
    if flag is None and constructor.args:
        flag = positional(constructor, 0)
    if flag is not None:
        edit = ctx.replace(flag, "True")
    elif not constructor.args and not constructor.keywords:
        span = ctx.range_of(constructor)
        if not ctx.source.line_text(span.end_line)[: span.end_column - 1].endswith(")"):
            return None
        column = span.end_column - 1  # just before the closing parenthesis
        edit = Edit(span.end_line, column, span.end_line, column, "persistent=True")
    else:
        last = max(
            [*constructor.args, *(k.value for k in constructor.keywords)],
            key=lambda node: (node.end_lineno, node.end_col_offset),
        )
        edit = ctx.insert_after(last, ", persistent=True")
    if released_later(ctx, binding):
        return Fix("Create the tape with `persistent=True`", (edit,))
    release = release_after_last_use(ctx, binding)
    if release is None:
        return None
    return Fix(
        f"Create the tape with `persistent=True` and `del {binding.name}` after its last use",
        (edit, release),
    )


@dataclass(frozen=True)
class _TapeUse:
    """One or more gradient computations on a tape, made at one place in the tape's scope."""

    site: Site
    node: ast.Call
    binding: Binding
    tape_name: str
    constructor: ast.AST | None
    description: str  # ``tape.gradient(...)``, or the helper call that computes
    repeats: bool  # a helper that computes twice on the tape by itself
    in_loop: bool = False  # in a loop that does not create the tape: runs again next time
    # What that loop changes of the recorded computation (``ws`` rebound): the tape
    # belongs in the loop, and persistent=True is no fix.
    loop_changes: str | None = None


def _repeats_in_loop(call: Path, tape: Path) -> bool:
    """Whether the call sits in a loop body the tape was created outside of, with nothing
    (``break``, ``return``, ``raise``, ``continue``) that may stop a second iteration from
    reaching it; ``for v in variables: tape.gradient(loss, v)`` fails on the second."""
    for index, block in enumerate(call):
        if block in tape or not block.is_loop_body:
            continue
        loop = block.owner
        assert isinstance(loop, (ast.For, ast.AsyncFor, ast.While))
        if any(isinstance(statement, ast.Break) for statement in ast.walk(loop)):
            return False  # a ``break`` somewhere in the loop may end it after one gradient
        return not any(inner.exits or inner.leaves_iteration for inner in call[index:])
    return False


# Calls that change variables in place: after one, what the tape recorded is stale.
_UPDATES = frozenset({"assign", "assign_add", "assign_sub", "apply_gradients", "minimize"})


def _loop_changes(call: Path, tape: Path, gradient: ast.Call) -> str | None:
    """What the loop around ``gradient`` (a loop the tape was made outside of) changes
    of the recorded computation: a name the call reads that its body binds again
    (``ws = [w - lr * g ...]``), or an update of variables (``v.assign_sub(...)``)."""
    read = {
        n.id for argument in gradient.args for n in ast.walk(argument) if isinstance(n, ast.Name)
    }
    for block in call:
        if block in tape or not block.is_loop_body:
            continue
        loop = block.owner
        assert isinstance(loop, (ast.For, ast.AsyncFor, ast.While))
        if isinstance(loop, (ast.For, ast.AsyncFor)) and any(
            isinstance(n, ast.Name) and n.id in read for n in ast.walk(loop.target)
        ):
            return None  # ``for v in ws: tape.gradient(loss, v)``: one recording, per item
        for statement in loop.body:
            for node in ast.walk(statement):
                targets: list[ast.AST] = []
                if isinstance(node, ast.Assign):
                    targets = list(node.targets)
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets = [node.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and name.id in read:
                            return f"`{name.id}`"
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _UPDATES
                ):
                    return f"the variables (`{node.func.attr}`)"
        return None
    return None


def _in_comprehension(site: Site) -> bool:
    """``[tape.gradient(loss, v) for v in variables]``: a loop whose body is the call (the
    tape comes from outside: a comprehension cannot create one with ``with``)."""
    return site.scope.kind == "comprehension" and isinstance(
        site.scope.node, (ast.ListComp, ast.SetComp, ast.DictComp)
    )


def _computes_twice(sites: list[Site]) -> bool:
    """Whether some call among ``sites`` (one function's body, in order) follows another
    that can run in the same call."""
    return any(
        not all(_exclusive(earlier.path, later.path, ()) for earlier in sites[:index])
        for index, later in enumerate(sites[1:], start=1)
    )


def _uses(ctx: RuleContext) -> dict[int, list[_TapeUse]]:
    by_tape: dict[int, list[_TapeUse]] = {}
    for tape_call in tape_calls(ctx, _GRADIENT_METHODS):
        if tape_call.tape.persistent is False:
            by_tape.setdefault(id(tape_call.binding), []).append(
                _TapeUse(
                    tape_call.site,
                    tape_call.call,
                    tape_call.binding,
                    tape_call.tape_name,
                    tape_call.tape.node,
                    f"`{tape_call.tape_name}.{tape_call.method}(...)`",
                    repeats=False,
                    in_loop=_in_comprehension(tape_call.site)
                    or _repeats_in_loop(tape_call.site.path, tape_call.binding.path),
                    loop_changes=_loop_changes(
                        tape_call.site.path, tape_call.binding.path, tape_call.call
                    ),
                )
            )
    for use in helper_tape_uses(ctx, _GRADIENT_METHODS):
        if use.tape.persistent is False:
            by_tape.setdefault(id(use.binding), []).append(
                _TapeUse(
                    use.site,
                    use.call,
                    use.binding,
                    use.tape_name,
                    use.tape.node,
                    f"`{use.helper}({use.tape_name}, ...)`",
                    repeats=_computes_twice(list(use.calls)),
                )
            )
    return by_tape


def _gradient_result(statement: ast.stmt, tape: str) -> tuple[str, ast.Call] | None:
    """``name = <tape>.gradient(target, sources)`` -> (name, the call)."""
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Attribute)
        and statement.value.func.attr == "gradient"
        and isinstance(statement.value.func.value, ast.Name)
        and statement.value.func.value.id == tape
        and len(statement.value.args) == 2
        and not statement.value.keywords
    ):
        return None
    return statement.targets[0].id, statement.value


def _linear(node: ast.expr, items: set[str]) -> bool:
    """A sum of the ``items`` names, each times or over a factor reading none of them."""

    def reads(part: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id in items for n in ast.walk(part))

    if isinstance(node, ast.Name):
        return node.id in items
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _linear(node.operand, items)
    if not isinstance(node, ast.BinOp):
        return False
    if isinstance(node.op, (ast.Add, ast.Sub)):
        return _linear(node.left, items) and _linear(node.right, items)
    if isinstance(node.op, ast.Mult) and not reads(node.left):
        return _linear(node.right, items)
    if isinstance(node.op, (ast.Mult, ast.Div)):
        return not reads(node.right) and _linear(node.left, items)
    return False


def _summed_gradients(use: _TapeUse, ctx: RuleContext) -> str | None:
    """The advice when ``use`` and the gradient calls just before it on the same tape take
    the same sources and their results are then only summed item by item
    (``[a * ga + b * gb for ga, gb in zip(g_a, g_b)]``): the gradient of the weighted
    total, one call. ``persistent=True`` would leave None where a loss does not reach a
    variable, and the sum would fail on it."""
    body = getattr(use.site.scope.node, "body", None)
    if type(body) is not list:
        return None
    index = next(
        (i for i, s in enumerate(body) if isinstance(s, ast.Assign) and s.value is use.node), None
    )
    if index is None:
        return None
    calls: list[tuple[str, ast.Call]] = []
    for statement in reversed(body[: index + 1]):
        found = _gradient_result(statement, use.tape_name)
        if found is None:
            break
        calls.insert(0, found)
    if len(calls) < 2 or len({ast.dump(call.args[1]) for _, call in calls}) != 1:
        return None
    results = {name for name, _ in calls}
    for statement in body[index + 1 :]:
        value = statement.value if isinstance(statement, ast.Assign) else None
        if not (isinstance(value, ast.ListComp) and len(value.generators) == 1):
            continue
        loop = value.generators[0]
        zipped = loop.iter
        if not (
            isinstance(zipped, ast.Call)
            and isinstance(zipped.func, ast.Name)
            and zipped.func.id == "zip"
            and len(zipped.args) == len(results)
            and {getattr(a, "id", None) for a in zipped.args} == results
            and isinstance(loop.target, ast.Tuple)
            and all(isinstance(e, ast.Name) for e in loop.target.elts)
            and not loop.ifs
        ):
            continue
        items = {e.id for e in loop.target.elts if isinstance(e, ast.Name)}
        if not _linear(value.elt, items):
            return None
        targets = ", ".join(f"`{ctx.short(call.args[0])}`" for _, call in calls)
        return (
            f"; the gradients of {targets} are only summed afterwards (`{ctx.short(value)}`), "
            "and a persistent tape would leave None where a loss does not reach a variable: "
            "record the weighted sum of the losses as one total inside the tape and take one "
            f"gradient of it, `{use.tape_name}.gradient(total, {ctx.short(calls[0][1].args[1])})`"
        )
    return None


def check(ctx: RuleContext) -> Iterator[Finding]:
    for uses in _uses(ctx).values():
        uses.sort(key=lambda u: (u.node.lineno, u.node.col_offset))
        for index, later in enumerate(uses):
            tape_name = later.tape_name
            if later.in_loop and later.loop_changes is not None:
                yield ctx.finding(
                    CODE,
                    later.node,
                    f"{later.description} runs on every iteration of its loop, but the "
                    f"non-persistent GradientTape `{tape_name}` recorded the forward pass "
                    f"once, before the loop, and the loop changes {later.loop_changes}: "
                    "the second iteration fails, and a persistent tape would still "
                    "differentiate the first step's loss. Move the `with` block that "
                    f"creates `{tape_name}` into the loop, before the gradient",
                    None,
                )
                continue
            if later.in_loop:
                message = (
                    f"{later.description} runs on every iteration of its loop, but the "
                    f"non-persistent GradientTape `{tape_name}` allows one gradient "
                    "computation: the second iteration fails"
                )
            elif later.repeats:
                message = (
                    f"{later.description} computes gradients twice with the non-persistent "
                    f"GradientTape `{tape_name}`; the second computation fails"
                )
            elif index and not all(
                _exclusive(earlier.site.path, later.site.path, later.binding.path)
                for earlier in uses[:index]
            ):
                message = (
                    f"{later.description} is a second gradient computation on "
                    f"the non-persistent GradientTape `{tape_name}`, which fails"
                )
            else:
                continue
            constructor = later.constructor
            fix = None
            summed = _summed_gradients(later, ctx) if index else None
            if summed is not None:
                yield ctx.finding(CODE, later.node, message + summed, None)
                continue
            if isinstance(constructor, ast.Call):
                fix = _persistent_fix(ctx, constructor, later.binding)
                if fix is None:
                    message += (
                        f"; create it with `persistent=True` and `del {tape_name}` after its "
                        "last use"
                    )
            yield ctx.finding(CODE, later.node, message, fix)
