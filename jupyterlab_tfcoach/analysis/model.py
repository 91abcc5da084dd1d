"""One ordered walk over the module that every rule shares.

The walk builds the scopes with their name bindings (in source order, with
the conditional blocks each binding sits in) and indexes the nodes rules look
at (calls, binary operations, assignments, loops, ``with`` statements,
``del`` statements, function definitions), each with its scope and block
path. Nothing is resolved or inferred here: imports are only collected;
``resolution.py`` resolves names and ``bindings.py`` evaluates values lazily, on a
rule's demand, once all imports are known.

Before the walk goes into a statement's expressions, those nested too deeply to check
are cut (``nesting.py``); ``Model.cut`` holds the first node cut from each statement. Every
rule runs after the walk, on the cut tree, so nothing of the analysis recurses past
``errors.MAX_NESTING`` levels.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.analysis.budget import TimeBudget
from jupyterlab_tfcoach.analysis.errors import MAX_NESTING
from jupyterlab_tfcoach.analysis.imports import TFImports
from jupyterlab_tfcoach.analysis.nesting import (
    NOT_CHILD_FIELDS,
    LineSpans,
    cut_statement,
    line_starts,
)

Position = tuple[int, int]  # (line, UTF-8 byte column) as ast reports; only compared


@dataclass(eq=False, slots=True)
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
    # It ends with ``break`` / ``continue``: the rest of the loop body is skipped.
    leaves_iteration: bool = False

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
                and (
                    (
                        isinstance(self.value, (ast.BinOp, ast.UnaryOp))
                        and refers_to(self.value, self.target)
                    )
                    or _is_update_op_call(self.value, self.target)
                )
            )
        return self._self_referential


# Ops spelled like arithmetic (``self.w = tf.subtract(self.w, g)``): an update derived from
# the target, as ``self.w - g`` is. By their last name only: the model resolves no imports,
# and a user function called ``subtract`` that takes the target is an update just the same.
_UPDATE_OP_NAMES = frozenset(
    {
        "add",
        "subtract",
        "multiply",
        "divide",
        "truediv",
        "maximum",
        "minimum",
        "clip_by_value",
        "clip_by_norm",
        "l2_normalize",
        "scalar_mul",
    }
)


def _is_update_op_call(value: ast.expr | None, target: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    spelled = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return spelled in _UPDATE_OP_NAMES and any(
        refers_to(argument, target) and type(argument) is type(target) for argument in value.args
    )


@dataclass(eq=False, slots=True)
class Scope:
    kind: str  # module, class, function, lambda, comprehension
    node: ast.AST
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    # Few scopes declare any: they share an empty frozenset until one does.
    global_names: frozenset[str] = frozenset()
    nonlocal_names: frozenset[str] = frozenset()
    # For methods: the name of the instance parameter and the class scope.
    self_name: str | None = None
    class_scope: Scope | None = None
    # For classes: ``self.<attr> = value`` bindings made in any method.
    attr_bindings: dict[str, list[Binding]] = field(default_factory=dict)
    definition_path: Path = ()  # blocks of the parent scope around the definition
    # Calls evaluated in this scope itself, in walk order (rules that only care about
    # the code of some functions visit those, not every call of the file).
    calls: list[Site] = field(default_factory=list)

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


@dataclass(eq=False, slots=True)
class Site:
    node: ast.AST
    scope: Scope
    path: Path


_FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# A statement on lines of at most this many characters cannot nest ``MAX_NESTING`` levels
# (``nesting.py``): it is walked without looking further.
_SHORT = MAX_NESTING // 2
_ELIF_BLOCKS = 32  # see ``Model._walk_if``
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# Popped from the walk stack and dropped at once: names, literals, and the None of an
# absent optional child (``Slice.lower``, the key of ``**d`` in a dict display).
_LEAF_TYPES = frozenset({ast.Name, ast.Constant, type(None)})

# Per expression type, its child fields in ``_fields`` order, each with whether it is
# a list. Built from the first node of each type seen: list fields are always lists,
# and an optional child that is None there is pushed as None later (a leaf). Lets the
# hot loops skip ``ast.iter_child_nodes`` and its per-field type guessing.
_CHILD_PLANS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _child_plan(node: ast.AST) -> tuple[tuple[str, bool], ...]:
    plan = _CHILD_PLANS.get(type(node))
    if plan is None:
        fields = []
        for name in type(node)._fields:
            # Fields that never hold children; those that may be None or a string
            # (``keyword.arg`` for ``**kw``) must be listed: the first node cannot tell.
            if name in NOT_CHILD_FIELDS:
                continue
            child = getattr(node, name, None)
            if child is None or isinstance(child, ast.AST):
                fields.append((name, False))
            elif isinstance(child, list):
                fields.append((name, True))
        plan = tuple(fields)
        _CHILD_PLANS[type(node)] = plan
    return plan


def _exits(statements: list[ast.stmt]) -> bool:
    return bool(statements) and isinstance(statements[-1], (ast.Return, ast.Raise))


def _leaves_iteration(statements: list[ast.stmt]) -> bool:
    return bool(statements) and isinstance(statements[-1], (ast.Break, ast.Continue))


def _start(node: ast.AST) -> Position:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _end(node: ast.AST) -> Position:
    return (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def parameters(arguments: ast.arguments) -> list[ast.arg]:
    """Every parameter a ``def`` or ``lambda`` binds, in order."""
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return every


def refers_to(expression: ast.AST, target: ast.expr) -> bool:
    """Whether ``expression`` reads ``target`` (a Name, or ``obj.attr``) anywhere."""
    if isinstance(target, ast.Name):
        name, owner, attr = target.id, None, None
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        name, owner, attr = None, target.value.id, target.attr
    else:
        return False
    stack: list[ast.AST | None] = [expression]
    plans = _CHILD_PLANS
    while stack:
        node = stack.pop()
        node_type = type(node)
        if node_type is ast.Name:
            if node.id == name:  # type: ignore[union-attr]
                return True
            continue
        if node_type in _LEAF_TYPES:
            continue
        if node_type is ast.Attribute:
            if (
                node.attr == attr  # type: ignore[union-attr]
                and type(node.value) is ast.Name  # type: ignore[union-attr]
                and node.value.id == owner  # type: ignore[union-attr]
            ):
                return True
            stack.append(node.value)  # type: ignore[union-attr]
            continue
        for field_name, is_list in plans.get(node_type) or _child_plan(node):  # type: ignore[arg-type]
            if is_list:
                stack.extend(getattr(node, field_name))
            else:
                stack.append(getattr(node, field_name, None))
    return False


class Model:
    """Scopes, bindings and node indexes of one module."""

    def __init__(
        self,
        tree: ast.Module,
        budget: TimeBudget | None = None,
        lines: Sequence[str] | None = None,
    ) -> None:
        """``lines``: the source's (``positions.split_lines``), if known: they make the check
        for deep nesting cheaper (``nesting.py``), not different."""
        self.tree = tree
        self.budget = budget  # checked at each name lookup (``resolution.py``)
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
        self.import_statements: list[ast.Import | ast.ImportFrom] = []  # any module's imports
        self.asserts: list[ast.Assert] = []
        # ``name = f(...)`` name bindings, in walk order: lets rules find the names bound
        # to a call (``step = tf.function(f)``) without scanning every binding.
        self.call_assignments: list[Binding] = []
        # ``id`` of a statement list -> its block, for finding the path of a position
        # afterwards (``lookup.py``). Only lists that are blocks in some path are here.
        self.blocks: dict[int, Block] = {}
        # The first node cut from each statement nested too deeply to check, in walk order.
        self.cut: list[ast.AST] = []
        self._spans = LineSpans(line_starts(lines) if lines is not None else None)
        self._walk_statements(tree.body, self.module, ())

    def release(self) -> None:
        """Break the scope <-> binding reference cycles so memory is freed at once."""
        for scope in self.scopes:
            scope.bindings.clear()
            scope.attr_bindings.clear()
            scope.calls.clear()

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
        # Positional arguments: one binding per name bound, and keywords cost more per call.
        binding = Binding(name, owner, pos, kind, node, value, path, target, remote, scope)
        bindings = owner.bindings.get(name)
        if bindings is None:
            owner.bindings[name] = [binding]
        else:
            bindings.append(binding)
        if type(value) is ast.Call and kind == "assign":
            self.call_assignments.append(binding)

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
        # One dict lookup per statement instead of a chain of isinstance checks.
        handlers = _STATEMENT_HANDLERS
        spans = self._spans
        starts = spans.starts
        for statement in statements:
            # Most statements fit in ``_SHORT`` characters: told here, without a call.
            short = False
            if starts is not None:
                first = statement.lineno
                last = statement.end_lineno  # type: ignore[attr-defined]
                short = starts[last] - starts[first - 1] + (last - first) <= _SHORT
            if not short and spans.may_nest_too_deep(statement):
                self._cut_too_deep(statement)
            handler = handlers.get(type(statement))
            if handler is None:
                self._walk_other(statement, scope, path)
            else:
                handler(self, statement, scope, path)

    def _cut_too_deep(self, statement: ast.stmt) -> None:
        first_cut = cut_statement(statement, self._spans)
        if first_cut is not None:
            self.cut.append(first_cut)

    def _block(self, kind: str, owner: ast.AST, branch: int, body: list[ast.stmt]) -> Block:
        block = Block(kind, owner, branch, _exits(body), _leaves_iteration(body))
        self.blocks[id(body)] = block
        return block

    def _walk_expr_statement(self, node: ast.Expr, scope: Scope, path: Path) -> None:
        self._walk_expression(node.value, scope, path)

    def _walk_assign(self, node: ast.Assign, scope: Scope, path: Path) -> None:
        self._walk_expression(node.value, scope, path)
        self.assignments.append(Site(node, scope, path))
        value = node.value if len(node.targets) == 1 else None
        end = (node.end_lineno, node.end_col_offset)  # ``_end``, inline: the commonest statement
        for target in node.targets:
            self._bind_target(target, scope, path, "assign", node, value, end)

    def _walk_aug_assign(self, node: ast.AugAssign, scope: Scope, path: Path) -> None:
        self._walk_expression(node.value, scope, path)
        self.assignments.append(Site(node, scope, path))
        self._bind_target(node.target, scope, path, "augassign", node, node.value, _end(node))

    def _walk_ann_assign(self, node: ast.AnnAssign, scope: Scope, path: Path) -> None:
        self._walk_expression(node.annotation, scope, path)
        if node.value is not None:
            self._walk_expression(node.value, scope, path)
            self.assignments.append(Site(node, scope, path))
            self._bind_target(node.target, scope, path, "assign", node, node.value, _end(node))

    def _walk_return(self, node: ast.Return, scope: Scope, path: Path) -> None:
        if node.value is not None:
            self._walk_expression(node.value, scope, path)

    def _walk_for(self, node: ast.For | ast.AsyncFor, scope: Scope, path: Path) -> None:
        self._walk_expression(node.iter, scope, path)
        self.loops.append(Site(node, scope, path))
        body_path = (*path, self._block("for", node, 0, node.body))
        self._bind_target(node.target, scope, body_path, "for", node, node.iter, _end(node.iter))
        self._walk_statements(node.body, scope, body_path)
        self._walk_else("for", node, scope, path)

    def _walk_else(
        self, kind: str, node: ast.For | ast.AsyncFor | ast.While | ast.If, scope: Scope, path: Path
    ) -> None:
        if node.orelse:
            else_path = (*path, self._block(kind, node, 1, node.orelse))
            self._walk_statements(node.orelse, scope, else_path)

    def _walk_while(self, node: ast.While, scope: Scope, path: Path) -> None:
        self._walk_expression(node.test, scope, path)
        self._walk_statements(node.body, scope, (*path, self._block("while", node, 0, node.body)))
        self._walk_else("while", node, scope, path)

    def _walk_if(self, node: ast.If, scope: Scope, path: Path) -> None:
        # An ``elif`` is an ``If`` alone in the ``else`` of the one before, and a chain may
        # be thousands long (no indentation limits it): walked in a loop, not recursively.
        # Its ``else`` blocks stop being added to the path after ``_ELIF_BLOCKS`` branches,
        # or the paths (one per branch) would make a long chain quadratic. What a block in
        # a path tells stays true: each branch has its own body block, and an ``elif`` test
        # still precedes the later branches.
        elifs = 0
        while True:
            self._walk_expression(node.test, scope, path)
            body_path = (*path, self._block("if", node, 0, node.body))
            self._walk_statements(node.body, scope, body_path)
            orelse = node.orelse
            if not orelse:
                return
            is_elif = len(orelse) == 1 and type(orelse[0]) is ast.If
            if not is_elif:
                self._walk_statements(orelse, scope, (*path, self._block("if", node, 1, orelse)))
                return
            if elifs < _ELIF_BLOCKS:
                path = (*path, self._block("if", node, 1, orelse))
            elifs += 1
            node = orelse[0]
            if self._spans.may_nest_too_deep(node):  # not walked by ``_walk_statements``
                self._cut_too_deep(node)

    def _walk_with(self, node: ast.With | ast.AsyncWith, scope: Scope, path: Path) -> None:
        self.withs.append(Site(node, scope, path))
        for item in node.items:
            self._walk_expression(item.context_expr, scope, path)
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

    def _walk_import(self, node: ast.Import | ast.ImportFrom, scope: Scope, path: Path) -> None:
        self.imports.add(node)
        self.import_statements.append(node)
        for alias in node.names:
            if alias.name == "*":
                continue
            local = alias.asname or alias.name.split(".", 1)[0]
            self._bind(scope, local, _end(node), "import", node, None, path)

    def _walk_global(self, node: ast.Global, scope: Scope, path: Path) -> None:
        scope.global_names = scope.global_names.union(node.names)

    def _walk_nonlocal(self, node: ast.Nonlocal, scope: Scope, path: Path) -> None:
        scope.nonlocal_names = scope.nonlocal_names.union(node.names)

    def _walk_delete(self, node: ast.Delete, scope: Scope, path: Path) -> None:
        self.deletes.append(Site(node, scope, path))
        for target in node.targets:
            if isinstance(target, ast.Name):
                self._bind(scope, target.id, _end(node), "del", node, None, path)
            else:
                self._walk_expression(target, scope, path)

    def _walk_match(self, node: ast.Match, scope: Scope, path: Path) -> None:
        self._walk_expression(node.subject, scope, path)
        for case in node.cases:
            case_path = (*path, self._block("case", node, 0, case.body))
            for pattern_node in ast.walk(case.pattern):
                captured = getattr(pattern_node, "name", None)
                if isinstance(captured, str):
                    self._bind(scope, captured, _end(case.pattern), "other", case, None, path)
            if case.guard is not None:
                self._walk_expression(case.guard, scope, case_path)
            self._walk_statements(case.body, scope, case_path)

    def _walk_other(self, node: ast.stmt, scope: Scope, path: Path) -> None:
        # Raise, Assert, Pass, Break, Continue, type aliases: only expressions inside.
        if type(node) is ast.Assert:
            self.asserts.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._walk_expression(child, scope, path)

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
        for argument in parameters(arguments):
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
        stack: list[ast.AST | None] = [root]
        calls, binops, calls_by_name = self.calls, self.binops, self.calls_by_name
        scope_calls = scope.calls
        plans, leaf_types = _CHILD_PLANS, _LEAF_TYPES
        # Children are pushed in field order (None included, dropped when popped), so
        # calls and binary operations are indexed in the same order as ever.
        while stack:
            node = stack.pop()
            node_type = type(node)
            # Attributes, the most common inner node, have one child and index nothing:
            # go down the chain (``tf.keras.layers``) here instead of through the stack.
            while node_type is ast.Attribute:
                node = node.value  # type: ignore[union-attr]
                node_type = type(node)
            if node_type in leaf_types:
                continue
            if node_type is ast.Call:
                site = Site(node, scope, path)  # type: ignore[arg-type]
                calls.append(site)
                scope_calls.append(site)
                func = node.func  # type: ignore[union-attr]
                func_type = type(func)
                callee = (
                    func.id
                    if func_type is ast.Name
                    else func.attr
                    if func_type is ast.Attribute
                    else None
                )
                if callee is not None:
                    by_name = calls_by_name.get(callee)
                    if by_name is None:
                        calls_by_name[callee] = [site]
                    else:
                        by_name.append(site)
                stack.append(func)
                stack.extend(node.args)  # type: ignore[union-attr]
                for item in node.keywords:  # type: ignore[union-attr]
                    stack.append(item.value)
                continue
            if node_type is ast.BinOp:
                binops.append(Site(node, scope, path))  # type: ignore[arg-type]
                stack.append(node.left)  # type: ignore[union-attr]
                stack.append(node.right)  # type: ignore[union-attr]
                continue
            if node_type is ast.Lambda:
                self._walk_lambda(node, scope, path)  # type: ignore[arg-type]
                continue
            if node_type in _COMPREHENSIONS:
                self._walk_comprehension(node, scope, path)  # type: ignore[arg-type]
                continue
            if node_type is ast.NamedExpr:
                value = node.value  # type: ignore[union-attr]
                self._walk_expression(value, scope, path)
                target = node.target  # type: ignore[union-attr]
                self._bind(scope, target.id, _end(node), "assign", node, value, path)  # type: ignore[arg-type]
                continue
            for field_name, is_list in plans.get(node_type) or _child_plan(node):  # type: ignore[arg-type]
                if is_list:
                    stack.extend(getattr(node, field_name))
                else:
                    stack.append(getattr(node, field_name, None))

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


_STATEMENT_HANDLERS: dict[type, Callable[[Model, Any, Scope, Path], None]] = {
    ast.Expr: Model._walk_expr_statement,
    ast.Assign: Model._walk_assign,
    ast.AugAssign: Model._walk_aug_assign,
    ast.AnnAssign: Model._walk_ann_assign,
    ast.FunctionDef: Model._walk_function,
    ast.AsyncFunctionDef: Model._walk_function,
    ast.ClassDef: Model._walk_class,
    ast.Return: Model._walk_return,
    ast.For: Model._walk_for,
    ast.AsyncFor: Model._walk_for,
    ast.While: Model._walk_while,
    ast.If: Model._walk_if,
    ast.With: Model._walk_with,
    ast.AsyncWith: Model._walk_with,
    ast.Try: Model._walk_try,
    ast.Import: Model._walk_import,
    ast.ImportFrom: Model._walk_import,
    ast.Global: Model._walk_global,
    ast.Nonlocal: Model._walk_nonlocal,
    ast.Delete: Model._walk_delete,
    ast.Match: Model._walk_match,
}
if hasattr(ast, "TryStar"):  # Python 3.11+: ``try: ... except* ...``
    _STATEMENT_HANDLERS[ast.TryStar] = Model._walk_try
