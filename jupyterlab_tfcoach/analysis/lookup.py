"""What a dotted name at a position is bound to, asked of the rules' own binding model.

The rules read names where the walk meets them (``model.py`` records each read's
scope and block path). A cursor is only a position, so this module finds the scope
and the block path that the walk would have had there: it descends from the module
through the statements that contain the position, taking the model's own scopes and
blocks on the way. The question is then the one a rule asks (``Bindings.infer``),
with the same scoping, flow sensitivity and inference: hover cards and findings
cannot disagree on what ``w`` is.
"""

from __future__ import annotations

import ast
import bisect
import threading
from dataclasses import dataclass

from jupyterlab_tfcoach.analysis.bindings import PY_NONE, Bindings, Value, merge_values
from jupyterlab_tfcoach.analysis.imports import canonical_module
from jupyterlab_tfcoach.analysis.model import Binding, Model, Path, Position, Scope

_SCOPE_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


@dataclass(frozen=True)
class BoundValue:
    """What a name holds where it is read, and the 1-based line of the binding that
    gave it (the nearest one, when several may reach the read and agree)."""

    value: Value
    line: int


def _start(node: ast.AST) -> Position:
    decorators = getattr(node, "decorator_list", None)
    first = decorators[0] if decorators else node
    return (first.lineno, first.col_offset)  # type: ignore[attr-defined]


def _end(node: ast.AST) -> Position:
    return (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def _covers(node: ast.AST, pos: Position) -> bool:
    return (
        hasattr(node, "lineno")
        and getattr(node, "end_lineno", None) is not None
        and _start(node) <= pos <= _end(node)
    )


def _statement_lists(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in ``statement``, in source order."""
    if isinstance(statement, ast.Match):
        return [case.body for case in statement.cases]
    lists = [getattr(statement, "body", None), getattr(statement, "orelse", None)]
    if isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
        lists[1:1] = [handler.body for handler in statement.handlers]  # type: ignore[attr-defined]
        lists.append(statement.finalbody)  # type: ignore[attr-defined]
    return [body for body in lists if isinstance(body, list) and body]


def _header_children(statement: ast.stmt) -> list[ast.AST]:
    """What ``statement`` evaluates itself (not in its nested statement lists)."""
    children = []
    for child in ast.iter_child_nodes(statement):
        if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
            continue
        children.append(child)
    return children


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
        scope: Scope = self.model.module
        path: Path = ()
        statements = self.model.tree.body
        while True:
            statement = self._statement_at(statements, pos)
            if statement is None:
                return scope, path
            inner = next(
                (body for body in _statement_lists(statement) if _covers_list(body, pos)), None
            )
            if inner is None:
                return self._expression_scope(statement, scope, path, pos)
            if isinstance(statement, _SCOPE_STATEMENTS):
                scope, path = self._scopes[statement], ()  # a body runs in its own scope
            else:
                block = self.model.blocks.get(id(inner))
                if block is not None:  # ``with`` and ``finally`` bodies always run
                    path = (*path, block)
            statements = inner

    def _expression_scope(
        self, statement: ast.stmt, scope: Scope, path: Path, pos: Position
    ) -> tuple[Scope, Path]:
        """Lambdas and comprehensions in the statement's own expressions open scopes."""
        candidates = [child for child in _header_children(statement) if _covers(child, pos)]
        while candidates:
            node = candidates[0]
            if isinstance(node, ast.Lambda):
                if _covers(node.body, pos):
                    scope, path = self._scopes[node], ()
                    candidates = [node.body]
                    continue
            elif isinstance(node, _COMPREHENSIONS):
                # The first iterable is evaluated outside, the rest inside.
                if not _covers(node.generators[0].iter, pos):
                    scope = self._scopes[node]
            candidates = [child for child in ast.iter_child_nodes(node) if _covers(child, pos)]
        return scope, path

    # -- what a name holds ------------------------------------------------------

    def canonical(self, parts: tuple[str, ...]) -> str | None:
        """``("T", "function")`` -> ``"tf.function"`` through the file's imports."""
        return self.imports.resolve(_dotted(parts, (1, 0)))

    def value_at(self, parts: tuple[str, ...], pos: Position) -> BoundValue | None:
        """What the dotted name starting at ``pos`` holds there; None when nothing this
        file binds reaches it (a name from a module, a builtin, an unknown attribute)."""
        with self._lock:
            scope, path = self.scope_at(pos)
            expression = _dotted(parts, pos)
            target = self._target_binding(expression, scope)
            if target is not None:
                return BoundValue(self.bindings.binding_value(target), _line_of(target))
            reaching = self._reaching(expression, scope, path)
            if reaching:
                value = self.bindings.infer(expression, scope, path)
                return BoundValue(value, _line_of(reaching[0]))
            if isinstance(expression, ast.Attribute):
                return self._instance_attribute(expression, scope, path)
            return None

    def _instance_attribute(
        self, expression: ast.Attribute, scope: Scope, path: Path
    ) -> BoundValue | None:
        """``m.w`` after ``m = Model()``: what the class's methods assign to ``self.w``.
        (Rules do not look through instances; a reader hovering ``m.w`` asks exactly this.)"""
        found = self.bindings.instance_attribute_bindings(expression, scope, path)
        values = [
            (self.bindings.binding_value(binding), binding)
            for binding in found or ()
            if not binding.self_referential
        ]
        values = [(value, binding) for value, binding in values if value.kind != PY_NONE]
        if not values:
            return None
        merged = merge_values([value for value, _ in values])
        return BoundValue(merged, _line_of(values[0][1]))

    def imported_from(self, name: str, pos: Position) -> tuple[str, int] | None:
        """``(module, level)`` when ``name`` read at ``pos`` is bound only by an import
        from a module that is not TensorFlow (where jedi may find what it is)."""
        with self._lock:
            scope, path = self.scope_at(pos)
            reaching = self._reaching(_dotted((name,), pos), scope, path)
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

    def _reaching(self, expression: ast.expr, scope: Scope, path: Path) -> tuple[Binding, ...]:
        """The bindings a read of ``expression`` may see, nearest first."""
        if isinstance(expression, ast.Name):
            pos = (expression.lineno, expression.col_offset)
            resolution = self.bindings.resolve(scope, expression.id, pos, path)
            return resolution.bindings if resolution is not None else ()
        if isinstance(expression, ast.Attribute):
            found = self.bindings.self_attribute_bindings(expression, scope)
            return tuple(b for b in found or () if not b.self_referential)
        return ()

    def _target_binding(self, expression: ast.expr, scope: Scope) -> Binding | None:
        """The binding whose target is the name at ``pos`` (the ``w`` of ``w = ...``):
        a reader pointing at it asks what it becomes, not what it was."""
        if isinstance(expression, ast.Name):
            candidates = scope.bindings.get(expression.id, ())
        elif isinstance(expression, ast.Attribute):
            candidates = self.bindings.self_attribute_bindings(expression, scope) or ()
        else:
            return None
        for binding in candidates:
            if binding.target is not None and _same_place(binding.target, expression):
                return binding
        return None


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
