"""TFC014: a tensor read back to Python on every step of a training loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.model import Binding, Path, Scope, Site
from jupyterlab_tfcoach.analysis.values import TAPE, TF_FUNCTION

CODE = "TFC014"
NAME = "device-round-trip-per-step"
SEVERITY = Severity.INFORMATION
SECTION = "host-device-copies"

DOCS = """
## What it does
Reports a tensor read back into Python on every step of an eager training loop.

The reads are a `.numpy()` call, or `float(t)`, `int(t)`, `print(t)` or `print(f"{t:.4f}")`
on a value known to be a tensor (the result of a `tf.function` call, the loss passed to
`tape.gradient`, a `tf.Variable`, a `tf.constant`).

A training loop is a Python `for` or `while` loop, outside any `tf.function`, whose body runs
a training step: it calls a `tf.function`, `optimizer.apply_gradients(...)`,
`tape.gradient(...)` or `model.train_on_batch(...)`, or opens a `tf.GradientTape`. Reads in an
outer loop that only contains the step loop happen once per epoch and are not reported, nor
are reads in a loop over epochs (`for epoch in range(20):` training on the whole data set each
time), nor reads under an `if` in the loop (`if step % 100 == 0:`), which is how periodic
logging looks.

A loop over values written out in its header (`for temperature in (0.2, 0.5, 1.0):`) runs a
few fixed cases, a sweep over settings or the parts of one step, so it is not a training loop
itself: a step inside it belongs to the loop around it, if any.

A loop that decides from its values whether to go on is not reported: one with a `break` or
`return` under an `if` (early stopping, a convergence test), or a `while` loop whose test uses
a name the body sets from a call (`while loss_value > 1e-4: ... loss_value = loss.numpy()`).
It needs the value on every iteration to know when to stop, and once it waits for the device
for that, other reads in the same iteration add little. A `while step < n:` loop that only
counts steps, a `break` that leaves an inner loop, and `except StopIteration: break` decide
nothing from the values, so their loops are still reported.

