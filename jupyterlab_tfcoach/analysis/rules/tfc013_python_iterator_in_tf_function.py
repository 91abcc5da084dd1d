"""TFC013: a Python iterator made outside a tf.function and consumed inside it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Severity
from jupyterlab_tfcoach.analysis.model import Binding, Path, Scope, Site
from jupyterlab_tfcoach.analysis.rules._common import function_label, in_eager_only_branch
from jupyterlab_tfcoach.analysis.values import FUNCTION, PY_CONTAINER

CODE = "TFC013"
NAME = "python-iterator-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "python-iterators"

DOCS = """
## What it does
Flags `next(it)`, and `for` loops over `it`, inside a `tf.function` when `it` is a Python
iterator created outside the function.

Python iterators are `iter(...)` of a list, tuple, `range` or other Python collection, a
generator expression over one, `enumerate` / `zip` / `map` / `filter` / `reversed` over them,
an `itertools` iterator (`itertools.count()`, `itertools.cycle([...])`), or a call of a
generator function (a `def` with `yield`) defined in the same file.

Iterators over a `tf.data.Dataset` (`it = iter(dataset)`) are not reported: they are TensorFlow
resources, and `next(it)` in a `tf.function` fetches a new element on every call. Nor are
iterators created inside the function, or values of unknown type.

## Why is this bad?
A `tf.function` runs its Python body only while tracing, so a Python iterator is advanced only
then. The item it returned is copied into the graph as a constant, and every later call runs
that graph again: the function sees the first item every time, and the iterator stays where
tracing left it. A `for` loop over the iterator is unrolled over the items it yielded during
the trace; a retrace takes the next items, or finds the iterator used up and runs the loop
zero times. Nothing raises and nothing warns.

## Example
```python
batches = iter([1.0, 2.0, 3.0])

@tf.function
def step():
    return tf.constant(next(batches)) * 2   # 2.0 on every call
```

## Use instead
Pass the item in as a tensor argument, or iterate over a `tf.data` dataset, whose iterator is
advanced by the graph itself:

```python
batches = iter(tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0]))

@tf.function
def step():
    return next(batches) * 2                 # 2.0, 4.0, 6.0
```

## Course module
Module 1, *Python iterators are read while tracing* (`python-iterators`).
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
        if isinstance(node, ast.Name):
            bindings = self._bindings(node, scope, path)
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


def _outer_iterator(finder: _IteratorFinder, name: ast.expr, site: Site, function: Scope) -> bool:
    """``name`` is bound outside ``function`` (not a local, not a parameter) to a Python
    iterator."""
    if not isinstance(name, ast.Name):
        return False
    resolution = finder.ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    if resolution is None or resolution.owner.function is function:
        return False
    return finder.is_iterator(name, site.scope, site.path)


def check(ctx: RuleContext) -> Iterator[Finding]:
    finder = _IteratorFinder(ctx)
    for site in ctx.calls_named("next"):
        call = site.node
        assert isinstance(call, ast.Call)
        function = ctx.tf_function_body(site.scope)
        if function is None or not call.args or in_eager_only_branch(ctx.imports, site.path):
            continue
        if finder.builtin(call.func, site.scope, site.path) != "next":
            continue
        iterator = call.args[0]
        if _outer_iterator(finder, iterator, site, function):
            yield ctx.finding(
                CODE,
                call,
                f"`{ctx.short(call)}` in tf.function {function_label(function)} advances "
                f"Python iterator `{ctx.short(iterator)}` only while tracing: every call of "
                "the graph reuses the item it got then",
            )
    for site in ctx.model.loops:
        loop = site.node
        assert isinstance(loop, (ast.For, ast.AsyncFor))
        function = ctx.tf_function_body(site.scope)
        if function is None or in_eager_only_branch(ctx.imports, site.path):
            continue
        if _outer_iterator(finder, loop.iter, site, function):
            yield ctx.finding(
                CODE,
                loop.iter,
                f"`for` loop over Python iterator `{ctx.short(loop.iter)}` in tf.function "
                f"{function_label(function)} runs only while tracing: every call of the graph "
                "reuses the items it got then",
            )
