"""TFC013: a Python iterator made outside a tf.function and consumed inside it.

Two ways in, one check each for ``next(it)``, ``for v in it`` and ``list(it)`` /
``tuple(it)`` in a tf.function's own body: ``it`` is captured (bound outside the function,
or ``self.it`` set by the class's methods), or ``it`` is a parameter and a call of the
tf.function passes a Python iterator for it (TensorFlow's own ``guide/function`` example,
``buggy_consume_next(iterator)``; a method called as ``self.step(it)`` / ``obj.step(it)``
too). What is a Python iterator is decided by ``_IteratorFinder``
from how the value is made in the file; anything it cannot tell (a loader, a dataset, an
argument of unknown origin) is not one, so the rule says nothing about it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, replace

from jupyterlab_tfcoach.analysis.arguments import keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, RelatedLocation, Severity
from jupyterlab_tfcoach.analysis.model import Binding, Path, Scope, Site
from jupyterlab_tfcoach.analysis.resolution import Resolution
from jupyterlab_tfcoach.analysis.rules._common import function_label, in_eager_only_branch
from jupyterlab_tfcoach.analysis.values import FUNCTION, PY_CONTAINER, TF_FUNCTION

CODE = "TFC013"
NAME = "python-iterator-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "python-iterators"

DOCS = """
## What it does
Flags `next(it)`, `for` loops over `it`, and `list(it)` / `tuple(it)` (which drain it),
inside a `tf.function` when `it` is a Python iterator created outside the function: captured
from the code around it (or kept on the instance, `self.it = iter([...])` in a method, then
`next(self.it)` in a `tf.function` method), or passed in as an argument
(`step(iter([1, 2, 3]))` for a `step(iterator)` that calls `next(iterator)`).

Python iterators are `iter(...)` of a list, tuple, `range` or other Python collection, a
generator expression over one, `enumerate` / `zip` / `map` / `filter` / `reversed` over them,
an `itertools` iterator (`itertools.count()`, `itertools.cycle([...])`), or a call of a
generator function (a `def` with `yield`) defined in the same file.

