"""What the names of a file (or a notebook's joined cells) are bound to, for hover cards.

Built from one ``ast`` parse (off the protocol thread) and then queried per
hover in O(log n). Scoping is by position, not by function: the binding of a
name at a line is its last assignment at or before that line. That is what a
reader of straight-line TF code expects, and cheap; a rebinding to anything we
do not recognise clears it.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable
from dataclasses import dataclass, field

from jupyterlab_tfcoach.analysis.imports import TFImports, canonical_module

Resolver = Callable[[ast.expr], "str | None"]

# Constructor (canonical name) -> kind of object bound.
CONSTRUCTORS = {
    "tf.Variable": "Variable",
    "tf.GradientTape": "GradientTape",
}
# Methods that return variables (Keras layers).
VARIABLE_FACTORY_METHODS = frozenset({"add_weight", "add_variable"})


@dataclass(frozen=True)
class Binding:
    line: int  # 1-based line where the binding takes effect
    kind: str | None  # "Variable", "GradientTape", or None (bound to something else)
    constructor_line: int


@dataclass
class SymbolTable:
    resolve: Resolver
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    # name bound by an import from a module that is not TensorFlow -> (module, level)
    foreign_imports: dict[str, tuple[str, int]] = field(default_factory=dict)

    def binding_at(self, name: str, line: int) -> Binding | None:
        """The binding in effect for dotted ``name`` at 1-based ``line``."""
        found = self.bindings.get(name)
        if not found:
            return None
        index = bisect.bisect_right([b.line for b in found], line) - 1
        return found[index] if index >= 0 else None


def dotted_expr(parts: tuple[str, ...]) -> ast.expr:
    """``("tf", "function")`` -> the ast of ``tf.function`` (for the resolver)."""
    node: ast.expr = ast.Name(id=parts[0], ctx=ast.Load())
    for part in parts[1:]:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return node


def target_name(node: ast.expr) -> str | None:
    """``w`` / ``self.w`` / ``a.b.c`` -> its dotted text; None for other targets."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _kind_of(value: ast.expr | None, resolve: Resolver) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in VARIABLE_FACTORY_METHODS:
        return "Variable"
    return CONSTRUCTORS.get(resolve(func) or "")


def _is_tensorflow_module(module: str | None) -> bool:
    return module is not None and canonical_module(module) is not None


class _Collector(ast.NodeVisitor):
    def __init__(self, resolve: Resolver) -> None:
        self.resolve = resolve
        self.found: list[tuple[str, Binding]] = []
        self.foreign: dict[str, tuple[str, int]] = {}

    def _bind(self, target: ast.expr, value: ast.expr | None, line: int) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._bind(element, None, line)
            return
        name = target_name(target)
        if name is not None:
            kind = _kind_of(value, self.resolve)
            self.found.append((name, Binding(line, kind, getattr(value, "lineno", line))))

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._bind(target, node.value, node.lineno)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value, node.lineno)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._bind(node.target, None, node.lineno)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._bind(node.target, node.value, node.lineno)
        self.generic_visit(node)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind(item.optional_vars, item.context_expr, node.lineno)
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._bind(node.target, None, node.lineno)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not _is_tensorflow_module(alias.name):
                self.foreign[alias.asname or alias.name.split(".")[0]] = (alias.name, 0)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not _is_tensorflow_module(node.module):
            for alias in node.names:
                if alias.name != "*":
                    self.foreign[alias.asname or alias.name] = (node.module or "", node.level)


def build_symbols(tree: ast.AST) -> SymbolTable:
    """Index one parsed module (or a notebook's joined cells)."""
    imports = TFImports()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.add(node)
    resolve = imports.resolve
    collector = _Collector(resolve)
    collector.visit(tree)
    table = SymbolTable(resolve=resolve, foreign_imports=collector.foreign)
    for name, binding in sorted(collector.found, key=lambda item: item[1].line):
        table.bindings.setdefault(name, []).append(binding)
    return table
