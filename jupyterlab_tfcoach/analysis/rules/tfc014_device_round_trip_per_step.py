"""TFC014: a tensor read back to Python on every step of a training loop.

Two questions decide a finding, each answered from what the file itself shows; where the
answer is not known the rule stays silent.

- Does the loop train? Its body takes a tape's gradient, applies gradients (an optimizer's
  ``apply_gradients`` / ``minimize``, Keras' ``train_on_batch``), or calls a function of the
  file whose body does (``_TrainingCode``: found from those calls up through their callers,
  tf.functions included). Calling a tf.function is not enough: inference and evaluation
  steps are tf.functions too.
- Does the loop need what it reads? A value passed on to code that is not TensorFlow's (an
  environment, a tokenizer, NumPy sampling), tested by an ``if`` / ``while`` or used to
  index or iterate in Python is needed on the host every step (``_HostUses``); such a loop
  waits for the device anyway, so none of its reads is reported. A tensor the loop makes
  and passes on without ``.numpy()`` (``env.step(action)``) is such a need too: the code
  it goes to converts it.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.model import Binding, Path, Scope, Site
from jupyterlab_tfcoach.analysis.values import FUNCTION, KERAS_LOSS, TAPE, TF_FUNCTION

CODE = "TFC014"
NAME = "device-round-trip-per-step"
SEVERITY = Severity.INFORMATION
SECTION = "host-device-copies"

DOCS = """
## What it does
Reports a tensor read back into Python on every step of an eager training loop, when
nothing in the loop needs that value in Python.

The reads are a `.numpy()` call, or `float(t)`, `int(t)`, `print(t)` or `print(f"{t:.4f}")`
on a value known to be a tensor (the result of a `tf.function` call, the loss passed to
`tape.gradient`, a `tf.Variable`, a `tf.constant`).

A training loop is a Python `for` or `while` loop, outside any `tf.function`, whose body
trains: it calls `tape.gradient(...)`, `optimizer.apply_gradients(...)`,
`optimizer.minimize(...)` or `model.train_on_batch(...)`, or it calls a function defined in
the same file or notebook (a `tf.function`, a plain function, a method of a class defined
there) whose body does, directly or through the functions it calls. A loop that calls a
`tf.function` that does not train (an inference or evaluation step, such as
`preds.append(predict_fn(x).numpy())`) is not a training loop.

Reads in an outer loop that only contains the step loop happen once per epoch and are not
reported, nor are reads in a loop over epochs (`for epoch in range(20):` training on the
whole data set each time), nor reads under an `if` in the loop (`if step % 100 == 0:`),
which is how periodic logging looks.

A loop over values written out in its header (`for temperature in (0.2, 0.5, 1.0):`) runs a
few fixed cases, a sweep over settings or the parts of one step, so it is not a training loop
itself: a step inside it belongs to the loop around it, if any.

A loop that needs the values it reads on every step is not reported, none of its reads:

