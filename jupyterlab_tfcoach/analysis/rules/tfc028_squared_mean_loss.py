"""TFC028: a loss that squares the mean of differences instead of averaging their squares.

``tf.reduce_mean(pred - target) ** 2`` is the squared bias of ``pred``: a statistic. As a
loss it lets positive and negative errors cancel, so it is 0 whenever the two agree on
average, and minimising it only matches their means. The rule fires only where the
expression is minimised (a tape's differentiated loss, what a function given to
``minimize`` / ``compile(loss=...)`` returns, a Keras ``Loss.call``, ``add_loss``), and only
on a difference of two operands that are not scalars.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis.arguments import keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Binding, Scope, Site
from jupyterlab_tfcoach.analysis.rules._common import (
    dotted_parts,
    number_literal,
    own_nodes,
    parenthesized,
)
from jupyterlab_tfcoach.analysis.rules._tapes import tape_calls
from jupyterlab_tfcoach.analysis.values import PY_NUMBER

CODE = "TFC028"
NAME = "squared-mean-loss"
SEVERITY = Severity.WARNING
SECTION = "training-loop"

DOCS = """
## What it does
Flags a loss that squares the mean (or the sum) of a difference of two operands,
`tf.reduce_mean(a - b) ** 2` (also `tf.square(tf.reduce_mean(a - b))`, `keras.ops.mean`,
`np.mean`, `tf.reduce_sum`, a reduction over an axis, a name bound to `a - b`, operands
such as `gram(x) - target`), where the mean of the squared difference
`tf.reduce_mean(tf.square(a - b))` was meant.

It fires only where the expression is minimised: in what a `tf.GradientTape` records for
the value its `gradient` differentiates, in what a function of the file returns when its
result is differentiated that way, given to `optimizer.minimize` or to
`compile(loss=...)`, in a Keras `Loss` subclass's `call`, a model's `compute_loss`, or an
`add_loss(...)` argument. The same expression as a statistic (a squared bias printed or
logged) is left alone. A squared mean with no difference inside (`tf.reduce_mean(h) ** 2`,
a penalty pulling a mean activation to 0) is meant to be a squared mean and is not
flagged, nor is a difference with a number or a scalar name (`reduce_mean(x - 0.5) ** 2`
pulls the mean to 0.5). A squared mean that is subtracted (the variance
`mean(d**2) - mean(d)**2`, the scale-invariant depth loss), or that sits next to the mean
of the squares of the same difference (a bias penalty added to the mean squared error),
is a deliberate term and is not flagged either.

The fix moves the square inside the reduction, same reduction, axis and names:
`tf.reduce_mean(tf.square(a - b))`.

## Why is this bad?
The mean of the differences is positive errors minus negative ones: they cancel. The
squared mean is 0 whenever `a` and `b` agree on average, however far apart each pair is,
so the model (or the image being optimised) learns only to match a mean, and a loss that
reaches 0 reports a perfect fit that is not there. Nothing raises, and the loss goes down.

## Example
```python
with tf.GradientTape() as tape:
    pred = model(x, training=True)
    loss = tf.reduce_mean(pred - y) ** 2
grads = tape.gradient(loss, model.trainable_variables)
```

## Use instead
```python
with tf.GradientTape() as tape:
    pred = model(x, training=True)
    loss = tf.reduce_mean(tf.square(pred - y))
grads = tape.gradient(loss, model.trainable_variables)
```

