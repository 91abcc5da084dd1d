"""One ordered walk over the module that every rule shares.

The walk builds the scopes with their name bindings (in source order, with
the conditional blocks each binding sits in) and indexes the nodes rules look
at (calls, binary operations, assignments, loops, ``with`` statements,
``del`` statements, function definitions), each with its scope and block
path. Nothing is resolved or inferred here: imports are only collected, and
``bindings.py`` evaluates values lazily, on a rule's demand, once all imports
are known.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from jupyterlab_tfcoach.analysis.imports import TFImports

Position = tuple[int, int]  # (line, UTF-8 byte column) as ast reports; only compared


@dataclass(eq=False)
class Block:
    """A statement list that may not run (or run repeatedly) when its scope runs.

    ``kind``: ``if`` (``branch`` 0 = body, 1 = else), ``for`` / ``while``
    (branch 0 = body, 1 = else), ``try`` (0 = body, 1 = handler, 2 = else),
    ``case``. ``with`` bodies and ``finally`` are not blocks: they always run.
    """

    kind: str
    owner: ast.AST
    branch: int
    exits: bool  # the statement list ends with ``return`` or ``raise``

    @property
    def is_loop_body(self) -> bool:
        return self.kind in ("for", "while") and self.branch == 0


Path = tuple[Block, ...]


class Binding:
    """One event that (re)binds a name, or an attribute of ``self`` in a class."""

    __slots__ = (
        "_self_referential",
        "context",
        "kind",
        "name",
        "node",
        "path",
        "pos",
        "remote",
        "scope",
        "target",
        "value",
    )

    def __init__(
        self,
        name: str,
        scope: Scope,
        pos: Position,
        kind: str,
        node: ast.AST,
        value: ast.expr | None,
        path: Path,
        *,
        target: ast.expr | None = None,
        remote: bool = False,
        context: Scope | None = None,
    ) -> None:
        self.name = name
        self.scope = scope  # the scope that owns the name (or the class, for self.attr)
        self.pos = pos  # where the new value becomes visible
        # assign, augassign, with, for, param, def, class, import, unpack, del, other
        self.kind = kind
        self.node = node  # the statement, ``withitem``, parameter, or definition
        self.value = value  # the expression the value comes from, when there is one
        self.path = path
        self.target = target  # the assigned Name / Attribute, for assignments
        self.remote = remote  # bound from another scope via ``global`` / ``nonlocal``
        # The scope ``value`` is evaluated in: differs from ``scope`` for remote
        # bindings and for ``self.attr`` bindings (owned by the class, made in a method).
        self.context = context
        self._self_referential: bool | None = None

    @property
    def value_scope(self) -> Scope:
        return self.context if self.context is not None else self.scope

    @property
    def self_referential(self) -> bool:
        """``w = w - 1`` / ``w -= 1``: a value derived from the name itself.

        Computed on first use: most bindings are never asked.
        """
        if self._self_referential is None:
            self._self_referential = self.kind == "augassign" or (
                self.kind == "assign"
                and self.target is not None
                and isinstance(self.value, (ast.BinOp, ast.UnaryOp))
                and refers_to(self.value, self.target)
            )
        return self._self_referential


@dataclass(eq=False)
class Scope:
    kind: str  # module, class, function, lambda, comprehension
    node: ast.AST
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    nonlocal_names: set[str] = field(default_factory=set)
    # For methods: the name of the instance parameter and the class scope.
    self_name: str | None = None
    class_scope: Scope | None = None
    # For classes: ``self.<attr> = value`` bindings made in any method.
    attr_bindings: dict[str, list[Binding]] = field(default_factory=dict)
    definition_path: Path = ()  # blocks of the parent scope around the definition

    @property
    def function(self) -> Scope | None:
        """The innermost function or lambda scope (comprehensions are transparent)."""
        scope: Scope | None = self
        while scope is not None and scope.kind == "comprehension":
            scope = scope.parent
        if scope is not None and scope.kind in ("function", "lambda"):
            return scope
        return None

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")


@dataclass(eq=False)
class Site:
    node: ast.AST
    scope: Scope
    path: Path


_FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_LEAVES = (ast.Name, ast.Constant)

# Child fields holding expressions, per expression type; lets the hot loop skip
# ``ast.iter_child_nodes`` and its per-field ``getattr`` guessing.
_EXPRESSION_FIELDS: dict[type, tuple[str, ...]] = {}


def _expression_fields(node_type: type) -> tuple[str, ...]:
    fields = _EXPRESSION_FIELDS.get(node_type)
    if fields is None:
        fields = tuple(
            name for name in node_type._fields if name not in ("ctx", "op", "ops", "type_comment")
        )
        _EXPRESSION_FIELDS[node_type] = fields
    return fields


def _exits(statements: list[ast.stmt]) -> bool:
    return bool(statements) and isinstance(statements[-1], (ast.Return, ast.Raise))


def _start(node: ast.AST) -> Position:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _end(node: ast.AST) -> Position:
    return (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def refers_to(expression: ast.AST, target: ast.expr) -> bool:
    """Whether ``expression`` reads ``target`` (a Name, or ``obj.attr``) anywhere."""
    if isinstance(target, ast.Name):
        name, owner, attr = target.id, None, None
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        name, owner, attr = None, target.value.id, target.attr
    else:
        return False
    stack: list[ast.AST] = [expression]
    while stack:
        node = stack.pop()
        node_type = type(node)
        if node_type is ast.Name:
            if node.id == name:  # type: ignore[attr-defined]
                return True
            continue
        if node_type is ast.Constant:
            continue
        if (
            node_type is ast.Attribute
            and node.attr == attr  # type: ignore[attr-defined]
            and isinstance(node.value, ast.Name)  # type: ignore[attr-defined]
            and node.value.id == owner  # type: ignore[attr-defined]
        ):
            return True
        for field_name in _expression_fields(node_type):
            child = getattr(node, field_name, None)
            if isinstance(child, list):
                stack.extend(c for c in child if isinstance(c, ast.AST))
            elif isinstance(child, ast.AST):
                stack.append(child)
    return False


class Model:
    """Scopes, bindings and node indexes of one module."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.imports = TFImports()
        self.module = Scope("module", tree, None)
        self.scopes: list[Scope] = [self.module]
        self.calls: list[Site] = []
        # Calls by callee name: ``f`` for ``f(...)``, ``attr`` for ``obj.attr(...)``.
        self.calls_by_name: dict[str, list[Site]] = {}
        self.binops: list[Site] = []
        self.assignments: list[Site] = []  # Assign, AugAssign, AnnAssign
        self.loops: list[Site] = []  # For, AsyncFor
        self.withs: list[Site] = []
        self.deletes: list[Site] = []
        self.defs: list[Site] = []  # FunctionDef sites, in the scope that defines them
        self._walk_statements(tree.body, self.module, ())

    def release(self) -> None:
        """Break the scope <-> binding reference cycles so memory is freed at once."""
        for scope in self.scopes:
            scope.bindings.clear()
            scope.attr_bindings.clear()

    # -- bindings -------------------------------------------------------------

    def _bind(
        self,
        scope: Scope,
        name: str,
        pos: Position,
        kind: str,
        node: ast.AST,
        value: ast.expr | None,
        path: Path,
        target: ast.expr | None = None,
    ) -> None:
        owner = scope
        remote = False
        if scope.kind == "comprehension" and kind == "assign":
            # A walrus in a comprehension binds in the enclosing function.
            while owner.kind == "comprehension" and owner.parent is not None:
                owner = owner.parent
            remote = owner is not scope
        if name in owner.global_names:
            owner, remote = self.module, True
        elif name in owner.nonlocal_names:
            enclosing = owner.parent
            while enclosing is not None and (
                enclosing.kind == "class" or name not in enclosing.bindings
            ):
                enclosing = enclosing.parent
            if enclosing is None:
                return
            owner, remote = enclosing, True
        binding = Binding(
            name, owner, pos, kind, node, value, path, target=target, remote=remote, context=scope
        )
        owner.bindings.setdefault(name, []).append(binding)

    def _bind_target(
        self,
        target: ast.expr,
        scope: Scope,
        path: Path,
        kind: str,
        statement: ast.AST,
        value: ast.expr | None,
        pos: Position,
    ) -> None:
        if isinstance(target, ast.Name):
            self._bind(scope, target.id, pos, kind, statement, value, path, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
            if (
                kind == "assign"
                and values is not None
                and len(values) == len(target.elts)
                and not any(isinstance(v, ast.Starred) for v in (*values, *target.elts))
            ):
                # ``a, b = x, y`` binds element by element.
                for element, element_value in zip(target.elts, values, strict=True):
                    self._bind_target(element, scope, path, kind, statement, element_value, pos)
                return
            for element in target.elts:
                self._bind_target(element, scope, path, "unpack", statement, None, pos)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, scope, path, "unpack", statement, None, pos)
        else:
            # Attribute / Subscript targets: their inner expressions are reads.
            self._walk_expression(target, scope, path)
            function = scope.function
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and function is not None
                and function.self_name == target.value.id
                and function.class_scope is not None
            ):
                binding = Binding(
                    target.attr,
                    function.class_scope,
                    pos,
                    kind,
                    statement,
                    value,
                    path,
                    target=target,
                    remote=True,
                    context=scope,
                )
                function.class_scope.attr_bindings.setdefault(target.attr, []).append(binding)

    # -- statements -----------------------------------------------------------

    def _walk_statements(self, statements: list[ast.stmt], scope: Scope, path: Path) -> None:
        for statement in statements:
            self._walk_statement(statement, scope, path)

    def _block(self, kind: str, owner: ast.AST, branch: int, body: list[ast.stmt]) -> Block:
        return Block(kind, owner, branch, _exits(body))

    def _walk_statement(self, node: ast.stmt, scope: Scope, path: Path) -> None:
        walk_expression = self._walk_expression
        if isinstance(node, ast.Expr):
            walk_expression(node.value, scope, path)
        elif isinstance(node, ast.Assign):
            walk_expression(node.value, scope, path)
            self.assignments.append(Site(node, scope, path))
            value = node.value if len(node.targets) == 1 else None
            for target in node.targets:
                self._bind_target(target, scope, path, "assign", node, value, _end(node))
        elif isinstance(node, ast.AugAssign):
            walk_expression(node.value, scope, path)
            self.assignments.append(Site(node, scope, path))
            self._bind_target(node.target, scope, path, "augassign", node, node.value, _end(node))
        elif isinstance(node, ast.AnnAssign):
            walk_expression(node.annotation, scope, path)
            if node.value is not None:
                walk_expression(node.value, scope, path)
                self.assignments.append(Site(node, scope, path))
                self._bind_target(node.target, scope, path, "assign", node, node.value, _end(node))
        elif isinstance(node, _FUNCTION_DEFS):
            self._walk_function(node, scope, path)
        elif isinstance(node, ast.ClassDef):
            self._walk_class(node, scope, path)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                walk_expression(node.value, scope, path)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            walk_expression(node.iter, scope, path)
            self.loops.append(Site(node, scope, path))
            body_path = (*path, self._block("for", node, 0, node.body))
            self._bind_target(
                node.target, scope, body_path, "for", node, node.iter, _end(node.iter)
            )
            self._walk_statements(node.body, scope, body_path)
            if node.orelse:
                else_path = (*path, self._block("for", node, 1, node.orelse))
                self._walk_statements(node.orelse, scope, else_path)
        elif isinstance(node, ast.While):
            walk_expression(node.test, scope, path)
            self._walk_statements(
                node.body, scope, (*path, self._block("while", node, 0, node.body))
            )
            if node.orelse:
                else_path = (*path, self._block("while", node, 1, node.orelse))
                self._walk_statements(node.orelse, scope, else_path)
        elif isinstance(node, ast.If):
            walk_expression(node.test, scope, path)
            self._walk_statements(node.body, scope, (*path, self._block("if", node, 0, node.body)))
            if node.orelse:
                else_path = (*path, self._block("if", node, 1, node.orelse))
                self._walk_statements(node.orelse, scope, else_path)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            self.withs.append(Site(node, scope, path))
            for item in node.items:
                walk_expression(item.context_expr, scope, path)
                if item.optional_vars is not None:
                    self._bind_target(
                        item.optional_vars,
                        scope,
                        path,
                        "with",
                        item,
                        item.context_expr,
                        _end(item.context_expr),
                    )
            self._walk_statements(node.body, scope, path)
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self._walk_try(node, scope, path)  # type: ignore[arg-type]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.imports.add(node)
            for alias in node.names:
                if alias.name == "*":
                    continue
                local = alias.asname or alias.name.split(".", 1)[0]
                self._bind(scope, local, _end(node), "import", node, None, path)
        elif isinstance(node, ast.Global):
            scope.global_names.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.nonlocal_names.update(node.names)
        elif isinstance(node, ast.Delete):
            self.deletes.append(Site(node, scope, path))
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self._bind(scope, target.id, _end(node), "del", node, None, path)
                else:
                    walk_expression(target, scope, path)
        elif isinstance(node, ast.Match):
            walk_expression(node.subject, scope, path)
            for case in node.cases:
                case_path = (*path, self._block("case", node, 0, case.body))
                for pattern_node in ast.walk(case.pattern):
                    captured = getattr(pattern_node, "name", None)
                    if isinstance(captured, str):
                        self._bind(scope, captured, _end(case.pattern), "other", case, None, path)
                if case.guard is not None:
                    walk_expression(case.guard, scope, case_path)
                self._walk_statements(case.body, scope, case_path)
        else:
            # Raise, Assert, Pass, Break, Continue, type aliases: only expressions inside.
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    walk_expression(child, scope, path)

    def _walk_try(self, node: ast.Try, scope: Scope, path: Path) -> None:
        self._walk_statements(node.body, scope, (*path, self._block("try", node, 0, node.body)))
        for handler in node.handlers:
            handler_path = (*path, self._block("try", node, 1, handler.body))
            if handler.type is not None:
                self._walk_expression(handler.type, scope, path)
            if handler.name:
                self._bind(
                    scope, handler.name, _start(handler), "other", handler, None, handler_path
                )
            self._walk_statements(handler.body, scope, handler_path)
        if node.orelse:
            self._walk_statements(
                node.orelse, scope, (*path, self._block("try", node, 2, node.orelse))
            )
        self._walk_statements(node.finalbody, scope, path)

    def _walk_arguments(self, arguments: ast.arguments, scope: Scope, path: Path) -> None:
        for default in (*arguments.defaults, *arguments.kw_defaults):
            if default is not None:
                self._walk_expression(default, scope, path)

    def _bind_parameters(self, arguments: ast.arguments, scope: Scope, pos: Position) -> None:
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        if arguments.vararg:
            every.append(arguments.vararg)
        if arguments.kwarg:
            every.append(arguments.kwarg)
        for argument in every:
            self._bind(scope, argument.arg, pos, "param", argument, None, ())

    def _walk_function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope, path: Path
    ) -> None:
        for decorator in node.decorator_list:
            self._walk_expression(decorator, scope, path)
        self._walk_arguments(node.args, scope, path)
        for annotation_holder in (*node.args.args, *node.args.kwonlyargs):
            if annotation_holder.annotation is not None:
                self._walk_expression(annotation_holder.annotation, scope, path)
        self.defs.append(Site(node, scope, path))
        function = Scope("function", node, scope, definition_path=path)
        self.scopes.append(function)
        if scope.kind == "class":
            positional = [*node.args.posonlyargs, *node.args.args]
            plain_method = not any(
                isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                for d in node.decorator_list
            )
            if positional and plain_method:
                function.self_name = positional[0].arg
                function.class_scope = scope
        self._bind_parameters(node.args, function, _start(node))
        self._walk_statements(node.body, function, ())
        self._bind(scope, node.name, _end(node), "def", node, None, path)

    def _walk_class(self, node: ast.ClassDef, scope: Scope, path: Path) -> None:
        for expression in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self._walk_expression(expression, scope, path)
        class_scope = Scope("class", node, scope, definition_path=path)
        self.scopes.append(class_scope)
        self._walk_statements(node.body, class_scope, ())
        self._bind(scope, node.name, _end(node), "class", node, None, path)

    # -- expressions ----------------------------------------------------------

    def _walk_expression(self, root: ast.expr, scope: Scope, path: Path) -> None:
        """Index calls and binary operations; open scopes for lambdas and comprehensions."""
        stack: list[ast.AST] = [root]
        calls, binops, calls_by_name = self.calls, self.binops, self.calls_by_name
        while stack:
            node = stack.pop()
            if isinstance(node, _LEAVES):
                continue
            node_type = type(node)
            if node_type is ast.Call:
                site = Site(node, scope, path)
                calls.append(site)
                func = node.func  # type: ignore[attr-defined]
                callee = (
                    func.id
                    if type(func) is ast.Name
                    else func.attr
                    if type(func) is ast.Attribute
                    else None
                )
                if callee is not None:
                    by_name = calls_by_name.get(callee)
                    if by_name is None:
                        calls_by_name[callee] = [site]
                    else:
                        by_name.append(site)
                stack.append(node.func)  # type: ignore[attr-defined]
                stack.extend(node.args)  # type: ignore[attr-defined]
                stack.extend(k.value for k in node.keywords)  # type: ignore[attr-defined]
                continue
            if node_type is ast.BinOp:
                binops.append(Site(node, scope, path))
                stack.append(node.left)  # type: ignore[attr-defined]
                stack.append(node.right)  # type: ignore[attr-defined]
                continue
            if node_type is ast.Lambda:
                self._walk_lambda(node, scope, path)  # type: ignore[arg-type]
                continue
            if node_type in _COMPREHENSIONS:
                self._walk_comprehension(node, scope, path)  # type: ignore[arg-type]
                continue
            if node_type is ast.NamedExpr:
                value = node.value  # type: ignore[attr-defined]
                self._walk_expression(value, scope, path)
                target = node.target  # type: ignore[attr-defined]
                self._bind(scope, target.id, _end(node), "assign", node, value, path)
                continue
            for field_name in _expression_fields(node_type):
                child = getattr(node, field_name, None)
                if child is None:
                    continue
                if isinstance(child, list):
                    stack.extend(c for c in child if isinstance(c, ast.AST))
                elif isinstance(child, ast.AST):
                    stack.append(child)

    def _walk_lambda(self, node: ast.Lambda, scope: Scope, path: Path) -> None:
        self._walk_arguments(node.args, scope, path)
        lambda_scope = Scope("lambda", node, scope, definition_path=path)
        self.scopes.append(lambda_scope)
        self._bind_parameters(node.args, lambda_scope, _start(node))
        self._walk_expression(node.body, lambda_scope, ())

    def _walk_comprehension(
        self,
        node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        scope: Scope,
        path: Path,
    ) -> None:
        # The first iterable is evaluated in the enclosing scope, the rest inside.
        self._walk_expression(node.generators[0].iter, scope, path)
        inner = Scope("comprehension", node, scope, definition_path=path)
        self.scopes.append(inner)
        for index, generator in enumerate(node.generators):
            if index:
                self._walk_expression(generator.iter, inner, path)
            self._bind_target(
                generator.target, inner, path, "for", generator, None, _start(generator.target)
            )
            for condition in generator.ifs:
                self._walk_expression(condition, inner, path)
        if isinstance(node, ast.DictComp):
            self._walk_expression(node.key, inner, path)
            self._walk_expression(node.value, inner, path)
        else:
            self._walk_expression(node.elt, inner, path)