- a value read (or a name it is assigned to) passed to a call that is not TensorFlow's:
  an environment's `env.step(action)`, `tokenizer.decode(ids)`, `np.random.choice(n,
  p=probs.numpy()[0])`, any call other than a TensorFlow or Keras name, a Keras object or a
  `tf.function`;
- a value tested by an `if` or a `while`, or used to index or to iterate in Python;
- a tensor the loop makes (a `tf.function`'s result, a TensorFlow op's) used in those ways
  without `.numpy()`: `env.step(action)` with `action = tf.argmax(q_values(state))[0]`,
  `np.random.choice(n, p=probs[0])`, `if norm > 100.0:`, `class_names[label_id]`. The
  Python code converts it itself, so the loop waits for the device just the same. Passed
  to TensorFlow or Keras (the tape, `apply_gradients(zip(grads, ...))`, a metric), to a
  function called by a plain name, kept in a list or iterated row by row, a tensor stays
  on the device: no need;
- a loop that decides from its values whether to go on: one with a `break` or `return`
  under an `if` (early stopping, a convergence test), or a `while` loop whose test uses a
  name the body sets from a call (`while loss_value > 1e-4: ... loss_value =
  loss.numpy()`).

- a loop over learning rates that gives each one to the optimizer (`for lr in rates:
  opt.learning_rate.assign(lr)`, `keras.backend.set_value(opt.learning_rate, lr)`,
  `opt.learning_rate = lr`): a learning-rate range test, whose every step measures one rate,
  so each step's loss is its result. A loop that computes the rate from a step count (a
  warm-up) trains, and is reported.

Such a loop waits for the device on every iteration anyway, and once it does, other reads
in the same iteration add little.

A loop whose step is given a batch the loop makes with NumPy on every iteration is not
reported either: a slice or an item of a NumPy array (`x_train[i:i + 32]`), an array indexed
with a NumPy index (`rows[order[i:i + 32]]` with `order = rng.permutation(n)`), a NumPy draw,
or the learner's own function given one of these (`corrupt(batch)`), passed to the training
call or to the code its tape records (`model(xb)`). Python builds, converts and sends every
batch itself, so the loop runs at the host's pace and the read is not what holds the device
back; the input pipeline is the place to start (Module 5, *tf.data* (`tf-data`)),
and a loop over a dataset or slices of a tensor is reported again.

Keeping a value for later is no such need: appending it to a list, adding it to a total,
printing it, or NumPy arithmetic on it (`np.mean`) are reported. A `while step < n:` loop
that only counts steps, a `break` that leaves an inner loop, `except StopIteration: break`,
and a use under an `if` (it does not run every step) decide nothing from the values, so
their loops are still reported.

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
    loss = train_step(x, y)          # a tf.function that applies gradients
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

With Keras 3, `keras.metrics.Mean()` is the same metric.

A read inside an `assert` or an `assert*(...)` call (`np.testing.assert_allclose(w.numpy(),
...)` in a test) is not reported: checking every step needs every value.

To watch values while debugging, printing every step is the point: accept the cost there, or
print inside the step with `tf.print`. There is no automatic fix: replacing `print` with
`tf.print` in the eager loop still has to wait for the value.

## Course module
Module 4, *Copies between host and device* (`host-device-copies`).
"""

# Methods that only training calls: applying gradients, Keras' one-batch training.
_STEP_METHODS = ("apply_gradients", "minimize", "train_on_batch")
_CONVERSIONS = frozenset({"float", "int"})
# Functions whose bodies train whose callers are looked for: a bound on the search.
_MAX_TRAINING_FUNCTIONS = 256
# Names a read value is assigned to, followed through the loop: a bound on the search.
_MAX_DERIVED_NAMES = 32
# How many names, calls and subscripts a batch is followed through to NumPy: a bound.
_MAX_HOST_DEPTH = 8

# What a call does with a value passed to it (``_HostUses._callee_use``).
_NEEDS = "needs"  # Python code that uses the value now: the loop needs it on the host
_PASSES = "passes"  # hands on a value derived from it (``int(x)``, ``np.squeeze(x)``)
_KEEPS = "keeps"  # prints it, stores it, or gives it back to TensorFlow: no need now
# Builtins that turn the value into another Python value: what matters is its use.
_PASSING_BUILTINS = frozenset(
    {"abs", "bool", "float", "format", "int", "len", "list", "max", "min", "repr", "round"}
    | {"sorted", "str", "sum", "tuple"}
)
# Builtins that carry tensors on unread (``zip(grads, variables)`` into ``apply_gradients``).
_CARRYING_BUILTINS = frozenset({"dict", "enumerate", "filter", "iter", "map", "reversed", "zip"})
# List methods that keep a value for later (``losses.append(loss.numpy())``).
_STORING_METHODS = frozenset({"append", "appendleft", "extend", "insert"})


def _root_name(node: ast.expr) -> ast.Name | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node if isinstance(node, ast.Name) else None


def _imported_module(ctx: RuleContext, name: ast.Name, site: Site) -> str | None:
    """The dotted module or object a name is imported as (``np`` -> ``numpy``,
    ``choice`` -> ``numpy.random.choice``); None unless every binding is that import."""
    resolution = ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    if resolution is None or not resolution.bindings:
        return None
    found: set[str] = set()
    for binding in resolution.bindings:
        statement = binding.node
        if binding.kind != "import" or not isinstance(statement, (ast.Import, ast.ImportFrom)):
            return None
        for alias in statement.names:
            if isinstance(statement, ast.ImportFrom):
                if (alias.asname or alias.name) == name.id and statement.module:
                    found.add(f"{statement.module}.{alias.name}")
            elif alias.asname == name.id:
                found.add(alias.name)
            elif alias.asname is None and alias.name.split(".", 1)[0] == name.id:
                found.add(name.id)
    return found.pop() if len(found) == 1 else None


def _dotted_module_path(ctx: RuleContext, func: ast.expr, site: Site) -> str | None:
    """``np.random.choice`` -> ``numpy.random.choice``: the callee's path from the module
    its first name is imported as; None for anything but a chain of names."""
    attributes: list[str] = []
    node = func
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    module = _imported_module(ctx, node, site)
    if module is None:
        return None
    return ".".join([module, *reversed(attributes)])


def _names_a_module(ctx: RuleContext, func: ast.Attribute, site: Site) -> bool:
    """``scipy.optimize.minimize``: a function of a module, not an optimizer's method."""
    root = _root_name(func.value)
    return root is not None and _imported_module(ctx, root, site) is not None


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


# The attribute an optimizer keeps its learning rate in (Keras 3, and Keras 2's alias).
_RATE_ATTRIBUTES = frozenset({"learning_rate", "lr"})


def _rate_set_to(statement: ast.stmt) -> ast.expr | None:
    """The value a statement gives an optimizer's learning rate: ``opt.learning_rate =
    v``, ``opt.learning_rate.assign(v)``, ``keras.backend.set_value(opt.learning_rate, v)``."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Attribute) and target.attr in _RATE_ATTRIBUTES:
            return statement.value
        return None
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    func = call.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "assign"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr in _RATE_ATTRIBUTES
        and len(call.args) == 1
    ):
        return call.args[0]
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name == "set_value" and len(call.args) == 2:
        variable = call.args[0]
        if isinstance(variable, ast.Attribute) and variable.attr in _RATE_ATTRIBUTES:
            return call.args[1]
    return None


def _sweeps_learning_rates(loop: ast.AST) -> bool:
    """``for lr in rates: opt.learning_rate.assign(lr)``: a loop over learning rates that
    gives each iteration's rate to the optimizer (a learning-rate range test). Each step
    measures one rate, so the value it reads is the result: the loop needs it every
    iteration. (A warm-up that computes the rate from a step count is a training loop.)"""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    targets = set(_assigned_names(loop.target))
    for statement, under_if in _own_statements(loop.body):
        value = _rate_set_to(statement)
        if not under_if and isinstance(value, ast.Name) and value.id in targets:
            return True
    return False


class _TrainingCode:
    """Where the file trains: the calls that train by themselves (``tape.gradient``,
    ``apply_gradients``, ``minimize``, ``train_on_batch``) and the functions of the file
    whose bodies make such calls, directly or through functions they call."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.direct: list[Site] = []
        self.tape_gradients: list[Site] = []
        # One name at a time: the order does not matter, and a merged list would be sorted.
        for site in (site for name in _STEP_METHODS for site in ctx.calls_named(name)):
            func = site.node.func  # type: ignore[attr-defined]
            if not isinstance(func, ast.Attribute):
                continue
            if func.attr == "minimize" and _names_a_module(ctx, func, site):
                continue  # ``scipy.optimize.minimize(...)``
            self.direct.append(site)
        for site in ctx.calls_named("gradient"):
            func = site.node.func  # type: ignore[attr-defined]
            if isinstance(func, ast.Attribute) and ctx.value(func.value, site).kind == TAPE:
                self.tape_gradients.append(site)
        self.direct.extend(self.tape_gradients)
        self._aliases: dict[ast.AST, set[str]] | None = None
        self.functions = self._training_functions()

    def _tf_function_aliases(self) -> dict[ast.AST, set[str]]:
        """``step = tf.function(train_step)``: the names a function is also called by."""
        if self._aliases is not None:
            return self._aliases
        ctx = self.ctx
        aliases: dict[ast.AST, set[str]] = {}
        for binding in ctx.model.call_assignments:
            call = binding.value
            assert isinstance(call, ast.Call)
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr != "function":
                continue  # cheap test first: ``tf.function`` under any alias ends in ``function``
            if ctx.imports.resolve(func) != "tf.function":
                continue
            value = ctx.bindings.binding_value(binding)
            if value.kind == TF_FUNCTION and value.node is not None:
                aliases.setdefault(value.node, set()).add(binding.name)
        self._aliases = aliases
        return aliases

    def names_of(self, function: ast.AST) -> set[str]:
        """The names calls of ``function`` (a ``def`` or ``lambda``) may use."""
        names = set(self._tf_function_aliases().get(function, ()))
        name = getattr(function, "name", None)
        if name:
            names.add(name)
        return names

    def callee_defs(self, site: Site) -> set[ast.AST]:
        """The ``def`` (or ``lambda``) a call may run: a name bound to one (or to a
        tf.function of one), ``self.method(...)`` in a method, ``obj.method(...)`` with
        ``obj = C(...)`` for a class ``C`` of the file. Empty when not known."""
        ctx = self.ctx
        func = site.node.func  # type: ignore[attr-defined]
        if isinstance(func, ast.Name):
            value = ctx.value(func, site)
            if value.kind in (FUNCTION, TF_FUNCTION) and value.node is not None:
                return {value.node}
            return set()
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return set()
        names = ctx.bindings.names
        function = site.scope.function
        if function is not None and func.value.id == function.self_name:
            class_scope = function.class_scope
        else:
            class_scope = names.instance_class(site.scope, func.value, site.path)
        if class_scope is None:
            return set()
        binding = names.method_binding(class_scope, func.attr)
        return {binding.node} if binding is not None and binding.kind == "def" else set()

    def _training_functions(self) -> set[ast.AST]:
        """The functions whose bodies train: those with a training call, then the functions
        that call one of them (the callers of ``_MAX_TRAINING_FUNCTIONS`` at most)."""
        found: set[ast.AST] = set()
        pending: list[ast.AST] = []

        def add(scope: Scope) -> None:
            function = scope.function
            if function is not None and function.node not in found:
                found.add(function.node)
                pending.append(function.node)

        for site in self.direct:
            add(site.scope)
        followed = 0
        while pending and followed < _MAX_TRAINING_FUNCTIONS:
            trains = pending.pop()
            followed += 1
            callers = (s for name in self.names_of(trains) for s in self.ctx.calls_named(name))
            for site in callers:
                caller = site.scope.function
                if caller is None or caller.node in found:
                    continue  # module-level code, or a caller already known to train
                if trains in self.callee_defs(site):
                    add(site.scope)
        return found

    def steps(self, near: set[ast.AST]) -> Iterator[Site]:
        """The training calls in a loop body around code in ``near``'s loops: direct
        ones, and calls of functions whose bodies train."""
        yield from (site for site in self.direct if _in_loops(site, near))
        names = {name for function in self.functions for name in self.names_of(function)}
        for site in (site for name in names for site in self.ctx.calls_named(name)):
            if _in_loops(site, near) and self.callee_defs(site) & self.functions:
                yield site


def _in_loops(site: Site, loops: set[ast.AST]) -> bool:
    return any(block.owner in loops for block in site.path)


class _TrainingLoops:
    """Which loops run a training step on every iteration, and which tensors they make."""

    def __init__(self, ctx: RuleContext, reading_loops: set[ast.AST]) -> None:
        """``reading_loops``: the loops around the reads in question. A step in no such loop
        cannot make any of them a training or an epoch loop, so it is not looked at."""
        self.ctx = ctx
        training = _TrainingCode(ctx)
        runs_step: set[ast.AST] = set()
        step_sites: dict[ast.AST, list[Site]] = {}  # each loop's training calls
        self.epoch_loops: set[ast.AST] = set()  # loops around a loop that runs the step
        # Bindings of names passed to ``tape.gradient(name, ...)``: those names are tensors.
        self.gradient_targets: set[int] = set()
        for site in training.tape_gradients:
            # Wherever it is, the gradient tells which names hold tensors.
            call = site.node
            assert isinstance(call, ast.Call)
            target = call.args[0] if call.args else None
            if isinstance(target, ast.Name):
                for binding in self._bindings(target, site.scope, site.path):
                    self.gradient_targets.add(id(binding))
        for site in training.steps(reading_loops):
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
                step_sites.setdefault(loops[-1], []).append(site)
        # ``for epoch in range(20): loss = step(x, y)`` trains on the whole data set per
        # iteration: its reads are the once-per-epoch reads this rule recommends.
        self.epoch_loops.update(loop for loop in runs_step if _counts_epochs(loop))
        # A loop that stops on what it reads needs those values every iteration.
        self.epoch_loops.update(
            loop for loop in runs_step - self.epoch_loops if _decides_when_to_stop(loop)
        )
        # A loop over learning rates, each given to the optimizer: each step's value is the
        # measurement of its rate.
        self.epoch_loops.update(
            loop for loop in runs_step - self.epoch_loops if _sweeps_learning_rates(loop)
        )
        # A loop whose steps take NumPy batches made on the host each iteration runs at the
        # host's pace: its reads are not what keeps the device waiting.
        host_batches = _HostBatches(ctx)
        self.host_fed = {
            loop
            for loop in runs_step - self.epoch_loops
            if any(host_batches.takes_one(site) for site in step_sites.get(loop, ()))
            or host_batches.taped_in(loop, step_sites.get(loop, ()))
        }
        self.step_loops = runs_step - self.epoch_loops - self.host_fed

    def _bindings(self, name: ast.Name, scope: Scope, path: Path) -> tuple[Binding, ...]:
        resolution = self.ctx.bindings.names.resolve(
            scope, name.id, (name.lineno, name.col_offset), path
        )
        return resolution.bindings if resolution is not None else ()

    def step_loop(self, site: Site) -> ast.AST | None:
        """The training loop whose every iteration runs ``site``, outside any graph.

        Loops between the code and the training loop that run no step (``for g in grads``)
        repeat it within the step, so they do not hide it; an ``if`` (or ``except``) in
        between makes it a periodic read, and an epoch loop is reached first for code that
        runs once per epoch.
        """
        if self.ctx.tf_function_body(site.scope) is not None:
            return None  # in a graph: TFC011 / TFC002 explain those
        for block in reversed(site.path):
            if block.is_loop_body:
                if block.owner in self.epoch_loops or block.owner in self.host_fed:
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
        ctx = self.ctx
        if isinstance(node, ast.Call) and ctx.value(node.func, site).kind == TF_FUNCTION:
            return True
        if ctx.value(node, site).is_tensor_like:
            return True
        if not isinstance(node, ast.Name):
            return False
        bindings = self._bindings(node, site.scope, site.path)
        return bool(bindings) and all(
            id(binding) in self.gradient_targets or self._step_result(binding)
            for binding in bindings
        )


class _HostBatches:
    """Whether a training call takes a batch the loop makes on the host with NumPy: an
    argument that is a NumPy value (``x_train[i:i + n]`` of a NumPy array, a draw of
    ``np.random`` or of a NumPy generator, ``np.stack(...)``), an array indexed with one
    (``triples[order[i:i + n]]``), a plain function of the file given one
    (``corrupt(batch)``), or a name the loop binds to any of these. Tensors are not: a
    slice of a ``tf.constant`` stays on the device."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx

    def takes_one(self, site: Site) -> bool:
        call = site.node
        assert isinstance(call, ast.Call)
        arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
        return any(
            self._batch(argument, site.scope, site.path, 0)
            for argument in arguments
            if not isinstance(argument, ast.Starred)
        )

    def taped_in(self, loop: ast.AST, steps: list[Site]) -> bool:
        """Whether a call the loop makes under a ``GradientTape`` (``model(xb)``) takes a
        host batch: an eager step's batch goes to the code the tape records, not to
        ``apply_gradients``."""
        if not steps or not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
            return False
        site = steps[0]
        for node in ast.walk(loop):
            if not isinstance(node, (ast.With, ast.AsyncWith)) or not any(
                self.ctx.value(item.context_expr, site).kind == TAPE for item in node.items
            ):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and self.takes_one(
                    Site(inner, site.scope, site.path)
                ):
                    return True
        return False

    def _bindings(self, name: ast.Name, scope: Scope, path: Path) -> tuple[Binding, ...]:
        resolution = self.ctx.bindings.names.resolve(
            scope, name.id, (name.lineno, name.col_offset), path
        )
        return resolution.bindings if resolution is not None else ()

    def _batch(self, node: ast.expr, scope: Scope, path: Path, depth: int) -> bool:
        if depth > _MAX_HOST_DEPTH:
            return False
        if self._numpy(node, scope, path, depth):
            return True
        if isinstance(node, ast.Subscript):
            return self._numpy(node.slice, scope, path, depth + 1)
        if isinstance(node, ast.Name):
            bindings = self._bindings(node, scope, path)
            return bool(bindings) and all(
                binding.kind == "assign"
                and binding.value is not None
                and self._batch(binding.value, binding.value_scope, binding.path, depth + 1)
                for binding in bindings
            )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            site = Site(node, scope, path)
            if self.ctx.value(node.func, site).kind != FUNCTION:
                return False  # TensorFlow's, a tf.function's or an unknown call
            return any(
                self._batch(argument, scope, path, depth + 1)
                for argument in node.args
                if not isinstance(argument, ast.Starred)
            )
        return False

    def _numpy(self, node: ast.expr, scope: Scope, path: Path, depth: int) -> bool:
        """Whether ``node`` is a NumPy value: a call of NumPy (or of a method of a NumPy
        object: ``rng.permutation(n)`` with ``rng = np.random.default_rng()``), an item or
        a slice of one, arithmetic on one, or a name bound only to such values."""
        if depth > _MAX_HOST_DEPTH:
            return False
        ctx = self.ctx
        if isinstance(node, ast.Call):
            func = node.func
            module_path = _dotted_module_path(ctx, func, Site(node, scope, path))
            if module_path is not None:
                return module_path == "numpy" or module_path.startswith("numpy.")
            if isinstance(func, ast.Attribute) and func.attr != "numpy":
                return self._numpy(func.value, scope, path, depth + 1)
            return False
        if isinstance(node, ast.Subscript):
            return self._numpy(node.value, scope, path, depth + 1)
        if isinstance(node, ast.BinOp):
            operands = (node.left, node.right)
            site = Site(node, scope, path)
            return any(self._numpy(o, scope, path, depth + 1) for o in operands) and not any(
                ctx.value(o, site).is_tensor_like for o in operands
            )
        if isinstance(node, ast.Name):
            bindings = self._bindings(node, scope, path)
            return bool(bindings) and all(
                binding.kind == "assign"
                and binding.value is not None
                and self._numpy(binding.value, binding.value_scope, binding.path, depth + 1)
                for binding in bindings
            )
        return False


_NOT_RUN_HERE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_OWN_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)
# Not walked as a statement's own code: its nested blocks, code that runs elsewhere, and
# ``Load`` / ``Store`` markers.
_SKIPPED = (*_OWN_BLOCKS, *_NOT_RUN_HERE, ast.expr_context)


class _LoopCode:
    """A loop's code as it runs on each iteration (nested ``def``, ``class`` and ``lambda``
    bodies left out): its statements, each with whether an ``if``, ``case`` or ``except``
    guards it (it does not run on every iteration), and, walked on demand, the parents of
    the nodes in a statement's own expressions and the names the loop reads. Most loops
    need one or two statements walked: their reads' own."""

    def __init__(self, loop: ast.AST) -> None:
        self.statements: list[ast.stmt] = []
        self.guarded: set[int] = set()  # ids of guarded statements
        self._parents: dict[int, ast.AST] = {}
        self._walked: set[int] = set()
        # Names read in the statements walked so far, each read with its statement.
        self._name_reads: dict[str, list[tuple[ast.Name, ast.stmt]]] = {}
        self._walked_all = False
        self._calls: list[tuple[ast.Call, ast.stmt]] = []  # calls in the walked statements
        pending: list[tuple[ast.AST, bool]] = [(loop, False)]
        while pending:
            node, guarded = pending.pop()
            if isinstance(node, ast.stmt):
                self.statements.append(node)
                if guarded:
                    self.guarded.add(id(node))
            guarded_children = _guarded_children(node)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, _OWN_BLOCKS) and not isinstance(child, _NOT_RUN_HERE):
                    pending.append((child, guarded or id(child) in guarded_children))

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement of the loop whose own code holds ``node``."""
        position = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
        found: ast.stmt | None = None
        for statement in self.statements:
            start = (statement.lineno, statement.col_offset)
            end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
            if start <= position <= end and (
                found is None or start >= (found.lineno, found.col_offset)
            ):
                found = statement
        return found

    def parent(self, node: ast.AST, statement: ast.stmt) -> ast.AST | None:
        """The parent of ``node``, an expression in ``statement``'s own code."""
        if id(statement) not in self._walked:
            self._walk(statement)
        return self._parents.get(id(node))

    def _walk(self, statement: ast.stmt) -> None:
        self._walked.add(id(statement))
        parents = self._parents
        reads = self._name_reads
        pending: list[ast.AST] = [statement]
        while pending:
            node = pending.pop()
            for child in ast.iter_child_nodes(node):
                child_type = type(child)
                if child_type is ast.Constant or isinstance(child, _SKIPPED):
                    continue
                parents[id(child)] = node
                if child_type is ast.Call:
                    self._calls.append((child, statement))  # type: ignore[arg-type]
                if child_type is ast.Name:  # a leaf: only its read is of interest
                    if type(child.ctx) is ast.Load:  # type: ignore[attr-defined]
                        reads.setdefault(child.id, []).append((child, statement))  # type: ignore[attr-defined]
                    continue
                pending.append(child)

    def _walk_all(self) -> None:
        if not self._walked_all:
            self._walked_all = True
            for statement in self.statements:
                if id(statement) not in self._walked:
                    self._walk(statement)

    def name_reads(self, name: str) -> list[tuple[ast.Name, ast.stmt]]:
        """Where the loop reads ``name``, each with its statement (walks every statement,
        on the first call)."""
        self._walk_all()
        return self._name_reads.get(name, [])

    def calls(self) -> list[tuple[ast.Call, ast.stmt]]:
        """Every call in the loop's own code, each with its statement."""
        self._walk_all()
        return self._calls


def _guarded_children(node: ast.AST) -> set[int]:
    """The statements of ``node`` that run only on some iterations: an ``if``'s branches,
    ``case`` bodies, ``except`` handlers."""
    if isinstance(node, ast.If):
        return {id(statement) for statement in (*node.body, *node.orelse)}
    if isinstance(node, ast.Match):
        return {id(case) for case in node.cases}
    if isinstance(node, (ast.Try, ast.TryStar)):
        return {id(handler) for handler in node.handlers}
    return set()


def _assigned_names(target: ast.expr) -> Iterator[str]:
    """The plain names an assignment target binds (``a``, ``a, (b, *c)``); attributes and
    items keep the value in an object, not in a name the loop reads."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _assigned_names(element)
    elif isinstance(target, ast.Starred):
        yield from _assigned_names(target.value)


class _HostUses:
    """Whether a training loop needs, on every iteration, a value it reads, or a tensor it
    makes (``env.step(action)`` converts ``action`` itself): passes it (or a name it is
    assigned to) to code that is not TensorFlow's, tests it, or indexes or iterates with it
    in Python. Uses under an ``if`` run on some iterations only."""

    def __init__(self, ctx: RuleContext, loops: _TrainingLoops) -> None:
        self.ctx = ctx
        self.loops = loops

    def needs(self, loop: ast.AST, reads: list[Site], site: Site) -> bool:
        """``site``: a site in ``loop`` (its reads' scope is the loop's, or a comprehension
        of it)."""
        code = _LoopCode(loop)
        site = self._loop_site(loop, site)
        read_nodes = {id(read.node) for read in reads}
        pending: list[tuple[ast.AST, ast.stmt]] = []
        for read in reads:
            statement = code.statement_of(read.node)
            if statement is not None:
                pending.append((read.node, statement))
        if self._follow(pending, code, site, tensors=False):
            return True
        # Tensors the loop makes, followed as the reads are: Python code they are passed to
        # converts them (``env.step(action)`` reads ``action`` as surely as ``.numpy()``).
        pending = [
            (call, statement)
            for call, statement in code.calls()
            if id(call) not in read_nodes and self.loops.is_tensor(call, site)
        ]
        return self._follow(pending, code, site, tensors=True)

    def _follow(
        self, pending: list[tuple[ast.AST, ast.stmt]], code: _LoopCode, site: Site, *, tensors: bool
    ) -> bool:
        """Whether code that runs every iteration needs one of the ``pending`` values (or a
        name they are assigned to) on the host; ``tensors``: the values are tensors."""
        derived: set[str] = set()
        while pending:
            node, statement = pending.pop()
            needed, names = self._use(node, statement, code, site, tensors)
            if needed:
                return True
            for name in names:
                if name not in derived and len(derived) < _MAX_DERIVED_NAMES:
                    derived.add(name)
                    pending.extend(code.name_reads(name))
        return False

    @staticmethod
    def _loop_site(loop: ast.AST, read: Site) -> Site:
        """Where the loop's own names are read: the scope the loop is in (not a
        comprehension of the read's), the blocks down to the loop's body."""
        scope = read.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        path = read.path
        for index, block in enumerate(path):
            if block.owner is loop and block.is_loop_body:
                path = path[: index + 1]
                break
        return Site(loop, scope, path)

    def _use(
        self, node: ast.AST, statement: ast.stmt, code: _LoopCode, site: Site, tensor: bool
    ) -> tuple[bool, list[str]]:
        """Follows the value of ``node`` up through the expressions that carry it: whether
        code that runs every iteration needs it now, else the names it is assigned to."""
        names: list[str] = []
        child: ast.AST = node
        while True:
            parent = code.parent(child, statement)
            if parent is None:
                return False, names
            used_now = False
            if isinstance(parent, ast.Call):
                if child is not parent.func:  # an argument; a method of the value passes it
                    use = self._callee_use(parent, site, tensor)
                    if use == _KEEPS:
                        return False, names
                    used_now = use == _NEEDS
            elif isinstance(parent, (ast.If, ast.While, ast.IfExp)):
                used_now = child is parent.test
            elif isinstance(parent, ast.Subscript):
                used_now = child is parent.slice  # an index into a Python object
            elif isinstance(parent, (ast.comprehension, ast.For, ast.AsyncFor)):
                if tensor:
                    return False, names  # a tensor's rows are tensors: its shape counts them
                used_now = True  # iterated (or filtered) in Python
            elif isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
                if tensor:
                    return False, names  # the caller gets a tensor, still on the device
                used_now = True  # handed to the caller, who uses it now
            elif isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                names.extend(name for target in targets for name in _assigned_names(target))
                return False, names
            elif isinstance(parent, ast.NamedExpr):
                names.append(parent.target.id)
            elif not isinstance(parent, (ast.expr, ast.keyword)):
                return False, names  # an expression statement, ``assert``, ``with``, ...
            if used_now:
                return id(statement) not in code.guarded, names
            child = parent

    def _callee_use(self, call: ast.Call, site: Site, tensor: bool) -> str:
        """What ``call`` does with a value passed to it: TensorFlow, Keras and tf.functions
        take it back to the device, ``print`` and list methods keep it, conversions and
        NumPy arithmetic pass it on; NumPy sampling and other code need it now. A tensor
        (``tensor``) is also carried on by ``zip`` / ``enumerate`` and their kin (into
        ``apply_gradients``), and kept by a function called by a plain name (a helper of the
        file may keep it a tensor) or a method of an object reached from a TensorFlow one
        (``model.optimizer.apply_gradients``)."""
        ctx = self.ctx
        func = call.func
        if ctx.imports.resolve(func) is not None:
            return _KEEPS  # a TensorFlow or Keras name
        if isinstance(func, ast.Name) and ctx.bindings.names.is_builtin(
            site.scope, func.id, (func.lineno, func.col_offset), site.path
        ):
            if func.id == "print":
                return _KEEPS
            if func.id in _PASSING_BUILTINS or (tensor and func.id in _CARRYING_BUILTINS):
                return _PASSES
            if tensor and not hasattr(builtins, func.id):
                return _KEEPS  # a name bound nowhere in the file: not known to need it
            return _NEEDS
        if isinstance(func, ast.Attribute) and func.attr in _STORING_METHODS:
            return _KEEPS
        module_path = _dotted_module_path(ctx, func, site)
        if module_path is not None:
            if module_path == "numpy" or module_path.startswith("numpy."):
                return _NEEDS if module_path.startswith("numpy.random.") else _PASSES
            return _NEEDS
        if self._tensorflow_object(func, site):
            return _KEEPS
        if tensor and isinstance(func, ast.Name):
            return _KEEPS  # a function of the file (or not known) may keep it a tensor
        if tensor and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
            root = _root_name(func.value)
            if root is not None and self._tensorflow_object(root, site):
                return _KEEPS
        return _NEEDS

    def _tensorflow_object(self, func: ast.expr, site: Site) -> bool:
        """Whether ``func`` is a tf.function, a Keras loss, or a method of (or itself) an
        object made by a TensorFlow or Keras call (``model = tf.keras.Sequential(...)``,
        ``metric = keras.metrics.Mean()``), a tensor, or an instance of a Keras class of
        the file."""
        ctx = self.ctx
        if ctx.value(func, site).kind in (TF_FUNCTION, KERAS_LOSS):
            return True
        receiver = func.value if isinstance(func, ast.Attribute) else func
        receiver_value = ctx.value(receiver, site)
        if receiver_value.is_tensor_like or receiver_value.kind == TAPE:
            return True
        names = ctx.bindings.names
        if isinstance(receiver, ast.Name):
            resolution = names.resolve(
                site.scope, receiver.id, (receiver.lineno, receiver.col_offset), site.path
            )
            bindings = list(resolution.bindings) if resolution is not None else []
            class_scope = names.instance_class(site.scope, receiver, site.path)
            if class_scope is not None and ctx.bindings.traced.keras_class_kind(class_scope):
                return True
        elif isinstance(receiver, ast.Attribute):
            bindings = names.self_attribute_bindings(receiver, site.scope) or []
        else:
            return False
        return bool(bindings) and all(
            binding.kind == "assign"
            and isinstance(binding.value, ast.Call)
            and ctx.imports.resolve(binding.value.func) is not None
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


def _reads_a_tensor(ctx: RuleContext, site: Site, loops: _TrainingLoops) -> bool:
    """Whether a call found by ``_reads_in_loops`` reads a tensor into Python: ``.numpy()``,
    ``float``/``int``/``print`` of a known tensor."""
    call = site.node
    assert isinstance(call, ast.Call)
    func = call.func
    if isinstance(func, ast.Attribute):
        # (``tf.experimental.numpy`` resolves: a module, not a tensor)
        return ctx.imports.resolve(func) is None
    assert isinstance(func, ast.Name)
    if not ctx.bindings.names.is_builtin(
        site.scope, func.id, (func.lineno, func.col_offset), site.path
    ):
        return False
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
        return False
    return any(loops.is_tensor(argument, site) for argument in arguments)


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
    per_step: list[tuple[ast.Call, ast.AST]] = []
    a_read_in: dict[ast.AST, Site] = {}  # a per-step read's site in each loop
    for site in reads:
        loop = loops.step_loop(site)
        if loop is None or id(site.node) in checked or not _reads_a_tensor(ctx, site, loops):
            continue
        per_step.append((site.node, loop))  # type: ignore[arg-type]
        a_read_in.setdefault(loop, site)
    if not per_step:
        return
    # The reads anywhere in each step loop (under an ``if`` too: the value may be used
    # every iteration) that give a value to Python code (``print`` only shows it).
    values_read: dict[ast.AST, list[Site]] = {loop: [] for _, loop in per_step}
    for site in reads:
        func = site.node.func  # type: ignore[attr-defined]
        if isinstance(func, ast.Name) and func.id == "print":
            continue
        loops_around = [
            block.owner for block in site.path if block.is_loop_body and block.owner in values_read
        ]
        if loops_around and _reads_a_tensor(ctx, site, loops):
            for loop in loops_around:
                values_read[loop].append(site)
    host_uses = _HostUses(ctx, loops)
    needing = {
        loop: host_uses.needs(loop, sites, a_read_in[loop]) for loop, sites in values_read.items()
    }
    for call, loop in per_step:
        if needing[loop]:
            continue
        yield ctx.finding(
            CODE,
            call,
            f"`{ctx.short(call)}` in a training loop copies the value to the host and waits "
            "for the device on every step; accumulate it in a tensor or a "
            "`tf.keras.metrics.Mean` and read it once per epoch",
        )