## Course module
Module 3, *A training loop that works* (`training-loop`).
"""

# Canonical names (``imports.py``) of the reductions a loss averages or sums with.
_REDUCTIONS = frozenset(
    {
        "tf.reduce_mean",
        "tf.math.reduce_mean",
        "tf.reduce_sum",
        "tf.math.reduce_sum",
        "tf.keras.ops.mean",
        "tf.keras.ops.sum",
        "tf.experimental.numpy.mean",
        "tf.experimental.numpy.sum",
    }
)
_NUMPY_REDUCTIONS = frozenset({"mean", "sum", "average", "nanmean", "nansum"})
_SQUARES = frozenset(
    {"tf.square", "tf.math.square", "tf.keras.ops.square", "tf.experimental.numpy.square"}
)
_POWERS = frozenset({"tf.pow", "tf.math.pow", "tf.keras.ops.power", "tf.experimental.numpy.power"})
_SUBTRACTS = frozenset(
    {"tf.subtract", "tf.math.subtract", "tf.keras.ops.subtract", "tf.experimental.numpy.subtract"}
)
# Method reductions on an array or tensor written as a difference: ``(a - b).mean()``.
_REDUCING_METHODS = frozenset({"mean", "sum"})
# The square of a reduction's own module, by the reduction's last name.
_SQUARE_OF = {"reduce_mean": "square", "reduce_sum": "square", "mean": "square", "sum": "square"}


@dataclass(frozen=True)
class _Candidate:
    outer: ast.expr  # the squared expression: ``R(d) ** 2``, ``tf.square(R(d))``
    reduction: ast.Call  # ``R(d, ...)`` or ``d.mean(...)``
    reduced: ast.expr  # ``d`` as written in the reduction
    difference: ast.expr  # the ``a - b`` (``d`` itself, or what the name ``d`` is bound to)
    left: ast.expr
    right: ast.expr
    square_callee: ast.expr | None  # ``tf.square`` when the learner squared with a call
    site: Site


@dataclass(frozen=True)
class _Reason:
    """Why an expression is minimised: ``action`` reads with ``{it}`` for the value, and
    ``function`` names the learner's function that returns it, if it is not the root."""

    action: str
    function: str | None = None

    def text(self) -> str:
        if self.function is None:
            return self.action.format(it="it")
        return f"it is part of what `{self.function}` returns, and " + self.action.format(it="that")


def check(ctx: RuleContext) -> Iterator[Finding]:
    numpy_names = _numpy_import_names(ctx)
    candidates = list(_candidates(ctx, numpy_names))
    if not candidates:
        return
    parents = {
        id(child): node for node in ast.walk(ctx.model.tree) for child in ast.iter_child_nodes(node)
    }
    minimised: _Minimised | None = None
    for candidate in candidates:
        if _deliberate(candidate, parents, numpy_names, ctx):
            continue
        if minimised is None:
            minimised = _Minimised(ctx)
        reason = minimised.reason(candidate.outer)
        if reason is not None:
            yield _finding(ctx, candidate, reason)


# -- the squared reductions of a difference -------------------------------------------


def _numpy_import_names(ctx: RuleContext) -> dict[str, str]:
    """Local name -> what it names under numpy: ``np`` -> ``""``, ``mean`` -> ``mean``."""
    names: dict[str, str] = {}
    for statement in ctx.model.import_statements:
        if isinstance(statement, ast.ImportFrom):
            if not statement.level and statement.module == "numpy":
                for alias in statement.names:
                    names[alias.asname or alias.name] = alias.name
            continue
        for alias in statement.names:
            if alias.name == "numpy":
                names[alias.asname or "numpy"] = ""
    return names


def _numpy_name(func: ast.expr, numpy_names: dict[str, str]) -> str | None:
    """``np.mean`` / ``mean`` (from numpy) -> ``mean``; None for anything else."""
    parts = dotted_parts(func)
    if parts is None or parts[0] not in numpy_names:
        return None
    root, attrs = parts
    return ".".join(part for part in (numpy_names[root], *attrs) if part)


def _callee_is(
    ctx: RuleContext,
    func: ast.expr,
    canonical: frozenset[str],
    numpy: frozenset[str],
    numpy_names: dict[str, str],
) -> bool:
    if ctx.imports.resolve(func) in canonical:
        return True
    return _numpy_name(func, numpy_names) in numpy


