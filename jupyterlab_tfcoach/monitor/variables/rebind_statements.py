"""Where a cell rebinds a variable, read from the cell's own source.

The namespace diff sees that ``w`` *was* a variable and *is* a tensor, but only
across cells, and it cannot say which line did it. Learners usually create the
variable and train it in the same cell, so the cell's source is read too: every
statement that assigns a name or attribute from an expression that reads that
same name or attribute (``w = w - lr * g``, ``self.w -= lr * g``,
``lm.w = tf.clip_by_norm(lm.w, 3.0)``) is a candidate, and so is every target
assigned from a variable-creating call (``tf.Variable(...)``, ``add_weight``).
Whether a candidate really turned a variable into a tensor is decided at run
time from the values' types; this module only knows the code.

Parsing is skipped for cells in which no line even looks like such a statement
(a regular expression per line), so ordinary cells cost a few microseconds.
"""

from __future__ import annotations

import ast
import linecache
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor.syntax import (
    child_nodes,
    dotted_name,
    parsed_source,
    source_segment,
    subtree_nodes,
)
from jupyterlab_tfcoach.monitor.word_gates import word_gate

# Calls that create a variable (``tf.Variable``, ``keras.Variable``,
# ``self.add_weight``, ``tf.compat.v1.get_variable``...), by their last name.
_CREATING_CALLS = frozenset({"Variable", "add_weight", "add_variable", "get_variable"})
# A statement that may rebind: ``a.b -= ...`` or ``a.b = ... a.b ...`` on one line.
_CANDIDATE_LINE = re.compile(
    r"^\s*(?P<target>[A-Za-z_][\w.]*)\s*(?:[-+*/]=.*|=(?!=)(?P<value>.*))$"
)
_CREATION_HINT = word_gate(r"\b(?:Variable|add_weight|add_variable|get_variable)\s*\(")
MAX_CELL_CHARS = 200_000
MAX_STATEMENT_LINES = 12

_AUG_METHODS = {ast.Sub: "assign_sub", ast.Add: "assign_add"}
_OPERATORS = {ast.Sub: "-", ast.Add: "+", ast.Mult: "*", ast.Div: "/"}
# Reductions that give a single number unless told an axis, by their last name.
_REDUCTIONS = frozenset(
    {f"reduce_{n}" for n in ("sum", "mean", "max", "min", "prod", "std", "variance")} | {"norm"}
)


def _single_number(node: ast.AST, is_number: Callable[[str], bool], depth: int = 0) -> bool:
    if depth > 50:
        return False
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.Name):
        return is_number(node.id)
    if isinstance(node, ast.UnaryOp):
        return _single_number(node.operand, is_number, depth + 1)
    if isinstance(node, ast.BinOp):
        return _single_number(node.left, is_number, depth + 1) and _single_number(
            node.right, is_number, depth + 1
        )
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        return (
            name in _REDUCTIONS
            and len(node.args) == 1
            and not any(k.arg in ("axis", None) for k in node.keywords)
        )
    return False


@dataclass(frozen=True)
class Rebind:
    """One statement that assigns ``target`` from an expression reading ``target``."""

    target: str  # as written: "w", "lin.w", "self.mean"
    line: int  # 1-based, within the cell (or file)
    statement: str  # the statement's source, one line when possible
    fix: str  # the same update done in place: "lin.w.assign_sub(lr * grad_w)"
    in_function: str | None  # qualified name of the enclosing def, None at top level
    in_class: str | None  # name of the enclosing class, if any
    # When ``fix`` is an ``assign_sub``/``assign_add``: its argument, and the same update
    # written with ``assign``, for a step that is a single number (those two methods do
    # not broadcast: ``w.assign_sub(0.5)`` fails for a vector ``w``).
    step: str | None = None
    broadcast_fix: str | None = None
    # For a plain name bound by an enclosing ``for`` of the cell (``for v, g in zip(...)``):
    # that loop's iterable as written and its line. Rebinding such a name changes only the
    # loop's name, never the variables the iterable holds.
    loop_iterable: str | None = None
    loop_line: int | None = None

    def fix_given(self, is_number: Callable[[str], bool]) -> str:
        """``fix``, or ``broadcast_fix`` when the step is surely a single number (see
        ``single_number_step``)."""
        if self.step is None or self.broadcast_fix is None:
            return self.fix
        return self.broadcast_fix if single_number_step(self.step, is_number) else self.fix

    @property
    def attribute(self) -> str | None:
        """The last attribute of an attribute target (``mean`` for ``self.mean``)."""
        return self.target.rsplit(".", 1)[1] if "." in self.target else None

    @property
    def root(self) -> str:
        return self.target.split(".", 1)[0]


