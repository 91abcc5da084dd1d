"""Which code runs while a tf.function traces: the functions that are tf.functions
(decorated, or wrapped later by ``f = tf.function(f)``), the scopes of their own bodies,
and the plain functions those bodies call directly (helpers). Code in an
``if tf.executing_eagerly():`` branch never runs in the graph.

Rules about graph-time pitfalls (``print``, Python side effects, ``.numpy()``, variables
created per trace) ask this module where they are. Neighbours: ``resolution.py`` tells
which ``def`` a name or a ``tf.function(f)`` argument is bound to; ``bindings.py`` gives a
decorated ``def`` its ``TF_FUNCTION`` value from ``tf_function_defs``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis.imports import TFImports
from jupyterlab_tfcoach.analysis.model import Model, Path, Scope, Site
from jupyterlab_tfcoach.analysis.resolution import NameResolver
from jupyterlab_tfcoach.analysis.values import TF_FUNCTION, Value


@dataclass(frozen=True)
class TraceReach:
    """Code that runs while ``function`` (a tf.function) traces: its own body, or the body
    of ``helper``, a plain function it calls directly."""

    function: Scope
    helper: Scope | None = None


class TracedCode:
    """The tf.functions of a ``Model`` and the code their traces run, each found once."""

    def __init__(self, model: Model, names: NameResolver) -> None:
        self.model = model
        self.imports = model.imports
        self.names = names
        self._tf_function_defs: dict[ast.AST, Value] | None = None
        self._tf_bodies: dict[int, Scope | None] = {}
        self._traced_helpers: dict[Scope, TraceReach] | None = None
        self._traced_scopes: dict[Scope, TraceReach] | None = None

    def tf_function_defs(self) -> dict[ast.AST, Value]:
        """Every ``def`` that is a tf.function, decorated or wrapped later in the file."""
        if self._tf_function_defs is not None:
            return self._tf_function_defs
        found: dict[ast.AST, Value] = {}
        self._tf_function_defs = found
        for site in self.model.defs:
            node = site.node
            for decorator in node.decorator_list:  # type: ignore[attr-defined]
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if self.imports.resolve(target) == "tf.function":
                    found[node] = Value(TF_FUNCTION, node=node, creator=decorator)
                    break
        for site in self.names.calls_to("tf.function"):
            call = site.node
            assert isinstance(call, ast.Call)
            if not call.args or not isinstance(call.args[0], ast.Name):
                continue
            name = call.args[0]
            resolution = self.names.resolve(
                site.scope, name.id, (name.lineno, name.col_offset), site.path
            )
            if resolution is None:
                continue
            for binding in resolution.bindings:
                if binding.kind == "def" and binding.node not in found:
                    found[binding.node] = Value(TF_FUNCTION, node=binding.node, creator=call)
        return found

    def tf_function_body(self, scope: Scope) -> Scope | None:
        """The tf.function whose own body (not a nested def or lambda) contains ``scope``."""
        key = id(scope)
        if key in self._tf_bodies:
            return self._tf_bodies[key]
        function = scope.function
        is_tf_function = (
            function is not None
            and function.kind == "function"
            and function.node in self.tf_function_defs()
        )
        body = function if is_tf_function else None
        self._tf_bodies[key] = body
        return body

    def trace_reach(self, scope: Scope) -> TraceReach | None:
        """Whose trace runs the code in ``scope``: a tf.function's own body, or a plain
        function that such a body calls directly (see ``traced_helpers``); None: neither."""
        return self.traced_scopes().get(scope)

    def traced_scopes(self) -> dict[Scope, TraceReach]:
        """``trace_reach`` of every scope that has one, computed once: rules that visit
        every call or assignment test each with one dictionary lookup."""
        if self._traced_scopes is not None:
            return self._traced_scopes
        found: dict[Scope, TraceReach] = {}
        reach_of: dict[Scope, TraceReach | None] = {}  # per function; its inner scopes share it
        tf_defs, helpers = self.tf_function_defs(), self.traced_helpers()
        for scope in self.model.scopes:
            function = scope.function
            if function is None:
                continue
            if function not in reach_of:
                if function.kind == "function" and function.node in tf_defs:
                    reach_of[function] = TraceReach(function)
                else:
                    reach_of[function] = helpers.get(function)
            reach = reach_of[function]
            if reach is not None:
                found[scope] = reach
        self._traced_scopes = found
        return found

    def traced_helpers(self) -> dict[Scope, TraceReach]:
        """Plain functions that a tf.function's own body calls, each with the first such
        tf.function in source order.

        ``helper(x)`` whose name resolves only to ``def`` statements (nested in the
        tf.function, in an enclosing function or at module level), or ``self.helper(x)``
        in a tf.function method naming a method of the same class. Their bodies run
        while the caller traces. One level only: what a helper calls is not followed, and
        a def that is only passed along (``tf.py_function(helper, ...)``) is not called
        in the trace. Decorated defs are left out: a decorator (``tf.numpy_function``,
        a cache) may change when the body runs. Computed once, from the call index.
        """
        if self._traced_helpers is not None:
            return self._traced_helpers
        found: dict[Scope, TraceReach] = {}
        self._traced_helpers = found
        tf_defs = self.tf_function_defs()
        scope_of_def = {s.node: s for s in self.model.scopes if s.kind == "function"}
        # The scopes that run as part of a tf.function's own body (comprehensions in it
        # included), found once per scope; calls elsewhere are skipped with one lookup.
        bodies: dict[Scope, Scope] = {}
        for scope in self.model.scopes:
            function = scope.function  # as ``tf_function_body``, without a call per scope
            if function is not None and function.kind == "function" and function.node in tf_defs:
                bodies[scope] = function
        if not bodies:
            return found
        # A helper is called by its ``def``'s own name (``helper(x)``, ``self.helper(x)``):
        # only calls by those names are looked at. Each name's calls are in walk order, so
        # a helper still gets the first tf.function that calls it.
        def_names = {site.node.name for site in self.model.defs}  # type: ignore[attr-defined]
        calls_by_name = self.model.calls_by_name
        for site in (site for name in def_names for site in calls_by_name.get(name, ())):
            function = bodies.get(site.scope)
            if function is None:
                continue
            func = site.node.func  # type: ignore[attr-defined]
            if in_eager_only_branch(self.imports, site.path):
                continue  # an eager-only branch never runs while tracing
            for definition in self._called_defs(func, site, function):
                if definition in tf_defs or definition.decorator_list:  # type: ignore[attr-defined]
                    continue
                helper = scope_of_def.get(definition)
                if helper is not None and helper not in found:
                    found[helper] = TraceReach(function, helper)
        return found

    def _called_defs(self, func: ast.expr, site: Site, function: Scope) -> list[ast.AST]:
        """The ``def`` statements a call's callee (``helper`` / ``self.helper``) may be."""
        if isinstance(func, ast.Name):
            position = (func.lineno, func.col_offset)
            resolution = self.names.resolve(site.scope, func.id, position, site.path)
            bindings = resolution.bindings if resolution is not None else ()
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == function.self_name
            and function.class_scope is not None
            and func.attr not in function.class_scope.attr_bindings  # not set per instance
        ):
            bindings = tuple(function.class_scope.bindings.get(func.attr, ()))
        else:
            return []
        if not bindings or any(b.kind != "def" for b in bindings):
            return []  # rebound to something else somewhere: not known to be this def
        return [b.node for b in bindings]


# Calls that are true only when a tf.function body runs eagerly (``run_functions_eagerly``).
_EAGER_CHECKS = frozenset({"tf.executing_eagerly", "tf.config.functions_run_eagerly"})


def _eager_check(imports: TFImports, test: ast.expr) -> bool:
    return isinstance(test, ast.Call) and imports.resolve(test.func) in _EAGER_CHECKS


def in_eager_only_branch(imports: TFImports, path: Path) -> bool:
    """Inside ``if tf.executing_eagerly():`` (or the ``else`` of its negation).

    While tracing the test is False, so that code never runs in the graph: eager-only
    debugging there (``print``, ``.numpy()``) is correct.
    """
    for block in path:
        owner = block.owner
        if block.kind != "if" or not isinstance(owner, ast.If):
            continue
        test = owner.test
        if block.branch == 0 and _eager_check(imports, test):
            return True
        if (
            block.branch == 1
            and isinstance(test, ast.UnaryOp)
            and isinstance(test.op, ast.Not)
            and _eager_check(imports, test.operand)
        ):
            return True
    return False