def _candidates(ctx: RuleContext, numpy_names: dict[str, str]) -> Iterator[_Candidate]:
    for site in ctx.model.binops:
        node = site.node
        assert isinstance(node, ast.BinOp)
        if isinstance(node.op, ast.Pow) and number_literal(node.right) == 2:
            inner = node.left
        elif isinstance(node.op, ast.Mult) and ast.dump(node.left) == ast.dump(node.right):
            inner = node.left
        else:
            continue
        found = _squared_reduction(ctx, node, inner, None, site, numpy_names)
        if found is not None:
            yield found
    for name in ("square", "pow", "power"):
        for site in ctx.calls_named(name):
            call = site.node
            assert isinstance(call, ast.Call)
            if not call.args or call.keywords or isinstance(call.args[0], ast.Starred):
                continue
            func = call.func
            if name == "square":
                if len(call.args) != 1 or not _callee_is(
                    ctx, func, _SQUARES, frozenset({"square"}), numpy_names
                ):
                    continue
                square_callee: ast.expr | None = func
            else:
                if len(call.args) != 2 or number_literal(call.args[1]) != 2:
                    continue
                if not _callee_is(ctx, func, _POWERS, frozenset({"power"}), numpy_names):
                    continue
                square_callee = None
            found = _squared_reduction(ctx, call, call.args[0], square_callee, site, numpy_names)
            if found is not None:
                yield found


def _squared_reduction(
    ctx: RuleContext,
    outer: ast.expr,
    inner: ast.expr,
    square_callee: ast.expr | None,
    site: Site,
    numpy_names: dict[str, str],
) -> _Candidate | None:
    if not isinstance(inner, ast.Call):
        return None
    func = inner.func
    if isinstance(func, ast.Attribute) and func.attr in _REDUCING_METHODS and not inner.args:
        # ``(a - b).mean()``: a method on the difference itself (not ``np.mean`` / ``tf.x``).
        if _numpy_name(func, numpy_names) is not None or ctx.imports.resolve(func):
            reduced = None
        else:
            reduced = func.value
    else:
        reduced = None
    if reduced is None:
        if not _callee_is(ctx, func, _REDUCTIONS, _NUMPY_REDUCTIONS, numpy_names):
            return None
        reduced = positional(inner, 0)
        if reduced is None:
            reduced = next(
                (keyword(inner, k) for k in ("input_tensor", "x", "a") if keyword(inner, k)),
                None,
            )
        if reduced is None:
            return None
    operands = _difference(ctx, reduced, site, numpy_names)
    if operands is None:
        return None
    difference, left, right = operands
    return _Candidate(outer, inner, reduced, difference, left, right, square_callee, site)