An argument is looked at in every call of the `tf.function` by a name bound to it (the
decorated function's name, or `step = tf.function(f)`), where it fills the parameter by
position or by keyword; the finding is at the `next` or the loop, with each such call as a
related location. A `tf.function` method is looked at in its calls `self.step(it)` from the
class's methods and `obj.step(it)` for `obj = Cls(...)`. Other calls through an attribute,
calls with `*args` / `**kwargs` in the way, and functions with an `input_signature` (a
Python iterator fails to bind there, with a `TypeError`) are not looked at.

Iterators over a `tf.data.Dataset` (`it = iter(dataset)`) are not reported: they are TensorFlow
resources, and `next(it)` in a `tf.function` fetches a new element on every call. Nor are
iterators created inside the function, lists, tuples and ranges (a loop over one is unrolled
over its items, which is what it looks like; `list(range(n))` and `tuple(sizes)` copy
them), generators passed to a plain function, or values of unknown type.

## Why is this bad?
A `tf.function` runs its Python body only while tracing, so a Python iterator is advanced only
then. The item it returned is copied into the graph as a constant, and every later call runs
that graph again: the function sees the first item every time, and the iterator stays where
tracing left it. A `for` loop over the iterator is unrolled over the items it yielded during
the trace; a retrace takes the next items, or finds the iterator used up and runs the loop
zero times. Nothing raises and nothing warns.

Passed as an argument, a Python iterator is part of the call's signature by identity: calls
with the same iterator reuse the graph, and so the item, that its first call traced, and each
new iterator object traces a new graph.

## Example
```python
batches = iter([1.0, 2.0, 3.0])

@tf.function
def step():
    return tf.constant(next(batches)) * 2    # 2.0 on every call

@tf.function
def step_on(iterator):
    return tf.constant(next(iterator)) * 2

numbers = iter([1.0, 2.0, 3.0])
print([float(step_on(numbers)) for _ in range(3)])  # [2.0, 2.0, 2.0]
```

## Use instead
Iterate over a `tf.data` dataset, whose iterator is advanced by the graph itself, captured or
passed in; or call `next()` outside and pass the item in as a tensor:

```python
batches = iter(tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0]))

@tf.function
def step():
    return next(batches) * 2                 # 2.0, 4.0, 6.0

@tf.function
def step_on(iterator):
    return next(iterator) * 2

numbers = iter(tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0]))
print([float(step_on(numbers)) for _ in range(3)])  # [2.0, 4.0, 6.0]

@tf.function
def step_on_item(item):
    return item * 2                          # one trace: every item is a float32 scalar

python_numbers = iter([1.0, 2.0, 3.0])
print([float(step_on_item(tf.constant(next(python_numbers)))) for _ in range(3)])
```

Keras 3: `model.fit(generator)` (a Python generator or a `keras.utils.PyDataset`) is not this
pitfall: Keras pulls each batch in Python and hands the traced train step tensors. The pitfall
is back in a custom training loop that passes the generator itself to a `tf.function`.

## Course module
Module 2, *Python iterators are read while tracing* (`python-iterators`).
"""

_COLLECTION_BUILTINS = frozenset({"range", "list", "tuple", "sorted", "set", "frozenset", "dict"})
# Builtins that return an iterator over their iterable arguments.
_ITERATOR_BUILTINS = frozenset({"iter", "enumerate", "zip", "map", "filter", "reversed"})
# Iterator makers whose first argument is a function, not an iterable.
_FUNCTION_FIRST = frozenset({"map", "filter", "starmap", "filterfalse", "takewhile", "dropwhile"})
_COLLECTION_LITERALS = (
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
)
# How far a chain of names (``it = iter(xs)``, ``xs = ys``) is followed.
_MAX_DEPTH = 8


class _IteratorFinder:
    """Tells Python iterators (and the Python collections they run over) from anything else.

    Everything unknown counts as "not a Python iterator": a name that may hold a dataset must
    stay silent. Answers are cached per binding and per ``def``.
    """

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self._generator_defs: dict[ast.AST, bool] = {}
        self._iterator_bindings: dict[int, bool] = {}
        self._collection_bindings: dict[int, bool] = {}

    # -- names ----------------------------------------------------------------

    def _bindings(self, name: ast.Name, scope: Scope, path: Path) -> tuple[Binding, ...]:
        resolution = self.ctx.bindings.names.resolve(
            scope, name.id, (name.lineno, name.col_offset), path
        )
        return resolution.bindings if resolution is not None else ()

    def builtin(self, node: ast.expr, scope: Scope, path: Path) -> str | None:
        if not isinstance(node, ast.Name):
            return None
        if self.ctx.bindings.names.is_builtin(scope, node.id, (node.lineno, node.col_offset), path):
            return node.id
        return None

    def _itertools_function(self, func: ast.expr, scope: Scope, path: Path) -> str | None:
        """``itertools.count`` / ``it.count`` / ``count`` imported from itertools -> ``count``."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            local = func.value
            bindings = self._bindings(local, scope, path)
            imported = bool(bindings) and all(
                isinstance(b.node, ast.Import)
                and any(
                    a.name == "itertools" and (a.asname or a.name) == local.id for a in b.node.names
                )
                for b in bindings
            )
            return func.attr if imported else None
        if not isinstance(func, ast.Name):
            return None
        names: set[str] = set()
        for binding in self._bindings(func, scope, path):
            statement = binding.node
            if (
                not isinstance(statement, ast.ImportFrom)
                or statement.module != "itertools"
                or statement.level
            ):
                return None
            names.update(a.name for a in statement.names if (a.asname or a.name) == func.id)
        return names.pop() if len(names) == 1 else None

    # -- generator functions --------------------------------------------------

    def _is_generator_def(self, node: ast.AST) -> bool:
        cached = self._generator_defs.get(node)
        if cached is not None:
            return cached
        found = False
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack: list[ast.AST] = list(node.body)
            while stack and not found:
                current = stack.pop()
                if isinstance(current, (ast.Yield, ast.YieldFrom)):
                    found = True
                elif not isinstance(
                    current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
                ):
                    stack.extend(ast.iter_child_nodes(current))
        self._generator_defs[node] = found
        return found

    # -- values ---------------------------------------------------------------

    def is_collection(self, node: ast.expr, scope: Scope, path: Path, depth: int = 0) -> bool:
        """A Python collection (or iterator) whose items Python produces: a literal, a
        ``range``, a list or dict built in the file, a string."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, _COLLECTION_LITERALS):
            return True
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (str, bytes))
        if isinstance(node, ast.Call):
            if self.builtin(node.func, scope, path) in _COLLECTION_BUILTINS:
                return True
            return self.is_iterator(node, scope, path, depth + 1)
        if isinstance(node, ast.GeneratorExp):
            return self.is_iterator(node, scope, path, depth + 1)
        if isinstance(node, ast.Name):
            if self.ctx.bindings.infer(node, scope, path).kind == PY_CONTAINER:
                return True
            bindings = self._bindings(node, scope, path)
            return bool(bindings) and all(
                self._binding_is(binding, self._collection_bindings, depth, collection=True)
                for binding in bindings
            )
        return False

    def is_iterator(self, node: ast.expr, scope: Scope, path: Path, depth: int = 0) -> bool:
        """A Python iterator object: consuming it runs Python code that keeps its own state."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, ast.GeneratorExp):
            # Its first iterable is evaluated where the expression is: over a dataset, the
            # generator would hand out a TensorFlow iterator's elements, which is fine.
            source = node.generators[0].iter
            return self.is_collection(source, scope, path, depth + 1)
        if isinstance(node, (ast.Name, ast.Attribute)):
            bindings = (
                self._bindings(node, scope, path)
                if isinstance(node, ast.Name)
                # ``self.batches``: every ``self.batches = ...`` of the class's methods
                else tuple(self.ctx.bindings.names.self_attribute_bindings(node, scope) or ())
            )
            return bool(bindings) and all(
                self._binding_is(binding, self._iterator_bindings, depth, collection=False)
                for binding in bindings
            )
        if not isinstance(node, ast.Call):
            return False
        builtin = self.builtin(node.func, scope, path)
        if builtin in _ITERATOR_BUILTINS:
            if builtin == "iter" and len(node.args) != 1:
                return False  # ``iter(callable, sentinel)``
            return self._arguments_are_python(node, builtin, scope, path, depth)
        itertools_function = self._itertools_function(node.func, scope, path)
        if itertools_function is not None:
            return self._arguments_are_python(node, itertools_function, scope, path, depth)
        if isinstance(node.func, ast.Name):
            callee = self.ctx.bindings.infer(node.func, scope, path)
            return (
                callee.kind == FUNCTION
                and callee.node is not None
                and self._is_generator_def(callee.node)
            )
        return False

    def _arguments_are_python(
        self, call: ast.Call, maker: str, scope: Scope, path: Path, depth: int
    ) -> bool:
        """Every iterable argument of ``maker(...)`` is a Python collection; numbers are fine
        (``itertools.count(1)``), anything unknown is not."""
        arguments = call.args[1:] if maker in _FUNCTION_FIRST else call.args
        for argument in arguments:
            if isinstance(argument, ast.Starred):
                return False
            if isinstance(argument, ast.Constant) and isinstance(argument.value, (int, float)):
                continue
            if not self.is_collection(argument, scope, path, depth + 1):
                return False
        return True

    def _binding_is(
        self, binding: Binding, cache: dict[int, bool], depth: int, *, collection: bool
    ) -> bool:
        key = id(binding)
        cached = cache.get(key)
        if cached is not None:
            return cached
        cache[key] = False  # a name defined through itself (``it = chain(it)``) is unknown
        answer = False
        if binding.kind == "assign" and binding.value is not None:
            check = self.is_collection if collection else self.is_iterator
            answer = check(binding.value, binding.value_scope, binding.path, depth + 1)
        cache[key] = answer
        return answer


@dataclass(frozen=True)
class _Passed:
    """A call of a tf.function that passes a Python iterator for one of its parameters."""

    call: ast.Call
    argument: ast.expr


class _PassedIterators:
    """Which calls of a tf.function pass a Python iterator for a parameter.

    Only calls by a name that is bound to the tf.function are found: the decorated
    ``def``'s own name, or a name bound to ``tf.function(f)``; for a method,
    ``self.step(it)`` in the class's methods and ``obj.step(it)`` with ``obj = Cls(...)``.
    Other calls through an attribute, with ``*args`` / ``**kwargs`` in the way, or of a
    tf.function with an ``input_signature`` (a Python iterator fails to bind there, loudly)
    are left out.
    """

    def __init__(self, ctx: RuleContext, finder: _IteratorFinder) -> None:
        self.ctx = ctx
        self.finder = finder
        self._calls: dict[ast.AST, list[tuple[ast.Call, Site]]] = {}
        self._passing: dict[ast.arg, list[_Passed]] = {}
        self._related: dict[ast.arg, tuple[RelatedLocation, ...]] = {}
        self._wrapper_names: frozenset[str] | None = None

    def parameter(self, resolution: Resolution, function: Scope) -> ast.arg | None:
        """The parameter of ``function`` that a read resolved to ``resolution`` reads, if the
        body never rebinds it (``it = iter(it)`` makes the read's value unknown)."""
        if resolution.owner is not function or len(resolution.bindings) != 1:
            return None  # a comprehension's own ``it``, or more than one binding reaches
        binding = resolution.bindings[0]
        bindings = function.bindings.get(binding.name, ())
        if binding.kind != "param" or len(bindings) != 1:
            return None
        parameter = binding.node
        arguments = function.node.args  # type: ignore[attr-defined]
        if parameter is arguments.vararg or parameter is arguments.kwarg:
            return None  # ``*iterators``: which argument it is, is not known
        assert isinstance(parameter, ast.arg)
        return parameter

    def passing(self, function: Scope, parameter: ast.arg) -> list[_Passed]:
        """The calls of tf.function ``function`` that pass a Python iterator for
        ``parameter``, in source order."""
        cached = self._passing.get(parameter)
        if cached is not None:
            return cached
        passed = []
        for call, site in self._calls_of(function):
            # A method called through its instance: ``self`` is not among the arguments.
            bound = isinstance(call.func, ast.Attribute)
            argument = _argument_for(call, function.node, parameter, bound)  # type: ignore[arg-type]
            if argument is not None and self.finder.is_iterator(argument, site.scope, site.path):
                passed.append(_Passed(call, argument))
        self._passing[parameter] = passed
        return passed

    def related(self, parameter: ast.arg, passed: list[_Passed]) -> tuple[RelatedLocation, ...]:
        cached = self._related.get(parameter)
        if cached is None:
            cached = self._related[parameter] = _related(self.ctx, parameter, passed)
        return cached

    def _calls_of(self, function: Scope) -> list[tuple[ast.Call, Site]]:
        definition = function.node
        cached = self._calls.get(definition)
        if cached is not None:
            return cached
        found: list[tuple[ast.Call, Site]] = []
        self._calls[definition] = found
        ctx = self.ctx
        names = {function.name} | self._names_bound_to_tf_function()
        sites = [site for name in names for site in ctx.model.calls_by_name.get(name, ())]
        sites.sort(key=lambda site: (site.node.lineno, site.node.col_offset))  # type: ignore[attr-defined]
        for site in sites:
            call = site.node
            assert isinstance(call, ast.Call)
            if isinstance(call.func, ast.Attribute):
                if self._calls_method(call.func, site, function):
                    found.append((call, site))
                continue
            if not isinstance(call.func, ast.Name):
                continue
            callee = ctx.value(call.func, site)
            if (
                callee.kind == TF_FUNCTION
                and callee.node is definition
                and not _has_input_signature(callee.creator)
            ):
                found.append((call, site))
        return found

    def _calls_method(self, func: ast.Attribute, site: Site, function: Scope) -> bool:
        """``self.step(...)`` in a method of the tf.function method's class, or
        ``trainer.step(...)`` with ``trainer = Trainer(...)``: a call of ``function``, a
        decorated method (without an ``input_signature``) that the class does not rebind."""
        class_scope = function.class_scope
        if (
            class_scope is None
            or func.attr != function.name
            or not isinstance(func.value, ast.Name)
            or func.attr in class_scope.attr_bindings  # ``self.step = ...`` per instance
            or _is_static(function.node)
        ):
            return False
        caller = site.scope.function
        if caller is not None and func.value.id == caller.self_name:
            receiver_class = caller.class_scope
        else:
            receiver_class = self.ctx.bindings.names.instance_class(
                site.scope, func.value, site.path
            )
        if receiver_class is None:
            return False
        binding = self.ctx.bindings.names.method_binding(receiver_class, func.attr)
        if binding is None or binding.node is not function.node:
            return False
        decorators = getattr(function.node, "decorator_list", ())
        return not any(_has_input_signature(decorator) for decorator in decorators)

    def _names_bound_to_tf_function(self) -> frozenset[str]:
        """Names assigned a ``tf.function(...)`` call anywhere in the file."""
        if self._wrapper_names is None:
            resolve = self.ctx.imports.resolve
            self._wrapper_names = frozenset(
                binding.name
                for binding in self.ctx.model.call_assignments
                if resolve(binding.value.func) == "tf.function"  # type: ignore[union-attr]
            )
        return self._wrapper_names


def _is_static(definition: ast.AST) -> bool:
    return any(
        isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod")
        for decorator in getattr(definition, "decorator_list", ())
    )


def _has_input_signature(creator: ast.AST | None) -> bool:
    """``tf.function(input_signature=...)`` / ``tf.function(f, [spec])``: arguments must be
    tensors; a Python iterator raises ``TypeError`` at the call."""
    if not isinstance(creator, ast.Call):
        return False
    signature = keyword(creator, "input_signature")
    return signature is not None or len(creator.args) > 1


def _argument_for(
    call: ast.Call,
    definition: ast.FunctionDef | ast.AsyncFunctionDef,
    parameter: ast.arg,
    bound: bool = False,
) -> ast.expr | None:
    """The expression ``call`` passes for ``parameter`` of ``definition``, if the call's
    syntax tells (a ``*args`` before it, or only a ``**kwargs`` for it, does not);
    ``bound``: a method called through an instance, whose ``self`` the call does not pass."""
    arguments = definition.args
    if parameter not in arguments.posonlyargs:
        passed = keyword(call, parameter.arg)
        if passed is not None:
            return passed
    positionals = [*arguments.posonlyargs, *arguments.args][1 if bound else 0 :]
    if parameter not in positionals:
        return None  # keyword-only, and not passed by keyword
    return positional(call, positionals.index(parameter))


def _resolution(finder: _IteratorFinder, name: ast.Name, site: Site) -> Resolution | None:
    return finder.ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )


