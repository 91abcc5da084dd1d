"""What a name, ``self.attr`` or a class refers to at a given point: which bindings of
the model may reach a read, in which scope. Nothing here knows what a value *is*.

Name resolution follows Python's scoping: a name bound anywhere in a function
is local to it (unless declared ``global`` / ``nonlocal``); class bodies are
skipped by nested functions; comprehensions have their own scope for their
loop targets but otherwise run in place.

*Where* the lookup happens decides how precise it can be:

- in the scope that binds the name, it is flow-sensitive: the last binding
  before the use, plus earlier ones when that binding sits in a block the use
  is not in (an ``if`` branch, a loop body, a ``try``), until one that always
  runs is found;
- from a nested function (or via ``global``), the function may run at any
  time, so every binding of the name counts, except the ones derived from the
  name itself (``w = w - 1``), which can only repeat what it already was.

Neighbours: ``model.py`` builds the scopes and bindings this reads (one walk);
``bindings.py`` infers the value of the bindings found here; ``traced.py`` asks it which
``def`` a call names; ``lookup.py`` asks it the same at a cursor, for hover cards.
"""

from __future__ import annotations

import ast
import bisect
from typing import NamedTuple

from jupyterlab_tfcoach.analysis.model import Binding, Model, Path, Position, Scope, Site

# A read that more bindings than this may reach (a name rebound in thousands of ``if``
# branches, from thousands of functions, or ``self.w`` in thousands of methods) resolves
# to one ``UNRESOLVED`` binding: its value is unknown, so no rule reports on it. Finding
# and merging them all would cost time proportional to their number at every read, which
# makes such a file quadratic (2,000 if/else rebinds took 6 s).
MAX_REACHING = 16
# How many of a name's bindings a read may step over (bound later, or from another scope
# via ``global``) before it gives up the same way.
_MAX_SCANNED = 64
# ``Binding.kind`` of that stand-in: every rule treats an unknown kind as unknown.
UNRESOLVED = "unresolved"
# How many classes ``method_binding`` visits up a chain of bases before it gives up.
_MAX_CLASSES = 40


class Resolution(NamedTuple):
    """The bindings a name may have at a point; ``flow_sensitive`` when in the same scope.

    A named tuple rather than a frozen dataclass: one is made for every name read, and a
    tuple is several times cheaper to build."""

    owner: Scope
    bindings: tuple[Binding, ...]
    flow_sensitive: bool


def _is_prefix(prefix: Path, path: Path) -> bool:
    # Blocks compare by identity (``eq=False``), so tuple equality is an identity test,
    # done in C instead of a generator.
    return len(prefix) <= len(path) and path[: len(prefix)] == prefix