def _difference(
    ctx: RuleContext, node: ast.expr, site: Site, numpy_names: dict[str, str], follow: bool = True
) -> tuple[ast.expr, ast.expr, ast.expr] | None:
    """``(difference, a, b)`` for ``a - b`` / ``tf.subtract(a, b)``, or a name bound once to
    one; None when an operand is a number (or a scalar reduction): a difference with a
    number moves the mean, and its squared mean pulls the mean to that number, on purpose."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        left, right = node.left, node.right
    elif (
        isinstance(node, ast.Call)
        and len(node.args) == 2
        and not node.keywords
        and _callee_is(ctx, node.func, _SUBTRACTS, frozenset({"subtract"}), numpy_names)
    ):
        left, right = node.args
    elif follow and isinstance(node, ast.Name):
        resolution = ctx.bindings.names.resolve(
            site.scope, node.id, (node.lineno, node.col_offset), site.path
        )
        if resolution is None or len(resolution.bindings) != 1:
            return None
        binding = resolution.bindings[0]
        if binding.kind != "assign" or binding.value is None:
            return None
        found = _difference(ctx, binding.value, site, numpy_names, follow=False)
        return None if found is None else (node, found[1], found[2])
    else:
        return None
    for operand in (left, right):
        if number_literal(operand) is not None or _is_scalar(ctx, operand, site, numpy_names):
            return None
    return node, left, right


def _is_scalar(ctx: RuleContext, node: ast.expr, site: Site, numpy_names: dict[str, str]) -> bool:
    """A Python number, or a whole-tensor reduction (``x - tf.reduce_mean(x)``)."""
    if isinstance(node, ast.Call):
        func = node.func
        reduces = _callee_is(ctx, func, _REDUCTIONS, _NUMPY_REDUCTIONS, numpy_names) or (
            isinstance(func, ast.Attribute) and func.attr in _REDUCING_METHODS
        )
        return reduces and len(node.args) <= 1 and not node.keywords
    if isinstance(node, ast.Name) and _number_default(ctx, node, site):
        return True
    if isinstance(node, (ast.Name, ast.Attribute)):
        return ctx.value(node, site).kind == PY_NUMBER
    return False


def _number_default(ctx: RuleContext, name: ast.Name, site: Site) -> bool:
    """A parameter whose default is a number: ``def loss(p, level=0.25)``."""
    resolution = ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    if resolution is None or len(resolution.bindings) != 1:
        return False
    binding = resolution.bindings[0]
    definition = binding.scope.node
    if binding.kind != "param" or not isinstance(
        definition, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    ):
        return False
    arguments = definition.args
    ordered = [*arguments.posonlyargs, *arguments.args]
    pairs = list(
        zip(ordered[len(ordered) - len(arguments.defaults) :], arguments.defaults, strict=True)
    )
    pairs += [
        (a, d)
        for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if d is not None
    ]
    return any(a.arg == name.id and number_literal(d) is not None for a, d in pairs)


def _deliberate(
    candidate: _Candidate,
    parents: dict[int, ast.AST],
    numpy_names: dict[str, str],
    ctx: RuleContext,
) -> bool:
    """A squared mean that is subtracted (``mean(d**2) - mean(d)**2``: a variance), or that
    sits in a statement that also takes the mean of the squares of the same difference (a
    bias term added to the mean squared error on purpose)."""
    node: ast.AST = candidate.outer
    parent = parents.get(id(node))
    while isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div)):
        node, parent = parent, parents.get(id(parent))  # a weight: ``0.5 * mean(d) ** 2``
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Sub) and parent.right is node:
        return True
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub):
        return True
    statement: ast.AST = candidate.outer
    while not isinstance(statement, ast.stmt) and id(statement) in parents:
        statement = parents[id(statement)]
    wanted = {ast.dump(candidate.reduced), ast.dump(candidate.difference)}
    for node in ast.walk(statement):
        if node is candidate.reduction or not isinstance(node, ast.Call) or not node.args:
            continue
        squared = _squared_operand(ctx, node.args[0], numpy_names)
        if squared is not None and ast.dump(squared) in wanted:
            return True
    return False


def _squared_operand(
    ctx: RuleContext, node: ast.expr, numpy_names: dict[str, str]
) -> ast.expr | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return node.left if number_literal(node.right) == 2 else None
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and _callee_is(ctx, node.func, _SQUARES, frozenset({"square"}), numpy_names)
    ):
        return node.args[0]
    return None


# -- where an expression is minimised ------------------------------------------------


class _Minimised:
    """Every expression a loss is computed from, with why it is minimised.

    Roots: a tape's differentiated value, the loss given to ``minimize`` /
    ``compile(loss=...)``, ``add_loss``'s argument, what a Keras ``Loss.call`` or a model's
    ``compute_loss`` returns. From each root, the names it reads are followed to their
    assignments in the same scope (in a tape's block only, for a tape: what it records),
    and the file's functions it calls to their returns."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.reasons: dict[int, _Reason] = {}
        self._scopes = {id(scope.node): scope for scope in ctx.model.scopes}
        self._call_sites = {id(site.node): site for site in ctx.model.calls}
        self._functions_done: set[tuple[int, int | None]] = set()
        self._pending: list[tuple[ast.expr, Scope, tuple[int, int] | None, _Reason]] = []
        self._tapes()
        self._minimize_calls()
        self._compile_calls()
        self._add_loss_calls()
        self._loss_methods()
        self._follow()

    def reason(self, node: ast.AST) -> _Reason | None:
        return self.reasons.get(id(node))

    # Roots ---------------------------------------------------------------------------

    def _tapes(self) -> None:
        ctx = self.ctx
        with_of_item = {
            id(item): site.node
            for site in ctx.model.withs
            for item in site.node.items  # type: ignore[attr-defined]
        }
        for tape_call in tape_calls(ctx, frozenset({"gradient"})):
            target = positional(tape_call.call, 0) or keyword(tape_call.call, "target")
            with_node = with_of_item.get(id(tape_call.binding.node))
            if target is None or not isinstance(with_node, ast.With):
                continue
            end = with_node.end_lineno or with_node.lineno
            region = (with_node.lineno, end)
            scope = tape_call.site.scope
            where = "" if scope.function is None else f" in `{scope.function.name}`"
            action = f"`{tape_call.tape_name}.gradient`{where} differentiates {{it}}"
            self._add(target, scope, region, _Reason(action))

    def _minimize_calls(self) -> None:
        for site in self.ctx.calls_named("minimize"):
            call = site.node
            assert isinstance(call, ast.Call)
            func = call.func
            if not isinstance(func, ast.Attribute) or self._is_module(func.value, site):
                continue  # ``scipy.optimize.minimize``: not an optimizer's method
            loss = positional(call, 0) or keyword(call, "loss")
            if loss is not None:
                action = f"`{self.ctx.short(func, 40)}` minimises {{it}}"
                self._add_loss_argument(loss, site, action)

    def _compile_calls(self) -> None:
        for site in self.ctx.calls_named("compile"):
            call = site.node
            assert isinstance(call, ast.Call)
            func = call.func
            if not isinstance(func, ast.Attribute) or self._is_module(func.value, site):
                continue  # ``re.compile``
            loss = keyword(call, "loss") or positional(call, 1)
            if loss is None:
                continue
            losses = (
                list(loss.values)
                if isinstance(loss, ast.Dict)
                else list(loss.elts)
                if isinstance(loss, (ast.List, ast.Tuple))
                else [loss]
            )
            action = f"`{self.ctx.short(func.value, 30)}.compile(loss=...)` trains on {{it}}"
            for each in losses:
                if each is not None:
                    self._add_loss_argument(each, site, action)

    def _add_loss_calls(self) -> None:
        for site in self.ctx.calls_named("add_loss"):
            call = site.node
            assert isinstance(call, ast.Call)
            loss = positional(call, 0)
            if loss is not None and isinstance(call.func, ast.Attribute):
                action = f"`{self.ctx.short(call.func, 40)}` adds {{it}} to the loss"
                self._add_loss_argument(loss, site, action)

    def _loss_methods(self) -> None:
        """``call`` of a Keras ``Loss`` subclass; ``compute_loss`` of any class of the file
        (Keras calls a model's ``compute_loss`` for the loss it trains on)."""
        for scope in self.ctx.model.scopes:
            if scope.kind != "class":
                continue
            is_loss = self._is_loss_class(scope)
            for method in ("call", "compute_loss") if is_loss else ("compute_loss",):
                for binding in scope.bindings.get(method, ()):
                    if binding.kind != "def":
                        continue
                    label = f"{scope.name}.{method}"
                    if method == "call":
                        action = f"`{scope.name}` is a Keras loss: training minimises {{it}}"
                    else:
                        action = "Keras trains the model on {it}"
                    self._add_function(binding.node, _Reason(action, label))

    def _is_loss_class(self, class_scope: Scope) -> bool:
        pending, seen = [class_scope], set()
        while pending and len(seen) < 20:
            current = pending.pop()
            node = current.node
            if id(current) in seen or not isinstance(node, ast.ClassDef):
                continue
            seen.add(id(current))
            for base in node.bases:
                canonical = self.ctx.imports.resolve(base) or ""
                if canonical.endswith(".losses.Loss") or canonical == "tf.keras.losses.Loss":
                    return True
                if isinstance(base, ast.Name) and current.parent is not None:
                    parent = self.ctx.bindings.names.class_named(
                        current.parent, base, current.definition_path
                    )
                    if parent is not None:
                        pending.append(parent)
        return False

    def _is_module(self, node: ast.expr, site: Site) -> bool:
        parts = dotted_parts(node)
        if parts is None:
            return False
        resolution = self.ctx.bindings.names.resolve(
            site.scope, parts[0], (node.lineno, node.col_offset), site.path
        )
        return resolution is not None and all(b.kind == "import" for b in resolution.bindings)

    def _add_loss_argument(self, loss: ast.expr, site: Site, action: str) -> None:
        """A loss passed by value, as a lambda, or as a function of the file."""
        if isinstance(loss, ast.Lambda):
            self._add(loss.body, site.scope, None, _Reason(action))
            return
        definition = self._definition(loss, site)
        if definition is not None:
            name = definition.name  # type: ignore[attr-defined]
            self._add_function(definition, _Reason(action, name))
            return
        self._add(loss, site.scope, None, _Reason(action))

    def _definition(self, func: ast.expr, site: Site) -> ast.AST | None:
        """The ``def`` of this file a name (or ``self.method``) refers to."""
        ctx = self.ctx
        if isinstance(func, ast.Name):
            resolution = ctx.bindings.names.resolve(
                site.scope, func.id, (func.lineno, func.col_offset), site.path
            )
            if resolution is None or len(resolution.bindings) != 1:
                return None
            binding = resolution.bindings[0]
            return binding.node if binding.kind == "def" else None
        function = site.scope.function
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and function is not None
            and function.self_name == func.value.id
            and function.class_scope is not None
        ):
            binding = ctx.bindings.names.method_binding(function.class_scope, func.attr)
            return binding.node if binding is not None and binding.kind == "def" else None
        return None

    def _add(
        self,
        expression: ast.expr,
        scope: Scope,
        region: tuple[int, int] | None,
        reason: _Reason,
    ) -> None:
        self._pending.append((expression, scope, region, reason))

    def _add_function(self, definition: ast.AST, reason: _Reason, item: int | None = None) -> None:
        """What a function returns (only its ``item``-th value, when the caller unpacks the
        returned tuple and keeps one name of it)."""
        key = (id(definition), item)
        if key in self._functions_done or (id(definition), None) in self._functions_done:
            return
        self._functions_done.add(key)
        scope = self._scopes.get(id(definition))
        if scope is None:
            return
        for node in own_nodes(definition):
            if not isinstance(node, ast.Return) or node.value is None:
                continue
            value = node.value
            if item is not None and isinstance(value, ast.Tuple) and item < len(value.elts):
                value = value.elts[item]
            self._add(value, scope, None, reason)

    # Following values ----------------------------------------------------------------

    def _follow(self) -> None:
        seen_bindings: set[int] = set()
        while self._pending:
            expression, scope, region, reason = self._pending.pop()
            if id(expression) in self.reasons:
                continue
            for node in ast.walk(expression):
                if id(node) in self.reasons:
                    continue
                self.reasons[id(node)] = reason
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    owner = scope.parent if scope.kind == "lambda" else scope
                    for binding in owner.bindings.get(node.id, ()) if owner else ():
                        if id(binding) in seen_bindings:
                            continue
                        line = binding.node.lineno  # type: ignore[attr-defined]
                        if region is not None and not region[0] < line <= region[1]:
                            continue  # computed outside the tape: not recorded
                        seen_bindings.add(id(binding))
                        self._follow_binding(binding, owner, region, reason)
                elif isinstance(node, ast.Call):
                    site = self._call_sites.get(id(node))
                    definition = None if site is None else self._definition(node.func, site)
                    if definition is not None:
                        name = definition.name  # type: ignore[attr-defined]
                        self._add_function(definition, _Reason(reason.action, name))

    def _follow_binding(
        self, binding: Binding, scope: Scope, region: tuple[int, int] | None, reason: _Reason
    ) -> None:
        """The value an assignment gives a name; for ``loss, aux = f(x)``, the arguments
        and only the item of ``f``'s returned tuple that the name takes."""
        node = binding.node
        if binding.kind in ("assign", "augassign"):
            value = binding.value
            if value is None and isinstance(node, ast.Assign):
                value = node.value
            if value is not None:
                self._add(value, scope, region, reason)
            return
        if binding.kind != "unpack" or not isinstance(node, ast.Assign):
            return
        value = node.value
        target = node.targets[0] if len(node.targets) == 1 else None
        site = self._call_sites.get(id(value))
        definition = None if site is None else self._definition(value.func, site)  # type: ignore[attr-defined]
        names = [t.id if isinstance(t, ast.Name) else None for t in getattr(target, "elts", ())]
        if definition is None or binding.name not in names or not isinstance(value, ast.Call):
            self._add(value, scope, region, reason)
            return
        for argument in [*value.args, *(k.value for k in value.keywords)]:
            self._add(argument, scope, region, reason)
        name = definition.name  # type: ignore[attr-defined]
        self._add_function(definition, _Reason(reason.action, name), names.index(binding.name))


