"""What a dotted name at a position is bound to, asked of the rules' own binding model.

The rules read names where the walk meets them (``model.py`` records each read's
scope and block path). A cursor is only a position, so this module finds the scope
and the block path that the walk would have had there: it descends from the module
through the statements and expressions that contain the position, taking the model's
own scopes and blocks on the way, down to the name written there. The question is
then the one a rule asks (``Bindings.infer``), with the same scoping, flow
sensitivity and inference: hover cards and findings cannot disagree on what ``w`` is.

A reader is told less than a rule assumes in one case: the model lets ``w = w - 1``
(a value derived from the name itself) be ignored where it may run before a read
from elsewhere, since it usually keeps the kind. When it turns a variable into a
tensor, the read may see either, and this module says it does not know.
"""

from __future__ import annotations

import ast
import bisect
import threading
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis.bindings import Bindings
from jupyterlab_tfcoach.analysis.imports import canonical_module
from jupyterlab_tfcoach.analysis.model import Binding, Model, Path, Position, Scope, parameters
from jupyterlab_tfcoach.analysis.resolution import MAX_REACHING, Resolution
from jupyterlab_tfcoach.analysis.values import PY_NONE, UNKNOWN, Value, merge_values

_SCOPE_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_PLACES_KEPT = 256  # positions whose place is cached (hovers come back to the same names)


@dataclass(frozen=True)
class BoundValue:
    """What a name holds where it is read, and the 1-based line of the binding that
    gave it (the nearest one, when several may reach the read and agree)."""

    value: Value
    line: int


@dataclass(frozen=True)
class Place:
    """Where a position is, as the walk saw it: the scope, the block path, and the
    node written there (a ``Name``, or an ``arg``: a parameter), when there is one."""

    scope: Scope
    path: Path
    node: ast.AST | None


def _start(node: ast.AST) -> Position:
    decorators = getattr(node, "decorator_list", None)
    first = decorators[0] if decorators else node
    return (first.lineno, first.col_offset)  # type: ignore[attr-defined]