class NameResolver:
    """Name, attribute and call lookups over a ``Model``, each cached per file."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.imports = model.imports
        self._class_scopes: dict[ast.AST, Scope] | None = None
        self._calls_to: dict[str, list[Site]] = {}
        self._sorted_positions: dict[tuple[int, str], tuple[int, list[Position] | None]] = {}
        # (scope id, name) -> (how many bindings the name had, what every read gets)
        self._everything_cache: dict[tuple[int, str], tuple[int, Resolution | None]] = {}
        # The ``UNRESOLVED`` stand-ins, kept alive: caches (here and in rules) key
        # bindings by ``id``, which a freed object's successor could reuse.
        self._unresolved: list[Binding] = []
        self._budget = model.budget

    def _unknown(
        self, owner: Scope, name: str, pos: Position, path: Path, flow_sensitive: bool
    ) -> Resolution:
        """Too many bindings may reach this read: one stand-in binding of unknown value,
        made where the read is (so a rule asking whether the value may come from an
        enclosing loop gets yes)."""
        binding = Binding(name, owner, pos, UNRESOLVED, owner.node, None, path)
        self._unresolved.append(binding)
        return Resolution(owner, (binding,), flow_sensitive)

    # -- names ----------------------------------------------------------------

    def resolve(self, scope: Scope, name: str, pos: Position, path: Path) -> Resolution | None:
        """The bindings ``name`` may refer to when read at ``pos`` in ``scope``; None: unbound."""
        if self._budget is not None:
            self._budget.tick()
        lookup = scope
        while lookup.kind == "comprehension" and name not in lookup.bindings:
            if lookup.parent is None:
                break
            lookup = lookup.parent
        if lookup.kind == "comprehension":
            found = tuple(lookup.bindings.get(name, ()))
            return Resolution(lookup, found, False) if found else None
        if name in lookup.global_names:
            return self._everything(self.model.module, name)
        if name in lookup.nonlocal_names:
            return self._everything(self._enclosing_binder(lookup, name), name)
        if name in lookup.bindings:
            return self._before(lookup, name, pos, path)
        return self._everything(self._enclosing_binder(lookup, name), name)

    def _enclosing_binder(self, scope: Scope, name: str) -> Scope | None:
        enclosing = scope.parent
        while enclosing is not None:
            if enclosing.kind != "class" and name in enclosing.bindings:
                return enclosing
            enclosing = enclosing.parent
        return None

    def _everything(self, owner: Scope | None, name: str) -> Resolution | None:
        if owner is None:
            return None
        every = owner.bindings.get(name, ())
        key = (id(owner), name)
        cached = self._everything_cache.get(key)
        if cached is not None and cached[0] == len(every):
            return cached[1]  # the same for every read: built once
        found = tuple(b for b in every if not b.self_referential and b.kind != "del")
        if len(found) > MAX_REACHING:
            resolution: Resolution | None = self._unknown(owner, name, (0, 0), (), False)
        else:
            resolution = Resolution(owner, found, False) if found else None
        self._everything_cache[key] = (len(every), resolution)
        return resolution

    def _before(self, owner: Scope, name: str, pos: Position, path: Path) -> Resolution | None:
        bindings = owner.bindings[name]
        if len(bindings) == 1:  # most names: one parameter, one assignment
            binding = bindings[0]
            if binding.remote or binding.pos > pos:
                return None
            return Resolution(owner, (binding,), True)
        candidates: list[Binding] = []
        first = self._count_at_or_before(owner, name, pos) - 1
        for index in range(first, -1, -1):
            binding = bindings[index]
            if binding.remote or binding.pos > pos:
                if first - index >= _MAX_SCANNED:
                    return self._unknown(owner, name, pos, path, True)
                continue
            candidates.append(binding)
            if _is_prefix(binding.path, path):
                break  # this binding always ran before the use: older ones are hidden
            if len(candidates) >= MAX_REACHING or first - index >= _MAX_SCANNED:
                return self._unknown(owner, name, pos, path, True)
        if not candidates:
            return None
        return Resolution(owner, tuple(candidates), True)

    def _count_at_or_before(self, owner: Scope, name: str, pos: Position) -> int:
        """How many of ``name``'s bindings may precede ``pos``: a bisection when they are in
        source order (the usual case), so a name rebound thousands of times in one scope
        (a 1 MiB file) stays linear overall instead of quadratic."""
        bindings = owner.bindings[name]
        key = (id(owner), name)
        cached = self._sorted_positions.get(key)
        if cached is None or cached[0] != len(bindings):
            ordered = [b.pos for b in bindings]
            cached = (len(bindings), ordered if ordered == sorted(ordered) else None)
            self._sorted_positions[key] = cached
        positions = cached[1]
        if positions is None:
            return len(bindings)  # not in source order: scan them all
        return bisect.bisect_right(positions, pos)

    def is_builtin(self, scope: Scope, name: str, pos: Position, path: Path) -> bool:
        """True when ``name`` is not bound anywhere it could be read from (so: the builtin)."""
        if self.resolve(scope, name, pos, path) is not None:
            return False
        # A module-level binding later in the file still shadows the builtin.
        return name not in self.model.module.bindings

    # -- calls of TensorFlow names ----------------------------------------------

    def calls_to(self, canonical: str) -> list[Site]:
        """Calls whose callee is the TensorFlow name ``canonical``, in source order.

        Only calls spelled with the name's last component or a local alias of it
        can match, so only those are resolved.
        """
        cached = self._calls_to.get(canonical)
        if cached is not None:
            return cached
        spellings = {canonical.rsplit(".", 1)[-1]}
        spellings.update(local for local, bound in self.imports.names.items() if bound == canonical)
        by_name = self.model.calls_by_name
        found = [
            site
            for spelling in spellings
            for site in by_name.get(spelling, ())
            if self.imports.resolve(site.node.func) == canonical  # type: ignore[attr-defined]
        ]
        if len(spellings) > 1:
            found.sort(key=lambda site: (site.node.lineno, site.node.col_offset))  # type: ignore[attr-defined]
        self._calls_to[canonical] = found
        return found

    # -- attributes, instances and methods (classes defined in this file) -----

    def self_attribute_bindings(self, node: ast.Attribute, scope: Scope) -> list[Binding] | None:
        """The class-wide ``self.<attr> = ...`` bindings for ``self.attr`` read in a method.

        None when ``node`` is not ``self.<attr>`` inside a method; an empty list
        when it is but no method assigns that attribute.
        """
        function = scope.function
        if (
            function is None
            or function.class_scope is None
            or not isinstance(node.value, ast.Name)
            or node.value.id != function.self_name
        ):
            return None
        return function.class_scope.attr_bindings.get(node.attr, [])

    def instance_attribute_bindings(
        self, node: ast.Attribute, scope: Scope, path: Path
    ) -> list[Binding] | None:
        """For ``obj.attr`` where ``obj = C(...)`` with a class ``C`` of this file (a
        ``tf.Module``, a Keras layer), the ``self.attr = ...`` bindings of ``C``'s methods;
        None when ``obj`` is not known to be such an instance."""
        if not isinstance(node.value, ast.Name):
            return None
        class_scope = self.instance_class(scope, node.value, path)
        if class_scope is None:
            return None
        return class_scope.attr_bindings.get(node.attr, [])

    def class_scope_of(self, class_def: ast.AST) -> Scope | None:
        """The scope of a ``class`` statement; the map is built once from the scope list."""
        if self._class_scopes is None:
            self._class_scopes = {
                scope.node: scope for scope in self.model.scopes if scope.kind == "class"
            }
        return self._class_scopes.get(class_def)

    def class_named(self, scope: Scope, name: ast.Name, path: Path) -> Scope | None:
        """The class scope ``name`` refers to, when every binding it may have is one
        ``class`` statement of this file."""
        resolution = self.resolve(scope, name.id, (name.lineno, name.col_offset), path)
        if resolution is None or len(resolution.bindings) != 1:
            return None
        binding = resolution.bindings[0]
        return self.class_scope_of(binding.node) if binding.kind == "class" else None

    def instance_class(self, scope: Scope, name: ast.Name, path: Path) -> Scope | None:
        """The class of ``obj`` read at ``name``, when each binding it may have is
        ``obj = C(...)`` with the same class ``C`` of this file; None otherwise."""
        resolution = self.resolve(scope, name.id, (name.lineno, name.col_offset), path)
        if resolution is None:
            return None
        found: Scope | None = None
        for binding in resolution.bindings:
            created = binding.value
            if (
                binding.kind != "assign"
                or not isinstance(created, ast.Call)
                or not isinstance(created.func, ast.Name)
            ):
                return None
            class_scope = self.class_named(binding.value_scope, created.func, binding.path)
            if class_scope is None or (found is not None and class_scope is not found):
                return None
            found = class_scope
        return found

    def method_binding(self, class_scope: Scope, name: str) -> Binding | None:
        """The one class-body binding of ``name`` in the class or, when it has none, in
        its bases defined in this file (searched depth-first, as single inheritance
        resolves); None when absent or bound more than once (which one wins is unknown)."""
        seen: set[int] = set()
        pending = [class_scope]
        while pending:
            current = pending.pop()
            if id(current) in seen or len(seen) > _MAX_CLASSES:
                continue
            seen.add(id(current))
            bindings = current.bindings.get(name)
            if bindings is not None:
                return bindings[0] if len(bindings) == 1 else None
            class_def = current.node
            parent = current.parent
            if not isinstance(class_def, ast.ClassDef) or parent is None:
                continue
            for base in reversed(class_def.bases):
                if isinstance(base, ast.Name):
                    base_scope = self.class_named(parent, base, current.definition_path)
                    if base_scope is not None:
                        pending.append(base_scope)
        return None
