"""Keras classes of a file that never become part of a model: every instance the file makes
is only called, at module level, on concrete values (or its result is thrown away).

A compiled model's ``fit`` traces the ``call()`` of the layers it holds (``traced.py``). A
layer gets into a model only through a reference to it: listed in ``keras.Sequential``,
stored as an attribute of another layer, passed to a function, or called on symbolic tensors
whose outputs build a functional model. A class none of whose instances can go any of those
ways is only ever run eagerly by this file, so its ``call()`` is not traced by the models it
compiles. That is the usual way to debug a layer: run it once on a sample tensor, with
``print`` in ``call()`` (``Probe()(tf.ones((2, 3)))``).

What counts, per class ``C`` (a ``class`` statement; resolution is per binding, so a
notebook that redefines ``C`` judges each version by the calls that reach it):

- every read of the name ``C`` anywhere in the file is a call ``C(...)`` (a base class, an
  ``isinstance`` test, a list of classes, a decorator on ``C`` may let instances escape);
- each ``C(...)`` that may make this version is called at once, ``C(...)(args)``, or bound
  to a name ``v`` (``v = C(...)``) that is only read as ``v(args)`` or ``v.attr``;
- each such call ``(args)`` is at module level (it runs eagerly) and either its result is
  thrown away (an expression statement, ``_ = ...``) or every argument is concrete:
  literals, NumPy calls, TensorFlow / Keras calls (``tf.ones``, ``keras.random.normal``, but
  not ``keras.Input``) on concrete arguments, or names bound at module level to such values.

Anything else (a class instantiated in a function, an instance stored on ``self``, passed
along, called on a name of unknown value) leaves the class to ``traced.py``'s rules, which
ask this module only in files that compile a model and define Keras classes. The reads of
names are collected by one walk of the tree, and only once some class has passed the tests
that the model's own indexes answer (``EagerInstances``).
"""

from __future__ import annotations

import ast

from jupyterlab_tfcoach.analysis.model import Binding, Model, Scope, Site
from jupyterlab_tfcoach.analysis.nesting import NOT_CHILD_FIELDS
from jupyterlab_tfcoach.analysis.resolution import UNRESOLVED, NameResolver

# Calls that make a symbolic tensor: what a functional model is built from.
_SYMBOLIC_SOURCES = frozenset({"tf.keras.Input", "tf.keras.layers.Input"})
_MAX_DEPTH = 3  # names followed to their values (``x = ...; y = x; C()(y)``)
# Node type -> the fields that may hold child nodes, filled as types are met.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