def _end(node: ast.AST) -> Position:
    return (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def _positioned(node: ast.AST) -> bool:
    return getattr(node, "end_lineno", None) is not None and hasattr(node, "lineno")


def _covering(nodes: list[ast.AST], pos: Position) -> list[ast.AST]:
    """The nodes among ``nodes`` whose span holds ``pos``. Nodes without a position
    (a comprehension's ``for`` clause, ``arguments``, a ``with`` item, a ``case``)
    are looked through: their children are tested instead."""
    found: list[ast.AST] = []
    pending = list(reversed(nodes))
    while pending:
        node = pending.pop()
        if _positioned(node):
            if _start(node) <= pos <= _end(node):
                found.append(node)
        elif not isinstance(node, ast.expr_context):
            pending.extend(reversed(list(ast.iter_child_nodes(node))))
    return found


def _begins_at(node: ast.AST, pos: Position) -> bool:
    return (node.lineno, node.col_offset) == pos  # type: ignore[attr-defined]


def _statement_lists(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in ``statement``, in source order."""
    if isinstance(statement, ast.Match):
        return [case.body for case in statement.cases]
    lists = [getattr(statement, "body", None), getattr(statement, "orelse", None)]
    if isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
        lists[1:1] = [handler.body for handler in statement.handlers]  # type: ignore[attr-defined]
        lists.append(statement.finalbody)  # type: ignore[attr-defined]
    return [body for body in lists if isinstance(body, list) and body]


def _header(statement: ast.stmt) -> list[ast.AST]:
    """What ``statement`` evaluates itself (not in its nested statement lists)."""
    children: list[ast.AST] = []
    for child in ast.iter_child_nodes(statement):
        if isinstance(child, ast.excepthandler):
            if child.type is not None:  # ``except E as e:``: ``E`` is read here
                children.append(child.type)
        elif isinstance(child, ast.match_case):
            children.append(child.pattern)  # the guard runs in its case's block
        elif not isinstance(child, ast.stmt):
            children.append(child)
    return children


def _covers_list(statements: list[ast.stmt], pos: Position) -> bool:
    return _start(statements[0]) <= pos <= _end(statements[-1])


def _same_place(target: ast.expr, expression: ast.expr) -> bool:
    return (target.lineno, target.col_offset) == (
        expression.lineno,
        expression.col_offset,
    ) and ast.unparse(target) == ast.unparse(expression)


def _line_of(binding: Binding) -> int:
    node = binding.target if binding.target is not None else binding.node
    return getattr(node, "lineno", binding.pos[0])


def _dotted(parts: tuple[str, ...], pos: Position) -> ast.expr:
    """``("self", "w")`` read at ``pos`` -> the ``ast`` of ``self.w`` there."""
    line, column = pos
    node: ast.expr = ast.Name(id=parts[0], ctx=ast.Load(), lineno=line, col_offset=column)
    for part in parts[1:]:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load(), lineno=line, col_offset=column)
    return node


def _shares_loop(path: Path, other: Path) -> bool:
    """Whether one loop body holds both paths (so code after a point may run before it)."""
    return any(block.is_loop_body and block in other for block in path)


class NameLookup:
    """The binding model of one parsed module, asked at positions (hover, a cursor).

    Lookups may come from several threads (the server answers hovers in a pool):
    the lazy inference caches are guarded by one lock.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.model = Model(tree)
        self.bindings = Bindings(self.model)
        self.imports = self.model.imports
        self._scopes = {scope.node: scope for scope in self.model.scopes}
        self._starts: dict[int, list[Position]] = {}
        self._places: dict[Position, Place] = {}
        self._attribute_targets: frozenset[tuple[str, str]] | None = None
        self._lock = threading.Lock()

    # -- where a position is ---------------------------------------------------

    def _statement_at(self, statements: list[ast.stmt], pos: Position) -> ast.stmt | None:
        starts = self._starts.get(id(statements))
        if starts is None:
            starts = [_start(statement) for statement in statements]
            self._starts[id(statements)] = starts
        index = bisect.bisect_right(starts, pos) - 1
        if index < 0 or pos > _end(statements[index]):
            return None
        return statements[index]

    def scope_at(self, pos: Position) -> tuple[Scope, Path]:
        """The scope and block path the model's walk has at ``pos`` (line, UTF-8 column)."""
        place = self.place_at(pos)
        return place.scope, place.path

    def place_at(self, pos: Position) -> Place:
        place = self._places.get(pos)
        if place is None:
            if len(self._places) >= _PLACES_KEPT:
                self._places.clear()
            place = self._places[pos] = self._find_place(pos)
        return place

    def _find_place(self, pos: Position) -> Place:
        scope: Scope = self.model.module
        path: Path = ()
        statements = self.model.tree.body
        while True:
            statement = self._statement_at(statements, pos)
            if statement is None:
                return Place(scope, path, None)
            inner = next(
                (body for body in _statement_lists(statement) if _covers_list(body, pos)), None
            )
            if inner is None:
                return self._in_header(statement, scope, path, pos)
            if isinstance(statement, _SCOPE_STATEMENTS):
                scope, path = self._scopes[statement], ()  # a body runs in its own scope
            else:
                block = self.model.blocks.get(id(inner))
                if block is not None:  # ``with`` and ``finally`` bodies always run
                    path = (*path, block)
            statements = inner

    def _in_header(self, statement: ast.stmt, scope: Scope, path: Path, pos: Position) -> Place:
        """Down the statement's own expressions to the name at ``pos``; lambdas and
        comprehensions open scopes on the way, a parameter belongs to its function."""
        if isinstance(statement, _FUNCTION_DEFS):
            for parameter in parameters(statement.args):
                if _begins_at(parameter, pos):
                    return Place(self._scopes[statement], (), parameter)
        roots = _header(statement)
        if isinstance(statement, ast.Match):
            for case in statement.cases:
                if case.guard is not None and _covers(case.guard, pos):
                    block = self.model.blocks.get(id(case.body))
                    path = (*path, block) if block is not None else path
                    roots = [case.guard]
        found: ast.AST | None = None
        candidates = _covering(roots, pos)
        while candidates:
            node = candidates[0]
            if isinstance(node, ast.Name) and _begins_at(node, pos):
                found = node
            if isinstance(node, ast.Lambda):
                for parameter in parameters(node.args):
                    if _begins_at(parameter, pos):
                        return Place(self._scopes[node], (), parameter)
                if _covers(node.body, pos):
                    scope, path = self._scopes[node], ()
                    candidates = _covering([node.body], pos)
                    continue
            elif isinstance(node, _COMPREHENSIONS):
                # The first iterable is evaluated outside, the rest inside; the opening
                # bracket is where an expression around the comprehension starts too
                # (``[...].count(x)``, ``{...} & {...}``), so it stays outside.
                if not _covers(node.generators[0].iter, pos) and not _begins_at(node, pos):
                    scope = self._scopes[node]
            candidates = _covering(list(ast.iter_child_nodes(node)), pos)
        return Place(scope, path, found)

    # -- what a name holds ------------------------------------------------------

    def canonical(self, parts: tuple[str, ...]) -> str | None:
        """``("T", "function")`` -> ``"tf.function"`` through the file's imports."""
        return self.imports.resolve(_dotted(parts, (1, 0)))

    def value_at(
        self, parts: tuple[str, ...], pos: Position, exact: bool = True
    ) -> BoundValue | None:
        """What the dotted name starting at ``pos`` holds there; None when nothing this
        file binds reaches it (a name from a module, a builtin, an unknown attribute),
        or when ``exact`` and no such name is written at ``pos`` (a keyword argument's
        name, a docstring). ``exact=False`` is for a parse of an older version of the
        text, where positions may have moved."""
        with self._lock:
            place = self.place_at(pos)
            if isinstance(place.node, ast.arg):
                parameter = self._parameter_binding(place)
                return BoundValue(UNKNOWN, _line_of(parameter)) if parameter else None
            written = isinstance(place.node, ast.Name) and place.node.id == parts[0]
            if exact and not written:
                return None
            scope, path = place.scope, place.path
            expression = _dotted(parts, pos)
            target = self._target_binding(expression, scope)
            if target is not None:
                return BoundValue(self.bindings.binding_value(target), _line_of(target))
            if isinstance(expression, ast.Name):
                resolution = self.bindings.names.resolve(scope, expression.id, pos, path)
                if resolution is None:
                    return None
                others = resolution.owner.bindings.get(expression.id, [])
                return self._bound(expression, place, resolution.bindings, others, resolution)
            found = self.bindings.names.self_attribute_bindings(expression, scope)  # type: ignore[arg-type]
            if found is not None:
                reaching = tuple(b for b in found if not b.self_referential)
                return self._bound(expression, place, reaching, found, None)
            return self._instance_attribute(expression, place)  # type: ignore[arg-type]

    def _bound(
        self,
        expression: ast.expr,
        place: Place,
        reaching: tuple[Binding, ...],
        every: list[Binding],
        resolution: Resolution | None,
    ) -> BoundValue | None:
        """The value the model infers at the read, unless a rebinding derived from the
        name itself may reach it with another kind (see the module's docstring)."""
        if not reaching:
            return None
        value = self.bindings.infer(expression, place.scope, place.path)
        pos = (expression.lineno, expression.col_offset)
        anywhere = resolution is None or not resolution.flow_sensitive
        # Derived rebindings that may run before this read: any, for a read from another
        # scope (or of ``self.w``); in the same scope, a later one in a loop around both.
        derived = [
            binding
            for binding in every
            if binding.self_referential
            and (anywhere or (binding.pos > pos and _shares_loop(binding.path, place.path)))
        ]
        if len(derived) > MAX_REACHING:
            return BoundValue(UNKNOWN, _line_of(derived[0]))  # too many to tell (as the rules)
        for binding in derived:
            if self.bindings.binding_value(binding).kind != value.kind:
                return BoundValue(UNKNOWN, _line_of(binding))
        return BoundValue(value, self._line_for(value, reaching))

    def _line_for(self, value: Value, reaching: tuple[Binding, ...]) -> int:
        """The nearest binding that gave the value (not a ``self.k = None`` placeholder)."""
        for binding in reaching:
            if self.bindings.binding_value(binding).kind == value.kind:
                return _line_of(binding)
        return _line_of(reaching[0])

    def _instance_attribute(self, expression: ast.Attribute, place: Place) -> BoundValue | None:
        """``m.w`` after ``m = Model()``: what the class's methods assign to ``self.w``.
        (Rules do not look through instances; a reader hovering ``m.w`` asks exactly this.)
        Unknown when the file also assigns ``m.w`` itself, outside the class."""
        if not isinstance(expression.value, ast.Name):
            return None
        if (expression.value.id, expression.attr) in self._assigned_attributes():
            return None
        found = self.bindings.names.instance_attribute_bindings(expression, place.scope, place.path)
        if found is not None and len(found) > MAX_REACHING:
            return None  # too many to merge at every read, as for ``self.w`` (the rules')
        given: list[tuple[Value, Binding]] = []
        derived: list[tuple[Value, Binding]] = []  # ``self.w = self.w - 1``
        for binding in found or ():
            if binding.kind == "del":
                continue
            value = self.bindings.binding_value(binding)
            if binding.self_referential:
                derived.append((value, binding))
            elif value.kind != PY_NONE:  # a placeholder guarding a later creation
                given.append((value, binding))
        if not given:
            return None
        merged = merge_values([value for value, _ in given])
        for value, binding in derived:
            if value.kind != merged.kind:
                return BoundValue(UNKNOWN, _line_of(binding))
        return BoundValue(merged, _line_of(given[0][1]))

    def _assigned_attributes(self) -> frozenset[tuple[str, str]]:
        """``(obj, attr)`` for each ``obj.attr = ...`` outside ``self`` in a method."""
        if self._attribute_targets is None:
            found: set[tuple[str, str]] = set()
            for site in self.model.assignments:
                statement = site.node
                targets = getattr(statement, "targets", None) or [statement.target]  # type: ignore[attr-defined]
                function = site.scope.function
                own = function.self_name if function is not None else None
                for target in targets:
                    for node in ast.walk(target):
                        if (
                            isinstance(node, ast.Attribute)
                            and isinstance(node.ctx, ast.Store)
                            and isinstance(node.value, ast.Name)
                            and node.value.id != own
                        ):
                            found.add((node.value.id, node.attr))
            self._attribute_targets = frozenset(found)
        return self._attribute_targets

    def imported_from(self, name: str, pos: Position) -> tuple[str, int] | None:
        """``(module, level)`` when ``name`` read at ``pos`` is bound only by an import
        from a module that is not TensorFlow (where jedi may find what it is)."""
        with self._lock:
            scope, path = self.scope_at(pos)
            resolution = self.bindings.names.resolve(scope, name, pos, path)
        reaching = resolution.bindings if resolution is not None else ()
        if len(reaching) != 1 or reaching[0].kind != "import":
            return None
        statement = reaching[0].node
        for alias in statement.names:  # type: ignore[attr-defined]
            if (alias.asname or alias.name.split(".", 1)[0]) != name:
                continue
            if isinstance(statement, ast.ImportFrom):
                module, level = statement.module or "", statement.level
            else:
                module, level = alias.name, 0
            if level or canonical_module(module) is None:
                return module, level
        return None

    def _parameter_binding(self, place: Place) -> Binding | None:
        parameter = place.node
        assert isinstance(parameter, ast.arg)
        for binding in place.scope.bindings.get(parameter.arg, ()):
            if binding.node is parameter:
                return binding
        return None

    def _target_binding(self, expression: ast.expr, scope: Scope) -> Binding | None:
        """The binding whose target is the name at ``pos`` (the ``w`` of ``w = ...``):
        a reader pointing at it asks what it becomes, not what it was."""
        if isinstance(expression, ast.Name):
            owner = self.model.module if expression.id in scope.global_names else scope
            candidates = owner.bindings.get(expression.id, ())
        elif isinstance(expression, ast.Attribute):
            candidates = self.bindings.names.self_attribute_bindings(expression, scope) or ()
        else:
            return None
        for binding in candidates:
            if binding.target is not None and _same_place(binding.target, expression):
                return binding
        return None


def _covers(node: ast.AST, pos: Position) -> bool:
    return _positioned(node) and _start(node) <= pos <= _end(node)