def _as_parameter(ctx: RuleContext, passed: _Passed, parameter: ast.arg) -> str:
    """``Python iterator `batches` as `iterator```; without ``as`` when the names agree."""
    shown = ctx.short(passed.argument)
    named = "" if shown == parameter.arg else f" as `{parameter.arg}`"
    return f"Python iterator `{shown}`{named}"


def _related(
    ctx: RuleContext, parameter: ast.arg, passed: list[_Passed]
) -> tuple[RelatedLocation, ...]:
    """Every call site that passes a Python iterator for the parameter, at its argument."""
    related = []
    for call in passed:
        span = ctx.range_of(call.argument)
        related.append(
            RelatedLocation(
                span.line,
                span.column,
                span.end_line,
                span.end_column,
                f"`{ctx.short(call.call)}` passes {_as_parameter(ctx, call, parameter)}",
            )
        )
    return tuple(related)


def _parameter_finding(
    ctx: RuleContext,
    where: ast.AST,
    use: str,
    function: Scope,
    parameter: ast.arg,
    passed: list[_Passed],
    related: tuple[RelatedLocation, ...],
) -> Finding:
    """A finding at ``where``, the use (``next(it)``, a loop) of a parameter that some call
    fills with a Python iterator; every such call comes along as a related location
    (``related``, built once per parameter: a body may use it many times)."""
    first = passed[0]
    message = (
        f"{use} in tf.function {function_label(function)} runs only while tracing, and "
        f"`{ctx.short(first.call)}` passes {_as_parameter(ctx, first, parameter)}: each new "
        "iterator traces again, and calls with the same one reuse what tracing took from it "
        "(pass a tf.data iterator, or call `next()` outside and pass the item)"
    )
    return replace(ctx.finding(CODE, where, message), related=related)