class EagerInstances:
    """Which Keras classes of a ``Model`` stay out of every model (module docstring).

    Two phases, so that a file pays for a walk of its tree only when a class may qualify:
    first each ``C(...)`` call that may make the class is judged from the indexes the model
    already has (calls, assignments, module-level statements); only when every one passes
    are the file's name reads collected, once, to see that ``C`` and the names bound to its
    instances are read in no other way."""

    def __init__(self, model: Model, names: NameResolver) -> None:
        self.model = model
        self.names = names
        self.imports = model.imports
        self._sites: dict[int, Site] | None = None  # id(call) -> its site
        self._called: dict[int, ast.Call] = {}  # id(call) -> ``call(...)`` made of its result
        self._assigned: dict[int, ast.Assign] = {}  # id(value) -> ``name = value``
        self._dropped: set[int] = set()  # ids of module-level values thrown away
        # Name -> (read, its parent) for every name read in the file: the one walk.
        self._reads: dict[str, list[tuple[ast.Name, ast.AST]]] | None = None

    def stays_eager(self, class_scope: Scope) -> bool:
        """True when every instance of ``class_scope`` is only called eagerly."""
        class_def = class_scope.node
        if not isinstance(class_def, ast.ClassDef) or class_def.decorator_list:
            return False
        owner = class_scope.parent
        if owner is None:
            return False
        binding = next(
            (b for b in owner.bindings.get(class_def.name, ()) if b.node is class_def), None
        )
        if binding is None:
            return False
        creations = [
            site
            for site in self.model.calls_by_name.get(class_def.name, ())
            if isinstance(site.node.func, ast.Name)  # type: ignore[attr-defined]
        ]
        if any(site.scope is not self.model.module for site in creations):
            return False  # made in a function: its instances are not followed (cheap test)
        self._index_calls()
        instances: list[tuple[str, Binding]] = []
        for site in creations:
            call = site.node
            assert isinstance(call, ast.Call)
            read = call.func
            assert isinstance(read, ast.Name)
            if not self._may_read(site, read, binding):
                continue  # another class of the same name
            outer = self._called.get(id(call))
            if outer is not None:
                if not self._eager_call(outer, site):
                    return False
                continue
            instance = self._instance_binding(call, site)
            if instance is None:
                return False  # listed, passed along, stored on ``self``: it may join a model
            instances.append(instance)
        reads = self._name_reads()
        if any(
            not (isinstance(parent, ast.Call) and parent.func is read)
            for read, parent in reads.get(class_def.name, ())
        ):
            return False  # a base class, ``isinstance``, a list of classes: not followed
        return all(self._instance_uses_eager(name, bound) for name, bound in instances)

    # -- one instance ------------------------------------------------------------

    def _instance_binding(self, creation: ast.Call, site: Site) -> tuple[str, Binding] | None:
        """``v = C(...)``: the name and its binding; None for any other use of the call."""
        statement = self._assigned.get(id(creation))
        if statement is None or len(statement.targets) != 1:
            return None
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            return None
        bound = next(
            (b for b in site.scope.bindings.get(target.id, ()) if b.node is statement), None
        )
        return (target.id, bound) if bound is not None else None

    def _instance_uses_eager(self, name: str, instance: Binding) -> bool:
        for read, parent in self._name_reads().get(name, ()):
            if isinstance(parent, ast.Attribute) and parent.value is read:
                continue  # ``v.summary()``, ``v.weights``: the instance stays where it is
            if not (isinstance(parent, ast.Call) and parent.func is read):
                return False  # passed along, listed, returned: it may join a model
            site = self._site(parent)
            if site is None:
                return False
            if self._may_read(site, read, instance) and not self._eager_call(parent, site):
                return False
        return True

    def _eager_call(self, call: ast.Call, site: Site) -> bool:
        """``instance(args)`` at module level, thrown away or on concrete arguments."""
        if site.scope is not self.model.module:
            return False  # a function may run inside a model's trace
        if id(call) in self._dropped:
            return True
        arguments = [*call.args, *(k.value for k in call.keywords)]
        return all(self._concrete(a, site, 0) for a in arguments)

    def _concrete(self, node: ast.expr, site: Site, depth: int) -> bool:
        """A value that is no symbolic tensor, computed eagerly at module level."""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(self._concrete(e, site, depth) for e in node.elts)
        if isinstance(node, ast.UnaryOp):
            return self._concrete(node.operand, site, depth)
        if isinstance(node, ast.Attribute):
            return self.imports.resolve(node) is not None  # ``tf.float32``
        if isinstance(node, ast.Call):
            return self._concrete_call(node, site, depth)
        if isinstance(node, ast.Name) and depth < _MAX_DEPTH:
            resolution = self.names.resolve(
                site.scope, node.id, (node.lineno, node.col_offset), site.path
            )
            if resolution is None or not resolution.bindings:
                return False
            return all(
                b.kind == "assign"
                and b.value is not None
                and b.value_scope is self.model.module
                and self._concrete(b.value, Site(b.node, b.value_scope, b.path), depth + 1)
                for b in resolution.bindings
            )
        return False

    def _concrete_call(self, call: ast.Call, site: Site, depth: int) -> bool:
        if self._is_numpy(call.func, site):
            return True  # NumPy never makes a symbolic tensor
        canonical = self.imports.resolve(call.func)
        if canonical is None or canonical in _SYMBOLIC_SOURCES:
            return False
        arguments = [*call.args, *(k.value for k in call.keywords)]
        return all(self._concrete(a, site, depth) for a in arguments)

    def _is_numpy(self, func: ast.expr, site: Site) -> bool:
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if root is func or not isinstance(root, ast.Name):
            return False
        resolution = self.names.resolve(
            site.scope, root.id, (root.lineno, root.col_offset), site.path
        )
        if resolution is None or not resolution.bindings:
            return False
        for binding in resolution.bindings:
            statement = binding.node
            if binding.kind != "import" or not isinstance(statement, ast.Import):
                return False
            if not any(
                (alias.asname or alias.name) == root.id and alias.name == "numpy"
                for alias in statement.names
            ):
                return False
        return True

    # -- the file's reads ----------------------------------------------------------

    def _may_read(self, site: Site, read: ast.Name, binding: Binding) -> bool:
        """Whether ``binding`` may be what ``read`` (in ``site``'s scope) sees."""
        resolution = self.names.resolve(
            site.scope, read.id, (read.lineno, read.col_offset), site.path
        )
        if resolution is None:
            return False
        return any(b is binding or b.kind == UNRESOLVED for b in resolution.bindings)

    def _site(self, call: ast.Call) -> Site | None:
        if self._sites is None:
            self._sites = {id(site.node): site for site in self.model.calls}
        return self._sites.get(id(call))

    def _index_calls(self) -> None:
        """Calls of a call's result, assigned values and dropped module-level values,
        from the model's own indexes (no walk of the expressions)."""
        if self._sites is not None:
            return
        self._sites = {}
        for site in self.model.calls:
            call = site.node
            self._sites[id(call)] = site
            if type(call.func) is ast.Call:  # type: ignore[attr-defined]
                self._called[id(call.func)] = call  # type: ignore[attr-defined, assignment]
        for site in self.model.assignments:
            statement = site.node
            if type(statement) is ast.Assign:
                self._assigned[id(statement.value)] = statement  # type: ignore[attr-defined]
                if site.scope is self.model.module and all(
                    isinstance(t, ast.Name) and t.id == "_"
                    for t in statement.targets  # type: ignore[attr-defined]
                ):
                    self._dropped.add(id(statement.value))  # type: ignore[attr-defined]
        pending: list[ast.stmt] = list(self.model.tree.body)
        while pending:  # module-level statements only: functions may run in a trace
            statement = pending.pop()
            if isinstance(statement, ast.Expr):
                self._dropped.add(id(statement.value))
            elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    for child in getattr(statement, field, ()):
                        pending.extend(
                            getattr(child, "body", ())
                            if not isinstance(child, ast.stmt)
                            else (child,)
                        )

    def _name_reads(self) -> dict[str, list[tuple[ast.Name, ast.AST]]]:
        """Every name read of the file with its parent node: one walk, made once (an
        explicit stack over each node type's child fields: several times faster than
        ``ast.walk`` with ``ast.iter_child_nodes``, which matters on large files)."""
        if self._reads is not None:
            return self._reads
        reads: dict[str, list[tuple[ast.Name, ast.AST]]] = {}
        stack: list[tuple[ast.AST, ast.AST]] = [(self.model.tree, self.model.tree)]
        node_type_fields = _CHILD_FIELDS
        while stack:
            node, parent = stack.pop()
            node_type = type(node)
            if node_type is ast.Name:
                if type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                    reads.setdefault(node.id, []).append((node, parent))  # type: ignore[arg-type, attr-defined]
                continue
            fields = node_type_fields.get(node_type)
            if fields is None:
                fields = tuple(f for f in node_type._fields if f not in NOT_CHILD_FIELDS)
                node_type_fields[node_type] = fields
            for field_name in fields:
                value = getattr(node, field_name, None)
                if type(value) is list:
                    stack.extend((child, node) for child in value if isinstance(child, ast.AST))
                elif isinstance(value, ast.AST):
                    stack.append((value, node))
        self._reads = reads
        return reads