def single_number_step(step: str, is_number: Callable[[str], bool]) -> bool:
    """Whether the source ``step`` surely evaluates to a single number: a literal, a
    reduction without ``axis``, a name ``is_number`` says holds a Python number, or
    arithmetic on those. ``assign_sub``/``assign_add`` do not broadcast such a step over a
    variable with dimensions (``w.assign_sub(0.5)`` fails for a vector ``w``)."""
    try:
        node = ast.parse(step.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return _single_number(node, is_number)


@dataclass
class CellRebinds:
    """What one cell's source says about variables."""

    rebinds: list[Rebind]
    created: set[str]  # targets assigned from a variable-creating call ("w", "self.w")
    created_attributes: set[str]  # their last attributes ("w" for "self.w")


EMPTY = CellRebinds([], set(), set())


def _text(node: ast.AST) -> str | None:
    """How the target reads in code: ``a.b`` or ``m.get_layer("x").w``."""
    dotted = dotted_name(node)
    if dotted is not None:
        return dotted
    if isinstance(node, ast.Attribute):
        try:
            return ast.unparse(node)
        except Exception:
            return None
    return None


def _reads(expression: ast.AST, target: str) -> bool:
    # ``target`` is a dotted name: a node reads as it only if the expression holds its first
    # name, so that cheap test comes first, and a plain name needs no node's text at all (an
    # attribute's text always has a dot).
    root, dot, _ = target.partition(".")
    nodes = subtree_nodes(expression)
    if not any(isinstance(node, ast.Name) and node.id == root for node in nodes):
        return False
    if not dot:
        return True
    return any(
        isinstance(node, (ast.Name, ast.Attribute)) and _text(node) == target for node in nodes
    )


def _creating_call(value: ast.AST) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in _CREATING_CALLS


# Steps that need no parentheses after ``w -``: atoms and tighter-binding operators.
_TIGHT = (ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Call)


def update_fixes(statement: ast.stmt, source: str) -> tuple[str, str | None, str | None] | None:
    """``(fix, step, broadcast_fix)``: the in-place update that does what ``statement``
    meant, in the user's names; for an ``assign_sub``/``assign_add`` fix, its argument and
    the same update written with ``assign`` (see ``Rebind.fix_given``)."""
    if isinstance(statement, ast.AugAssign):
        target = _text(statement.target)
        value = source_segment(source, statement.value)
        if target is None or value is None:
            return None
        method = _AUG_METHODS.get(type(statement.op))
        operator = _OPERATORS.get(type(statement.op))
        if operator is None:
            return None
        tight = isinstance(statement.value, _TIGHT) or (
            isinstance(statement.value, ast.BinOp)
            and isinstance(statement.value.op, (ast.Mult, ast.Div))
        )
        operand = value if tight and operator in "-+" else f"({value})"
        assigned = f"{target}.assign({target} {operator} {operand})"
        if method is not None:
            return f"{target}.{method}({value})", value, assigned
        return assigned, None, None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = _text(statement.targets[0])
        if target is None:
            return None
        value = statement.value
        whole = source_segment(source, value)
        assigned = f"{target}.assign({whole})" if whole is not None else None
        # ``w = w - step`` and ``w = w + step``: the idiomatic assign_sub/assign_add.
        if (
            isinstance(value, ast.BinOp)
            and type(value.op) in _AUG_METHODS
            and _text(value.left) == target
        ):
            step = source_segment(source, value.right)
            if step is not None:
                return f"{target}.{_AUG_METHODS[type(value.op)]}({step})", step, assigned
        return (assigned, None, None) if assigned is not None else None
    return None


# The fields that hold blocks of statements, in ``_fields`` order for every node kind.
_STATEMENT_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")
_BLOCK_NODES = (ast.stmt, ast.excepthandler, ast.match_case)


class _Collector(ast.NodeVisitor):
    def generic_visit(self, node: ast.AST) -> None:
        # Only statements bind names and attributes, and no expression holds a statement
        # (a lambda's body is an expression): the expressions between them are not
        # visited at all, the larger part of an edited cell's nodes.
        for field in _STATEMENT_FIELDS:
            block = getattr(node, field, None)
            if type(block) is list:
                for child in block:
                    if isinstance(child, _BLOCK_NODES):
                        self.visit(child)

    def __init__(self, source: str) -> None:
        self.source = source
        self.found = CellRebinds([], set(), set())
        self._functions: list[str] = []
        self._classes: list[str] = []
        # Enclosing ``for`` loops: the names each binds, its iterable's source, its line.
        self._loops: list[tuple[frozenset[str], str, int]] = []

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        bound = frozenset(n.id for n in subtree_nodes(node.target) if isinstance(n, ast.Name))
        iterable = source_segment(self.source, node.iter) or ""
        self.visit(node.target)
        self.visit(node.iter)
        self._loops.append((bound, " ".join(iterable.split()), node.lineno))
        for child in node.body:
            self.visit(child)
        self._loops.pop()
        for child in node.orelse:
            self.visit(child)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def _loop_binding(self, target: str) -> tuple[str | None, int | None]:
        if "." in target:
            return None, None
        for bound, iterable, line in reversed(self._loops):
            if target in bound:
                return (iterable or None), line
        return None, None

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._functions.append(node.name)
        self.generic_visit(node)
        self._functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._classes.append(node.name)
        functions, self._functions = self._functions, []
        self.generic_visit(node)
        self._functions = functions
        self._classes.pop()

    def _record(self, node: ast.Assign | ast.AugAssign, target: str) -> None:
        fixes = update_fixes(node, self.source)
        if fixes is None:
            return
        fix, step, broadcast_fix = fixes
        statement = source_segment(self.source, node) or target
        loop_iterable, loop_line = self._loop_binding(target)
        self.found.rebinds.append(
            Rebind(
                target=target,
                line=node.lineno,
                statement=" ".join(statement.split()),
                fix=fix,
                in_function=".".join(self._functions) or None,
                in_class=self._classes[-1] if self._classes else None,
                step=step,
                broadcast_fix=broadcast_fix,
                loop_iterable=loop_iterable,
                loop_line=loop_line,
            )
        )

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1:
            target = dotted_name(node.targets[0])
            if target is not None:
                if _creating_call(node.value):
                    self.found.created.add(target)
                    if "." in target:
                        self.found.created_attributes.add(target.rsplit(".", 1)[1])
                elif _reads(node.value, target):
                    self._record(node, target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        target = dotted_name(node.target)
        if target is not None and node.value is not None and _creating_call(node.value):
            self.found.created.add(target)
            if "." in target:
                self.found.created_attributes.add(target.rsplit(".", 1)[1])
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        target = dotted_name(node.target)
        if target is not None:
            self._record(node, target)
        self.generic_visit(node)


def _python_lines(cell: str) -> str:
    """The cell as Python: IPython's magic and shell lines become blank lines.

    Line numbers stay those of the cell. A cell magic whose body is Python
    (``%%time``) keeps its body; any other cell magic has no Python at all.
    """
    lines = cell.split("\n")
    first = lines[0].lstrip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if magic not in ("time", "timeit", "capture", "prun", "debug"):
            return ""
        lines[0] = ""
    out: list[str] = []
    continued = False
    for line in lines:
        stripped = line.lstrip()
        if continued or stripped.startswith(("!", "%", "?")) or stripped.endswith("?"):
            # ``!pip install ... \`` continues on the next line: blank that one too.
            continued = stripped.startswith(("!", "%")) or continued
            continued = continued and line.rstrip().endswith("\\")
            out.append("")
            continue
        out.append(line)
    return textwrap.dedent("\n".join(out))


def cell_rebinds(cell: str) -> CellRebinds:
    """The rebinding statements and variable creations of one cell's source."""
    if not cell or len(cell) > MAX_CELL_CHARS:
        return EMPTY
    if not _CREATION_HINT.search(cell) and not any(
        _looks_like_rebind(line) for line in cell.split("\n") if "=" in line
    ):
        return EMPTY
    source = _python_lines(cell)
    tree = parsed_source(source)
    if tree is None:
        return EMPTY
    # The tree's children table (shared with the checks after this one): ``_reads`` reads
    # each statement's subtree from it instead of walking it.
    child_nodes(tree)
    collector = _Collector(source)
    try:
        collector.visit(tree)
    except RecursionError:
        return EMPTY
    return collector.found


def _looks_like_rebind(line: str) -> bool:
    match = _CANDIDATE_LINE.match(line)
    if match is None:
        return False
    value = match.group("value")
    if value is None:
        return True  # an augmented assignment
    target = match.group("target")
    return re.search(rf"(?<![\w.]){re.escape(target)}(?!\w)", value) is not None


def statement_at(filename: str, line: int, attribute: str) -> Rebind | None:
    """The assignment to ``<something>.attribute`` at ``filename:line`` (a running frame).

    Reads the source through ``linecache``, where IPython keeps every cell. A
    statement continued over several lines is read until it parses.
    """
    text = linecache.getline(filename, line)
    if not text.strip():
        return None
    for extra in range(MAX_STATEMENT_LINES):
        if extra:
            following = linecache.getline(filename, line + extra)
            if not following:
                return None
            text += following
        try:
            tree = ast.parse(textwrap.dedent(text))
        except SyntaxError:
            continue
        source = textwrap.dedent(text)
        for node in tree.body:
            target_node = (
                node.targets[0]
                if isinstance(node, ast.Assign) and len(node.targets) == 1
                else node.target
                if isinstance(node, ast.AugAssign)
                else None
            )
            target = _text(target_node) if target_node is not None else None
            if target is None or not target.endswith(f".{attribute}"):
                continue
            fixes = update_fixes(node, source)
            if fixes is None:
                return None
            fix, step, broadcast_fix = fixes
            statement = source_segment(source, node) or target
            return Rebind(
                target, line, " ".join(statement.split()), fix, None, None, step, broadcast_fix
            )
        return None
    return None
