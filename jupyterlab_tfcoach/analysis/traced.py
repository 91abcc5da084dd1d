"""Which code runs while a tf.function traces: the functions that are tf.functions
(decorated, or wrapped later by ``f = tf.function(f)``), the scopes of their own bodies,
and the plain functions those bodies call directly (helpers). Code in an
``if tf.executing_eagerly():`` branch never runs in the graph.

Two more kinds of function are traced without a ``tf.function`` in sight (``TraceReach.by``):

- Keras methods. Keras 3 runs ``Layer.call`` and ``Model.train_step`` / ``test_step`` /
  ``predict_step`` inside a tf.function when a compiled model's ``fit`` / ``evaluate`` /
  ``predict`` run with the default ``run_eagerly=False`` (measured, Keras 3.15 on TF 2.21:
  a ``print`` in ``call`` ran 3 times in 2 epochs of 8 steps; 17 times with
  ``run_eagerly=True``). Statically, "compiled" is: the file calls ``<name>.compile(...)``
  without ``run_eagerly=True`` (and sets no ``<name>.run_eagerly = True``, calls no
  ``tf.config.run_functions_eagerly(True)``). A ``keras.Model`` subclass (any alias,
  ``tf.keras`` too, or a subclass of such a class of the file) is traced when an instance
  of it is so compiled, or when a model of unknown class is and no instance of it is
  compiled eagerly; a ``keras.Layer`` subclass's ``call`` is traced when any model of the
  file is compiled so (the layer is in practice part of it). The same methods of a class
  whose only compiled models run eagerly, and every other method (``__init__``, ``build``),
  are not traced.

  A compiled model's class is known from the name it is compiled under: ``m = C(...)``
  with a class ``C`` of the file; Keras's own ``m = keras.Sequential(...)`` /
  ``keras.Model(inputs, outputs)``; or ``m = build()``, a function of the file that returns
  one of those (``return C(...)``, or a local name bound to such calls). A class such a
  function names is the one the name holds when the function is called: for a function
  defined and called at module level, the class bound before the call (a notebook that
  redefines ``C`` between ``m = build()`` calls compiles each version in turn). A model of
  Keras's own class traces the ``call`` of the file's model subclasses (one may be nested
  in it as a layer), never their ``train_step`` / ``test_step`` / ``predict_step``: its
  ``fit`` runs Keras's own.

  A class none of whose instances can join a model is traced by none: the file only calls
  them at module level on concrete values, or throws their result away
  (``Probe()(tf.ones((2, 3)))``, ``eager_instances.py``).
- ``Dataset.map`` functions: the function (a ``def`` or a ``lambda``) that ``map`` /
  ``filter`` / ``flat_map`` of a ``tf.data`` dataset gets is always traced once, by tf.data.

Rules about graph-time pitfalls (``print``, Python side effects, ``.numpy()``, variables
created per trace) ask this module where they are. Neighbours: ``resolution.py`` tells
which ``def`` a name or a ``tf.function(f)`` argument is bound to; ``bindings.py`` gives a
decorated ``def`` its ``TF_FUNCTION`` value from ``tf_function_defs``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from jupyterlab_tfcoach.analysis.arguments import keyword, positional
from jupyterlab_tfcoach.analysis.eager_instances import EagerInstances
from jupyterlab_tfcoach.analysis.imports import TFImports
from jupyterlab_tfcoach.analysis.model import Model, Path, Position, Scope, Site
from jupyterlab_tfcoach.analysis.resolution import NameResolver
from jupyterlab_tfcoach.analysis.values import TF_FUNCTION, Value

# ``TraceReach.by``: what traces the function.
BY_TF_FUNCTION = "tf.function"
BY_KERAS = "keras"  # a compiled Keras model's fit / evaluate / predict
BY_DATASET = "dataset"  # ``Dataset.map`` and its kin

# Keras base classes by their canonical names (``imports.py``: ``keras.X`` is ``tf.keras.X``).
_KERAS_LAYERS = frozenset({"tf.keras.Layer", "tf.keras.layers.Layer"})
_KERAS_MODELS = frozenset(
    {"tf.keras.Model", "tf.keras.models.Model", "tf.keras.Sequential", "tf.keras.models.Sequential"}
)
# The methods Keras runs inside its train / test / predict functions.
_LAYER_TRACED = frozenset({"call"})
_MODEL_TRACED = frozenset({"call", "train_step", "test_step", "predict_step"})
_PREDICT_TRACED = frozenset({"call", "predict_step"})
# Model methods that trace the model without a compile first (Keras 3).
_PREDICTING = ("predict", "predict_on_batch")
# ``tf.data.Dataset`` methods whose function argument tf.data traces.
_DATASET_TRACING = ("map", "filter", "flat_map")
_DATASET_FACTORIES = ("tf.data.", "tf.keras.utils.")  # ``image_dataset_from_directory``
_MAX_BASES = 40  # classes visited up a chain of bases, as ``resolution.method_binding``


# ``TracedCode._model_class``: a model of Keras's own class (``keras.Sequential(...)``).
_KERAS_OWN = "keras"


@dataclass
class _Compiled:
    """What the file's ``compile(...)`` calls say: classes of the file compiled to trace
    (``graph``) or to run eagerly, and whether a model of Keras's own class
    (``keras_graph``) or of unknown class (``unknown_graph``) is compiled to trace."""

    graph: set[Scope] = field(default_factory=set)
    eager: set[Scope] = field(default_factory=set)
    # Classes of the file whose ``predict`` runs traced without a compile (Keras 3 traces
    # ``predict_step`` and ``call`` in a tf.function; ``train_step`` never runs).
    predicted: set[Scope] = field(default_factory=set)
    # Names a ``compile(..., run_eagerly=True)`` was called on: their ``predict`` is eager.
    eager_receivers: set[str] = field(default_factory=set)
    keras_graph: bool = False
    unknown_graph: bool = False


@dataclass(frozen=True)
class TraceReach:
    """Code that runs while ``function`` traces: its own body, or the body of ``helper``, a
    plain function it calls directly. ``by``: what makes ``function`` traced (a
    ``tf.function``, Keras, ``Dataset.map``)."""

    function: Scope
    helper: Scope | None = None
    by: str = BY_TF_FUNCTION


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
        self._roots: dict[Scope, TraceReach] | None = None
        self._keras_classes: dict[Scope, str | None] = {}
        self._def_scopes: dict[ast.AST, Scope] | None = None
        self._eager_instances = EagerInstances(model, names)
        self._factory_returns: dict[ast.AST, list[ast.expr] | None] = {}

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
        roots, helpers = self.roots(), self.traced_helpers()
        for scope in self.model.scopes:
            function = scope.function
            if function is None:
                continue
            if function not in reach_of:
                reach_of[function] = roots.get(function) or helpers.get(function)
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
        roots = self.roots()
        if not roots:
            return found
        scope_of_def = {s.node: s for s in self.model.scopes if s.kind == "function"}
        # The scopes that run as part of a traced function's own body (comprehensions in it
        # included), found once per scope; calls elsewhere are skipped with one lookup.
        bodies: dict[Scope, TraceReach] = {}
        for scope in self.model.scopes:
            function = scope.function
            if function is not None and function in roots:
                bodies[scope] = roots[function]
        if not bodies:
            return found
        # A helper is called by its ``def``'s own name (``helper(x)``, ``self.helper(x)``):
        # only calls by those names are looked at. Each name's calls are in walk order, so
        # a helper still gets the first tf.function that calls it.
        def_names = {site.node.name for site in self.model.defs}  # type: ignore[attr-defined]
        calls_by_name = self.model.calls_by_name
        for site in (site for name in def_names for site in calls_by_name.get(name, ())):
            root = bodies.get(site.scope)
            if root is None:
                continue
            func = site.node.func  # type: ignore[attr-defined]
            if in_eager_only_branch(self.imports, site.path):
                continue  # an eager-only branch never runs while tracing
            for definition in self._called_defs(func, site, root.function):
                if definition in tf_defs or definition.decorator_list:  # type: ignore[attr-defined]
                    continue
                helper = scope_of_def.get(definition)
                if helper is not None and helper not in found and helper not in roots:
                    found[helper] = TraceReach(root.function, helper, root.by)
        return found

    # -- what is traced without a tf.function ---------------------------------------

    def roots(self) -> dict[Scope, TraceReach]:
        """Every function traced by itself: tf.functions, the Keras methods a compiled
        model traces, and ``Dataset.map`` functions (the module docstring says which);
        a tf.function wins over the others. Computed once."""
        if self._roots is not None:
            return self._roots
        found: dict[Scope, TraceReach] = {}
        self._roots = found
        tf_defs = self.tf_function_defs()
        function_scopes = [s for s in self.model.scopes if s.kind in ("function", "lambda")]
        for scope in function_scopes:
            if scope.kind == "function" and scope.node in tf_defs:
                found[scope] = TraceReach(scope)
        if not self.imports.names:
            return found
        for scope in self._keras_traced_methods():
            found.setdefault(scope, TraceReach(scope, by=BY_KERAS))
        mapped = self._dataset_functions()
        if mapped:
            for scope in function_scopes:
                if scope.node in mapped:
                    found.setdefault(scope, TraceReach(scope, by=BY_DATASET))
        return found

    def keras_class_kind(self, class_scope: Scope) -> str | None:
        """``"model"`` / ``"layer"`` for a class deriving a Keras ``Model`` / ``Layer``
        (under any alias, or through classes of this file); None for any other class."""
        if class_scope in self._keras_classes:
            return self._keras_classes[class_scope]
        kind: str | None = None
        seen: set[int] = set()
        pending = [class_scope]
        while pending and kind != "model" and len(seen) <= _MAX_BASES:
            current = pending.pop()
            if id(current) in seen or not isinstance(current.node, ast.ClassDef):
                continue
            seen.add(id(current))
            for base in current.node.bases:
                canonical = self.imports.resolve(base)
                if canonical in _KERAS_MODELS:
                    kind = "model"
                elif canonical in _KERAS_LAYERS:
                    kind = kind or "layer"
                elif isinstance(base, ast.Name) and current.parent is not None:
                    parent_class = self.names.class_named(
                        current.parent, base, current.definition_path
                    )
                    if parent_class is not None:
                        pending.append(parent_class)
        self._keras_classes[class_scope] = kind
        return kind

    def _keras_traced_methods(self) -> list[Scope]:
        """The ``call`` / ``train_step`` / ... scopes a compiled model traces."""
        classes = [
            (scope, kind)
            for scope in self.model.scopes
            if scope.kind == "class" and (kind := self.keras_class_kind(scope)) is not None
        ]
        if not classes:
            return []
        compiled = self._compiled_classes()
        graph, eager = compiled.graph, compiled.eager
        # Only Keras models of the file: ``clf.predict`` of another class says nothing.
        predicted = compiled.predicted & {scope for scope, kind in classes if kind == "model"}
        if not (graph or predicted or compiled.unknown_graph or compiled.keras_graph):
            return []
        traced: list[ast.AST] = []
        for class_scope, kind in classes:
            if (
                class_scope not in graph
                and class_scope not in predicted
                and self._eager_instances.stays_eager(class_scope)
            ):
                continue  # only ever run eagerly on sample values: in no compiled model
            if kind == "model":
                if class_scope in graph or (compiled.unknown_graph and class_scope not in eager):
                    methods = _MODEL_TRACED
                elif class_scope in predicted:
                    methods = _PREDICT_TRACED
                elif compiled.keras_graph and class_scope not in eager:
                    methods = _LAYER_TRACED  # nested in a Sequential / functional model
                else:
                    continue
            else:
                methods = _LAYER_TRACED
            for name in methods:
                for binding in class_scope.bindings.get(name, ()):
                    if binding.kind == "def":
                        traced.append(binding.node)
        wanted = {id(node) for node in traced}
        return [s for s in self.model.scopes if s.kind == "function" and id(s.node) in wanted]

    def _compiled_classes(self) -> _Compiled:
        """Classes of this file whose instances are compiled to run traced / eagerly, and
        whether a model of Keras's own class or of unknown class (one an imported function
        returns) is compiled to run traced."""
        compiled = _Compiled()
        if any(
            _is_true(positional(site.node, 0) or keyword(site.node, "run_eagerly"))  # type: ignore[arg-type]
            for site in self.names.calls_to("tf.config.run_functions_eagerly")
        ):
            return compiled  # every function runs eagerly
        compiles = self.model.calls_by_name.get("compile", ())
        eager_names = self._run_eagerly_names() if compiles else frozenset()
        for site in compiles:
            call = site.node
            assert isinstance(call, ast.Call)
            receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
            if receiver is None or self._names_a_module(receiver, site):
                continue  # ``re.compile(...)``: not a model
            flag = keyword(call, "run_eagerly")
            runs_eagerly = _is_true(flag) or (
                isinstance(receiver, ast.Name) and receiver.id in eager_names
            )
            if flag is not None and not runs_eagerly and not _is_false(flag):
                if isinstance(receiver, ast.Name):
                    compiled.eager_receivers.add(receiver.id)  # not known: not predicted
                continue  # ``run_eagerly=debug``: not known
            if runs_eagerly and isinstance(receiver, ast.Name):
                compiled.eager_receivers.add(receiver.id)
            model_class = (
                self._model_class(site.scope, receiver, site.path)
                if isinstance(receiver, ast.Name)
                else None
            )
            if isinstance(model_class, Scope):
                (compiled.eager if runs_eagerly else compiled.graph).add(model_class)
            elif not runs_eagerly:
                if model_class == _KERAS_OWN:
                    compiled.keras_graph = True
                else:
                    compiled.unknown_graph = True
        self._predicted_classes(compiled)
        return compiled

    def _predicted_classes(self, compiled: _Compiled) -> None:
        """Models of the file, or of Keras's own classes, that ``predict`` runs (traced,
        compiled or not) unless they are set to run eagerly. Only a receiver known to hold
        such a model counts: ``clf.predict(x)`` of another library is never one."""
        eager_names = self._run_eagerly_names()
        for method in _PREDICTING:
            for site in self.model.calls_by_name.get(method, ()):
                call = site.node
                assert isinstance(call, ast.Call)
                receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
                if not isinstance(receiver, ast.Name):
                    continue
                if receiver.id in eager_names or receiver.id in compiled.eager_receivers:
                    continue
                model_class = self._model_class(site.scope, receiver, site.path)
                if isinstance(model_class, Scope):
                    if model_class not in compiled.eager:
                        compiled.predicted.add(model_class)
                elif model_class == _KERAS_OWN:
                    compiled.keras_graph = True

    def _model_class(self, scope: Scope, name: ast.Name, path: Path) -> Scope | str | None:
        """The class of the model read at ``name``: a class scope of this file, ``_KERAS_OWN``
        (``keras.Sequential(...)``, ``keras.Model(inputs, outputs)``), or None: unknown.
        Each binding that may reach the read must be ``name = <a call giving that class>``
        (a constructor, or a function of this file that returns one, ``_factory_class``)."""
        resolution = self.names.resolve(scope, name.id, (name.lineno, name.col_offset), path)
        if resolution is None or not resolution.bindings:
            return None
        found: Scope | str | None = None
        for binding in resolution.bindings:
            created = binding.value
            if binding.kind != "assign" or not isinstance(created, ast.Call):
                return None
            made = self._made_by(created, binding.value_scope, binding.path, factory_depth=0)
            if made is None or (found is not None and made is not found):
                return None
            found = made
        return found

    def _made_by(
        self, call: ast.Call, scope: Scope, path: Path, factory_depth: int
    ) -> Scope | str | None:
        """The class of the model ``call`` makes, read in ``scope``; None: unknown."""
        canonical = self.imports.resolve(call.func)
        if canonical is not None:
            return _KERAS_OWN if canonical in _KERAS_MODELS else None
        if not isinstance(call.func, ast.Name):
            return None
        class_scope = self.names.class_named(scope, call.func, path)
        if class_scope is not None:
            return class_scope
        if factory_depth:
            return None  # a factory calling a factory: not followed
        return self._factory_class(call, scope, path)

    def _factory_class(self, call: ast.Call, scope: Scope, path: Path) -> Scope | str | None:
        """``build()``, a ``def`` of this file whose every ``return`` gives a model of one
        class: ``return C(...)``, or a name of the function bound only to such calls."""
        func = call.func
        assert isinstance(func, ast.Name)
        resolution = self.names.resolve(scope, func.id, (func.lineno, func.col_offset), path)
        if resolution is None or len(resolution.bindings) != 1:
            return None
        definition = resolution.bindings[0]
        factory = self._scope_of_def(definition.node) if definition.kind == "def" else None
        if factory is None:
            return None
        # A global the factory reads holds, while it runs, what it holds at the call: the
        # class bound before the call, when both the def and the call are at module level.
        called_at = (scope, (func.lineno, func.col_offset), path)
        at_call = called_at if factory.parent is self.model.module is scope else None
        found: Scope | str | None = None
        node = factory.node
        if node not in self._factory_returns:  # each def walked once, however often called
            self._factory_returns[node] = _returns(node)  # type: ignore[arg-type]
        returns = self._factory_returns[node]
        if not returns:
            return None
        for returned in returns:
            if isinstance(returned, ast.Name):
                made_by = self._local_model_class(factory, returned.id, at_call)
            elif isinstance(returned, ast.Call):
                made_by = self._made_in_factory(returned, factory, (), at_call)
            else:
                return None
            if made_by is None or (found is not None and made_by is not found):
                return None
            found = made_by
        return found

    def _local_model_class(
        self, factory: Scope, name: str, at_call: tuple[Scope, Position, Path] | None
    ) -> Scope | str | None:
        """The one class the factory's local ``name`` is made of (every binding of it a
        call making that class); None otherwise."""
        bindings = factory.bindings.get(name, ())
        found: Scope | str | None = None
        for binding in bindings:
            created = binding.value
            if binding.kind != "assign" or not isinstance(created, ast.Call):
                return None
            made = self._made_in_factory(created, factory, binding.path, at_call)
            if made is None or (found is not None and made is not found):
                return None
            found = made
        return found

    def _made_in_factory(
        self,
        call: ast.Call,
        factory: Scope,
        path: Path,
        at_call: tuple[Scope, Position, Path] | None,
    ) -> Scope | str | None:
        func = call.func
        if (
            at_call is not None
            and isinstance(func, ast.Name)
            and self.imports.resolve(func) is None
            and func.id not in factory.bindings
            and func.id not in factory.global_names
        ):
            call_scope, position, call_path = at_call
            resolution = self.names.resolve(call_scope, func.id, position, call_path)
            if resolution is None or len(resolution.bindings) != 1:
                return None
            binding = resolution.bindings[0]
            return self.names.class_scope_of(binding.node) if binding.kind == "class" else None
        return self._made_by(call, factory, path, factory_depth=1)

    def _scope_of_def(self, node: ast.AST) -> Scope | None:
        if self._def_scopes is None:
            self._def_scopes = {s.node: s for s in self.model.scopes if s.kind == "function"}
        return self._def_scopes.get(node)

    def _run_eagerly_names(self) -> frozenset[str]:
        """Names whose model is set to run eagerly: ``model.run_eagerly = True``."""
        names = set()
        for site in self.model.assignments:
            statement = site.node
            # Type tests first: most assignments are dismissed by their value's type.
            value = getattr(statement, "value", None)
            if type(value) is not ast.Constant or value.value is not True:  # type: ignore[union-attr]
                continue
            if type(statement) is not ast.Assign:
                continue  # ``flag: bool = True``, ``n += True``: no ``targets``
            for target in statement.targets:  # type: ignore[attr-defined]
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr == "run_eagerly"
                    and isinstance(target.value, ast.Name)
                ):
                    names.add(target.value.id)
        return frozenset(names)

    def _names_a_module(self, receiver: ast.expr, site: Site) -> bool:
        root = receiver
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        resolution = self.names.resolve(
            site.scope, root.id, (root.lineno, root.col_offset), site.path
        )
        return resolution is not None and any(b.kind == "import" for b in resolution.bindings)

    def _dataset_functions(self) -> set[ast.AST]:
        """The ``def`` / ``lambda`` nodes handed to ``map`` / ``filter`` / ``flat_map`` of a
        ``tf.data`` dataset (``tf.data.Dataset...`` in the chain, or a name bound to one)."""
        found: set[ast.AST] = set()
        for name in _DATASET_TRACING:
            for site in self.model.calls_by_name.get(name, ()):
                call = site.node
                assert isinstance(call, ast.Call)
                func = call.func
                if not isinstance(func, ast.Attribute):
                    continue
                mapped = (
                    positional(call, 0) or keyword(call, "map_func") or keyword(call, "predicate")
                )
                if mapped is None or not self._is_dataset(func.value, site, 0):
                    continue
                if isinstance(mapped, ast.Lambda):
                    found.add(mapped)
                elif isinstance(mapped, ast.Name):
                    position = (mapped.lineno, mapped.col_offset)
                    resolution = self.names.resolve(site.scope, mapped.id, position, site.path)
                    bindings = resolution.bindings if resolution is not None else ()
                    if bindings and all(b.kind == "def" for b in bindings):
                        found.update(b.node for b in bindings)
        return found

    def _is_dataset(self, node: ast.expr, site: Site, depth: int) -> bool:
        """``tf.data.Dataset.range(3).batch(2)``, or a name bound only to such chains."""
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            canonical = self.imports.resolve(node.func)
            if canonical is not None:
                return canonical.startswith(_DATASET_FACTORIES)
            node = node.func.value  # a method of the chain: ``.batch(2)``
        if isinstance(node, ast.Call):
            canonical = self.imports.resolve(node.func)
            return canonical is not None and canonical.startswith(_DATASET_FACTORIES)
        if not isinstance(node, ast.Name) or depth > 2:
            return False
        resolution = self.names.resolve(
            site.scope, node.id, (node.lineno, node.col_offset), site.path
        )
        if resolution is None or not resolution.bindings:
            return False
        return all(
            b.kind == "assign"
            and b.value is not None
            and self._is_dataset(b.value, Site(b.node, b.value_scope, b.path), depth + 1)
            for b in resolution.bindings
        )

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


def _returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr] | None:
    """The values of a function's own ``return`` statements (not those of nested defs,
    classes or lambdas); None when one returns nothing or it is a generator."""
    found: list[ast.expr] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(node, ast.Return):
            if node.value is None:
                return None
            found.append(node.value)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _is_false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


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