def _iterator_use(
    finder: _IteratorFinder,
    parameters: _PassedIterators,
    site: Site,
    function: Scope,
    iterator: ast.expr,
    where: ast.AST,
    captured: str,
    use: str,
) -> Iterator[Finding]:
    """One use of ``iterator`` (``next(it)``, ``for v in it``, ``list(it)``) in the traced
    ``function``: a Python iterator it captures (message ``captured``; ``self.it`` set by
    the class's methods is captured too), or a parameter that some call fills with one
    (the use said as ``use``, the calls as related locations)."""
    ctx = finder.ctx
    if isinstance(iterator, ast.Attribute):
        if finder.is_iterator(iterator, site.scope, site.path):
            yield ctx.finding(CODE, where, captured)
        return
    if not isinstance(iterator, ast.Name):
        return
    resolution = _resolution(finder, iterator, site)
    if resolution is None:
        return
    if resolution.owner.function is not function:
        if finder.is_iterator(iterator, site.scope, site.path):
            yield ctx.finding(CODE, where, captured)
        return
    parameter = parameters.parameter(resolution, function)
    passed = parameters.passing(function, parameter) if parameter is not None else []
    if parameter is not None and passed:
        related = parameters.related(parameter, passed)
        yield _parameter_finding(ctx, where, use, function, parameter, passed, related)