# -- the finding ---------------------------------------------------------------------


def _square_text(ctx: RuleContext, candidate: _Candidate) -> str:
    """``d`` squared, spelled with the learner's square call or their reduction's module."""
    reduced_text = ctx.text(candidate.reduced)
    if candidate.square_callee is not None:
        return f"{ctx.text(candidate.square_callee)}({reduced_text})"
    func = candidate.reduction.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in _SQUARE_OF
        and candidate.reduction.args
        and candidate.reduced is candidate.reduction.args[0]
        and dotted_parts(func) is not None
    ):
        return f"{ctx.text(func.value)}.{_SQUARE_OF[func.attr]}({reduced_text})"
    return f"{parenthesized(reduced_text, candidate.reduced)} ** 2"


def _fixed_text(ctx: RuleContext, candidate: _Candidate) -> str:
    reduction = candidate.reduction
    call_text = ctx.text(reduction)
    reduced_text = ctx.text(candidate.reduced)
    func = reduction.func
    if isinstance(func, ast.Attribute) and func.value is candidate.reduced:
        # ``(a - b).mean()`` -> ``((a - b) ** 2).mean()``
        method = call_text[call_text.rindex(f".{func.attr}") :]
        return f"({parenthesized(reduced_text, candidate.reduced)} ** 2){method}"
    callee_length = len(ctx.text(func))
    start = call_text.index(reduced_text, callee_length)
    squared = _square_text(ctx, candidate)
    return call_text[:start] + squared + call_text[start + len(reduced_text) :]


def _finding(ctx: RuleContext, candidate: _Candidate, reason: _Reason) -> Finding:
    written = ctx.short(candidate.outer, 60)
    replacement = _fixed_text(ctx, candidate)
    left = ctx.short(candidate.left, 30)
    right = ctx.short(candidate.right, 30)
    bound = ""
    if isinstance(candidate.reduced, ast.Name):
        bound = f" (`{candidate.reduced.id}` is `{left} - {right}`)"
    what = "sum" if "sum" in ctx.text(candidate.reduction.func) else "mean"
    message = (
        f"`{written}` squares the {what} of the differences{bound}: positive and negative "
        f"differences cancel in the {what}, so this loss is 0 whenever `{left}` and "
        f"`{right}` agree on average, and minimising it only matches their {what}s. It is "
        f"minimised here: {reason.text()}. The {what} of the squared differences is "
        f"`{replacement}`"
    )
    fix = Fix(
        "Square the differences inside the reduction",
        (ctx.replace(candidate.outer, replacement),),
    )
    return ctx.finding(CODE, candidate.outer, message, fix=fix)