## Why is this bad?
Ops on a GPU or TPU run asynchronously: Python queues the next step's work while the device
is still busy with this one. Converting a tensor to a Python or NumPy value needs the finished
value in host memory, so Python copies it from the device and waits for everything queued
before it. Done on every step, the device idles while Python waits and then while Python
catches up. Printing a tensor converts it in the same way. (On a CPU-only machine the copy
is cheap, but the loop still converts every step's value.)

## Example
```python
for x, y in train_ds:
    loss = train_step(x, y)          # a tf.function
    losses.append(loss.numpy())      # waits for the device every step
```

## Use instead
Accumulate on the device and read the result once per epoch (or every N steps):

```python
mean_loss = tf.keras.metrics.Mean()
for x, y in train_ds:
    mean_loss.update_state(train_step(x, y))
print("loss:", float(mean_loss.result()))
```

A read inside an `assert` or an `assert*(...)` call (`np.testing.assert_allclose(w.numpy(),
...)` in a test) is not reported: checking every step needs every value.

To watch values while debugging, printing every step is the point: accept the cost there, or
print inside the step with `tf.print`. There is no automatic fix: replacing `print` with
`tf.print` in the eager loop still has to wait for the value.

## Course module
Module 2, *Copies between host and device* (`host-device-copies`).
"""

# Methods that only a training step calls: applying gradients, Keras' one-batch training.
_STEP_METHODS = ("apply_gradients", "train_on_batch")
_CONVERSIONS = frozenset({"float", "int"})


def _tf_function_names(ctx: RuleContext) -> set[str]:
    """Names a ``tf.function`` may be called by: decorated (or wrapped) ``def`` names and
    names assigned ``tf.function(...)``."""
    names = {getattr(node, "name", "") for node in ctx.bindings.traced.tf_function_defs()}
    for binding in ctx.model.call_assignments:
        call = binding.value
        assert isinstance(call, ast.Call)
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr != "function":
            continue  # cheap test first: ``tf.function`` under any alias ends in ``function``
        if ctx.imports.resolve(func) == "tf.function":
            names.add(binding.name)
    names.discard("")
    return names


def _calls_tf_function(ctx: RuleContext, node: ast.AST, site: Site) -> bool:
    return isinstance(node, ast.Call) and ctx.value(node.func, site).kind == TF_FUNCTION


def _counts_epochs(loop: ast.AST) -> bool:
    """``for epoch in ...`` / ``for epoch, batch in ...``: the loop says it counts epochs."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    targets = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
    return any(isinstance(t, ast.Name) and "epoch" in t.id.lower() for t in targets)


def _over_written_values(loop: ast.AST) -> bool:
    """``for t in (0.2, 0.5, 1.0):`` / ``for part, opt in ((a, x), (b, y)):``: a loop over a
    list, tuple or set written out in its header runs a handful of fixed cases (a sweep over
    settings, or parts of one step), not one step per batch."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    values = loop.iter
    return isinstance(values, (ast.List, ast.Tuple, ast.Set)) and not any(
        isinstance(value, ast.Starred) for value in values.elts
    )


def _own_statements(
    body: list[ast.stmt], under_if: bool = False
) -> Iterator[tuple[ast.stmt, bool]]:
    """The statements a loop body runs itself, each with whether an ``if`` (or ``case``)
    guards it. Nested loops are left out (their ``break`` is theirs), and so are nested
    function and class bodies (they do not run in the loop)."""
    for statement in body:
        yield statement, under_if
        if isinstance(statement, ast.If):
            yield from _own_statements(statement.body, True)
            yield from _own_statements(statement.orelse, True)
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                yield from _own_statements(case.body, True)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _own_statements(statement.body, under_if)
        elif isinstance(statement, (ast.Try, ast.TryStar)):
            for block in (statement.body, statement.orelse, statement.finalbody):
                yield from _own_statements(block, under_if)
            for handler in statement.handlers:
                yield from _own_statements(handler.body, under_if)


def _decides_when_to_stop(loop: ast.AST) -> bool:
    """Whether the loop decides from what it computes whether to go on: a ``break`` or
    ``return`` under an ``if`` (early stopping, a convergence test), or a ``while`` test on a
    name the body sets from a call (``while loss_value > tol: ... loss_value = loss.numpy()``).
    Such a loop needs its values on every iteration. (``while step < n: ... step += 1`` counts
    steps and decides nothing from the values.)"""
    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
        return False
    tested: set[str] = set()
    if isinstance(loop, ast.While):
        tested = {node.id for node in ast.walk(loop.test) if isinstance(node, ast.Name)}
    for statement, under_if in _own_statements(loop.body):
        # Under an ``if``: a decision from the values. Directly in the body: the loop runs
        # its body once (an ``except StopIteration: break`` still runs every step).
        if isinstance(statement, (ast.Break, ast.Return)) and (under_if or statement in loop.body):
            return True
        if tested and isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            assigned = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            value = statement.value
            if assigned & tested and value is not None:
                if any(isinstance(node, ast.Call) for node in ast.walk(value)):
                    return True
    return False


class _TrainingLoops:
    """Which loops run a training step on every iteration, and which tensors they make."""

    def __init__(self, ctx: RuleContext, reading_loops: set[ast.AST]) -> None:
        """``reading_loops``: the loops around the reads in question. A step in no such loop
        cannot make any of them a training or an epoch loop, so it is not looked at."""
        self.ctx = ctx
        self.reading_loops = reading_loops
        runs_step: set[ast.AST] = set()
        self.epoch_loops: set[ast.AST] = set()  # loops around a loop that runs the step
        # Bindings of names passed to ``tape.gradient(name, ...)``: those names are tensors.
        self.gradient_targets: set[int] = set()
        for site in self._steps():
            if ctx.tf_function_body(site.scope) is not None:
                continue  # graph code: its loops are AutoGraph's, not a Python training loop
            loops = [
                block.owner
                for block in site.path
                if block.is_loop_body and not _over_written_values(block.owner)
            ]
            if site.scope.kind == "comprehension":
                # ``[step(x) for x in batches]`` is the step loop: the loops around it
                # run once per pass over the batches.
                self.epoch_loops.update(loops)
            elif loops:
                runs_step.add(loops[-1])
                self.epoch_loops.update(loops[:-1])
        # ``for epoch in range(20): loss = step(x, y)`` trains on the whole data set per
        # iteration: its reads are the once-per-epoch reads this rule recommends.
        self.epoch_loops.update(loop for loop in runs_step if _counts_epochs(loop))
        # A loop that stops on what it reads needs those values every iteration.
        self.epoch_loops.update(
            loop for loop in runs_step - self.epoch_loops if _decides_when_to_stop(loop)
        )
        self.step_loops = runs_step - self.epoch_loops

    def _near_reads(self, site: Site) -> bool:
        reading_loops = self.reading_loops
        return any(block.owner in reading_loops for block in site.path)

    def _steps(self) -> Iterator[Site]:
        ctx = self.ctx
        for name in sorted(_tf_function_names(ctx)):
            for site in ctx.calls_named(name):
                if self._near_reads(site) and _calls_tf_function(ctx, site.node, site):
                    yield site
        for site in ctx.calls_named(*_STEP_METHODS):
            if isinstance(site.node.func, ast.Attribute) and self._near_reads(site):  # type: ignore[attr-defined]
                yield site
        for site in ctx.calls_named("gradient"):
            call = site.node
            assert isinstance(call, ast.Call)
            if not isinstance(call.func, ast.Attribute):
                continue
            if ctx.value(call.func.value, site).kind != TAPE:
                continue
            # Wherever it is, the gradient tells which names hold tensors.
            target = call.args[0] if call.args else None
            if isinstance(target, ast.Name):
                for binding in self._bindings(target, site.scope, site.path):
                    self.gradient_targets.add(id(binding))
            if self._near_reads(site):
                yield site
        for site in ctx.calls_to("tf.GradientTape"):
            if self._near_reads(site):
                yield site

    def _bindings(self, name: ast.Name, scope: Scope, path: Path) -> tuple[Binding, ...]:
        resolution = self.ctx.bindings.names.resolve(
            scope, name.id, (name.lineno, name.col_offset), path
        )
        return resolution.bindings if resolution is not None else ()

    def runs_every_step(self, site: Site) -> bool:
        """Whether ``site`` runs on every iteration of a training loop, outside any graph."""
        if self.ctx.tf_function_body(site.scope) is not None:
            return False  # in a graph: TFC011 / TFC002 explain those
        return self._step_loop_of(site.path) is not None

    def _step_loop_of(self, path: Path) -> ast.AST | None:
        """The training loop whose every iteration runs code at ``path``, if any.

        Loops between the code and the training loop that run no step (``for g in grads``)
        repeat it within the step, so they do not hide it; an ``if`` (or ``except``) in
        between makes it a periodic read, and an epoch loop is reached first for code that
        runs once per epoch.
        """
        for block in reversed(path):
            if block.is_loop_body:
                if block.owner in self.epoch_loops:
                    return None
                if block.owner in self.step_loops:
                    return block.owner
            elif block.kind in ("if", "case") or (block.kind == "try" and block.branch == 1):
                return None
        return None

    def _step_result(self, binding: Binding) -> bool:
        """``loss = step(x)`` or ``loss, acc = step(x)`` with ``step`` a tf.function."""
        statement = binding.node
        if binding.kind == "assign":
            value = binding.value
        elif binding.kind == "unpack" and isinstance(statement, ast.Assign):
            value = statement.value
        else:
            return False
        if not isinstance(value, ast.Call):
            return False
        callee = self.ctx.bindings.infer(value.func, binding.value_scope, binding.path)
        return callee.kind == TF_FUNCTION

    def is_tensor(self, node: ast.expr, site: Site) -> bool:
        if _calls_tf_function(self.ctx, node, site):
            return True
        if self.ctx.value(node, site).is_tensor_like:
            return True
        if not isinstance(node, ast.Name):
            return False
        bindings = self._bindings(node, site.scope, site.path)
        return bool(bindings) and all(
            id(binding) in self.gradient_targets or self._step_result(binding)
            for binding in bindings
        )


def _in_eager_loop(ctx: RuleContext, site: Site) -> bool:
    return (
        any(block.is_loop_body for block in site.path) and ctx.tf_function_body(site.scope) is None
    )


def _reads_in_loops(ctx: RuleContext) -> list[Site]:
    """``.numpy()``, ``float(...)``, ``int(...)`` and ``print(...)`` calls in a Python loop
    outside any graph: the only places a read can be per step. Found first, by their shape
    alone, so a file without any costs no step inference."""
    reads = []
    for site in ctx.calls_named("numpy"):
        call = site.node
        assert isinstance(call, ast.Call)
        if isinstance(call.func, ast.Attribute) and not call.args and not call.keywords:
            if _in_eager_loop(ctx, site):
                reads.append(site)
    for site in ctx.calls_named(*_CONVERSIONS, "print"):
        if isinstance(site.node.func, ast.Name) and _in_eager_loop(ctx, site):  # type: ignore[attr-defined]
            reads.append(site)
    return reads


def _conversions(ctx: RuleContext, reads: list[Site], loops: _TrainingLoops) -> Iterator[ast.Call]:
    """Calls on every step of a training loop that read a tensor into Python: ``.numpy()``,
    ``float``/``int``/``print`` of a known tensor."""
    for site in reads:
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not loops.runs_every_step(site):
            continue
        if isinstance(func, ast.Attribute):
            if ctx.imports.resolve(func) is None:
                yield call  # (``tf.experimental.numpy`` resolves: a module, not a tensor)
            continue
        assert isinstance(func, ast.Name)
        if not ctx.bindings.names.is_builtin(
            site.scope, func.id, (func.lineno, func.col_offset), site.path
        ):
            continue
        if func.id == "print":
            arguments = [a for a in call.args if not isinstance(a, ast.Starred)]
            # ``print(f"loss={loss:.4f}")`` formats the value: a read like ``print(loss)``.
            arguments += [
                part.value
                for argument in call.args
                if isinstance(argument, ast.JoinedStr)
                for part in argument.values
                if isinstance(part, ast.FormattedValue)
            ]
        elif len(call.args) == 1 and not call.keywords:
            arguments = call.args
        else:
            continue
        if any(loops.is_tensor(argument, site) for argument in arguments):
            yield call


def _checked_values(ctx: RuleContext) -> set[int]:
    """Nodes inside an ``assert`` statement or an ``assert*(...)`` call (``np.testing.
    assert_allclose``, ``self.assertAllClose``): a test that checks a value after every
    step has to read it every step."""
    checks: list[ast.AST] = list(ctx.model.asserts)
    for name, sites in ctx.model.calls_by_name.items():
        if name.startswith("assert"):
            checks.extend(site.node for site in sites)
    return {id(node) for check in checks for node in ast.walk(check)}


def check(ctx: RuleContext) -> Iterator[Finding]:
    reads = _reads_in_loops(ctx)
    if not reads:
        return
    reading_loops = {block.owner for site in reads for block in site.path if block.is_loop_body}
    loops = _TrainingLoops(ctx, reading_loops)
    if not loops.step_loops:
        return
    checked = _checked_values(ctx)
    for call in _conversions(ctx, reads, loops):
        if id(call) in checked:
            continue
        yield ctx.finding(
            CODE,
            call,
            f"`{ctx.short(call)}` in a training loop copies the value to the host and waits "
            "for the device on every step; accumulate it in a tensor or a "
            "`tf.keras.metrics.Mean` and read it once per epoch",
        )