# Builtins that drain an iterator into a collection (``list(batches)``).
_MATERIALISING = ("list", "tuple")


def _names_an_iterator(node: ast.expr, function: Scope) -> bool:
    """``it``, or ``self.it`` in a method: what an iterator is looked up by."""
    if isinstance(node, ast.Name):
        return True
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and function.self_name is not None
        and node.value.id == function.self_name
    )


def check(ctx: RuleContext) -> Iterator[Finding]:
    finder = _IteratorFinder(ctx)
    parameters = _PassedIterators(ctx, finder)
    for site in ctx.calls_named("next"):
        call = site.node
        assert isinstance(call, ast.Call)
        function = ctx.tf_function_body(site.scope)
        if function is None or not call.args or in_eager_only_branch(ctx.imports, site.path):
            continue
        if finder.builtin(call.func, site.scope, site.path) != "next":
            continue
        iterator = call.args[0]
        if not _names_an_iterator(iterator, function):
            continue
        captured = (
            f"`{ctx.short(call)}` in tf.function {function_label(function)} advances "
            f"Python iterator `{ctx.short(iterator)}` only while tracing: every call "
            "of the graph reuses the item it got then"
        )
        use = f"`{ctx.short(call)}`"
        yield from _iterator_use(finder, parameters, site, function, iterator, call, captured, use)
    for site in ctx.calls_named(*_MATERIALISING):
        call = site.node
        assert isinstance(call, ast.Call)
        if len(call.args) != 1 or call.keywords:
            continue
        function = ctx.tf_function_body(site.scope)
        iterator = call.args[0]
        if (
            function is None
            or not _names_an_iterator(iterator, function)
            or finder.builtin(call.func, site.scope, site.path) not in _MATERIALISING
            or in_eager_only_branch(ctx.imports, site.path)
        ):
            continue
        captured = (
            f"`{ctx.short(call)}` in tf.function {function_label(function)} drains Python "
            f"iterator `{ctx.short(iterator)}` only while tracing: every call of the graph "
            "reuses the items it got then, and a retrace finds it used up"
        )
        use = f"`{ctx.short(call)}`"
        yield from _iterator_use(finder, parameters, site, function, iterator, call, captured, use)
    for site in ctx.model.loops:
        loop = site.node
        assert isinstance(loop, (ast.For, ast.AsyncFor))
        function = ctx.tf_function_body(site.scope)
        iterable = loop.iter
        if (
            function is None
            or not _names_an_iterator(iterable, function)
            or in_eager_only_branch(ctx.imports, site.path)
        ):
            continue
        captured = (
            f"`for` loop over Python iterator `{ctx.short(iterable)}` in tf.function "
            f"{function_label(function)} runs only while tracing: every call of the "
            "graph reuses the items it got then"
        )
        use = f"`for` loop over parameter `{ctx.short(iterable)}`"
        yield from _iterator_use(
            finder, parameters, site, function, iterable, iterable, captured, use
        )
