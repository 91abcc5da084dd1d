"""Does every fix the monitor prints make the learner's cell run?

usage: python benchmarks/audit_printed_fixes.py <folder> [--out audit.json] [--fresh]

Each notebook in ``<folder>`` runs top to bottom in a real kernel after ``%load_ext
jupyterlab_tfcoach``, as in ``bench_learner_notebooks.py``. When a cell raises and its
report's error entry prints a fix (code spans after ``Fix: ``), the fix is applied to the
cell the way a learner would apply it, and the fixed cell runs:

- a span that parses as a statement replaces the cell's line it rewrites: the line that
  assigns the same target (the failing line first, also when it assigns an item of it,
  else the last one before it), or the line that makes the same call; an assignment to a
  name the cell reads but never assigns is added before the failing line (the learner
  re-runs the line where it was made); a new statement the prose puts "before line N" (of
  this cell) is inserted there;
- a span that is an expression replaces the sub-expression of the failing line it
  rewrites: the same call, else the largest part of the line it wraps (``x`` in
  ``tf.cast(x, tf.float32)``), else the most alike part of the same kind;
- a span the prose gives "on line N" or "in place of lines N-M" replaces those lines;
- anything else (prose in code quotes, placeholders such as ``f(...)``) is not applicable.

The fixed cell's outcome is one of: ``fixed`` (it no longer raises), ``same error`` (the
same exception at the failing line or later in the cell), ``another error``, or ``not
applicable``. By default the fixed cell runs in the same kernel right after the failing one,
as a learner edits a cell and runs it again; the notebook then goes on from there. With
``--fresh``, a new kernel runs the notebook's cells before it and then the fixed cell (slower;
the failing cell's partial side effects are gone). Counts and the list of every audited fix
are printed; ``--out`` keeps them as JSON. Nothing is written into the folder.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

REPORT_MIME = "application/vnd.tfcoach.report+json"
FIXED, SAME, OTHER, NOT_APPLICABLE = "fixed", "same error", "another error", "not applicable"
OUTCOMES = (FIXED, SAME, OTHER, NOT_APPLICABLE)
_SPAN = re.compile(r"`([^`\n]+)`")
# The traceback's frames in a cell: ``Cell In[7], line 3``; the last one is the deepest.
_CELL_FRAME = re.compile(r"Cell In\[(\d+)\], line (\d+)")
_MAX_SPANS = 12
# A fix that moves a line: "... put it before line 1, where the function's definition starts".
_MOVED_BEFORE = re.compile(r"before line (\d+)(?! of cell)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def fix_spans(explanation: str) -> list[str]:
    """The code spans after the entry's ``Fix: `` (none when it prints no fix)."""
    if "Fix: " not in explanation:
        return []
    return _SPAN.findall(explanation.split("Fix: ", 1)[1])


def fix_prose(explanation: str) -> str:
    """The words of the fix (after ``Fix: ``), which say where a moved line goes."""
    return explanation.split("Fix: ", 1)[1] if "Fix: " in explanation else ""


def failing_line(traceback: list[str], execution_count: int | None) -> int | None:
    """The line of the cell (1-based) where the deepest frame in the cell's code stopped."""
    found = None
    for line in traceback:
        for number, lineno in _CELL_FRAME.findall(_ANSI.sub("", line)):
            if execution_count is None or int(number) == execution_count:
                found = int(lineno)
    return found


class _Cell:
    """A cell's lines being edited, with where its failing statement now starts."""

    def __init__(self, source: str, line: int) -> None:
        self.lines = source.split("\n")
        self.line = line

    @property
    def source(self) -> str:
        return "\n".join(self.lines)

    def tree(self) -> ast.Module | None:
        try:
            return ast.parse(self.source)
        except SyntaxError:
            return None

    def replace(self, first: int, last: int, new_lines: list[str]) -> None:
        """Lines ``first..last`` (1-based, inclusive) become ``new_lines``."""
        self.lines[first - 1 : last] = new_lines
        if last < self.line:
            self.line += len(new_lines) - (last - first + 1)

    def insert_before(self, line: int, statement: str) -> None:
        indent = re.match(r"\s*", self.lines[line - 1]).group(0)  # type: ignore[union-attr]
        self.lines[line - 1 : line - 1] = [indent + part for part in statement.split("\n")]
        if line <= self.line:
            self.line += statement.count("\n") + 1

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ""

    def replace_node(self, node: ast.expr, text: str) -> None:
        """The source of ``node`` becomes ``text`` (in place, on its lines)."""
        first, last = node.lineno, node.end_lineno or node.lineno
        head = self.lines[first - 1][: node.col_offset]
        tail = self.lines[last - 1][node.end_col_offset :]
        self.replace(first, last, (head + text + tail).split("\n"))


def _statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost statement whose lines hold ``line``."""
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or line):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def _header_nodes(statement: ast.stmt) -> list[ast.AST]:
    """The expressions a statement evaluates on its own line (a block's header only)."""
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [statement.iter]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in statement.items]
    if isinstance(statement, (ast.If, ast.While)):
        return [statement.test]
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    return [statement]


def _targets(statement: ast.stmt) -> list[str]:
    """What a statement assigns, a tuple's parts one by one (``_`` is no target)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        targets = [statement.target]
    else:
        return []
    found: list[str] = []
    for target in targets:
        parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        found.extend(ast.unparse(part) for part in parts if ast.unparse(part) != "_")
    return found


def _item_targets(statement: ast.stmt) -> list[str]:
    """The names a statement assigns items of (``g`` of ``g[0, 0] = 0.0``)."""
    if not isinstance(statement, (ast.Assign, ast.AugAssign)):
        return []
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return [ast.unparse(target.value) for target in targets if isinstance(target, ast.Subscript)]


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Expr):
        node = node.value
    if isinstance(node, ast.Await):
        node = node.value
    return ast.unparse(node.func) if isinstance(node, ast.Call) else None


def _has_placeholder(tree: ast.AST) -> bool:
    """``f(...)`` or ``x = ...``: a span that shows a shape of code, not code to run."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
            if any(isinstance(a, ast.Constant) and a.value is Ellipsis for a in arguments):
                return True
        if isinstance(node, (ast.Assign, ast.Expr)) and (
            isinstance(node.value, ast.Constant) and node.value.value is Ellipsis
        ):
            return True
    return False


def _simple_statements(tree: ast.Module) -> list[ast.stmt]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and not hasattr(node, "body")  # not a block
    ]


def _apply_statement(cell: _Cell, span: str, parsed: ast.Module, prose: str = "") -> bool:
    tree = cell.tree()
    if tree is None:
        return False
    statements = _simple_statements(tree)
    failing = _statement_at(tree, cell.line)
    first = parsed.body[0]
    targets = _targets(first)
    call = _call_name(first)
    if targets:
        same_text = [s for s in statements if ast.unparse(s) == ast.unparse(first)]
        moved = _MOVED_BEFORE.search(prose)
        if same_text and moved is not None:
            # "take the line out of f's body and put it before line 1": a move.
            line = same_text[0]
            cell.replace(line.lineno, line.end_lineno or line.lineno, [])
            cell.insert_before(int(moved.group(1)), span)
            return True
        # The same target assigned on the failing line, else the last time before it.
        matches = [s for s in statements if set(_targets(s)) & set(targets)]
        if len(set(targets)) > 1:
            # ``a, b = f([x, y])`` "in place of the two lines" that made ``a`` and ``b``.
            parts = [s for s in matches if set(_targets(s)) <= set(targets)]
            # Lines that each made one of the names, not one name made twice (``g = tape
            # .gradient(...)`` then ``g = clip(g)``: only the later one is rewritten).
            made = [name for part in parts for name in set(_targets(part))]
            if len(parts) > 1 and len(made) == len(set(made)):
                for extra in reversed(parts[1:]):
                    cell.replace(extra.lineno, extra.end_lineno or extra.lineno, [])
                indent = re.match(r"\s*", cell.lines[parts[0].lineno - 1]).group(0)  # type: ignore[union-attr]
                cell.replace(
                    parts[0].lineno, parts[0].end_lineno or parts[0].lineno, [indent + span]
                )
                return True
        before = [s for s in matches if s.lineno <= cell.line]
        if failing is not None and set(_item_targets(failing)) & set(targets):
            # ``g[0, 0] = 0.0`` failing, fixed by ``g = tf.tensor_scatter_nd_update(g, ...)``:
            # the new value of the whole name takes the failing item assignment's place.
            matches, before = [failing], [failing]
        chosen = next((s for s in matches if s is failing), before[-1] if before else None)
        if chosen is None and matches:
            chosen = matches[0]
        if chosen is None:
            # Made in another cell and read here: the learner runs the new line again here.
            reads = {
                ast.unparse(node)
                for node in ast.walk(tree)
                if isinstance(node, (ast.Name, ast.Attribute))
                and isinstance(getattr(node, "ctx", None), ast.Load)
            }
            if set(targets) & reads and failing is not None:
                cell.insert_before(failing.lineno, span)
                return True
            return False
    elif call is not None:
        same = [s for s in statements if _call_name(s) == call]
        if not same:
            # The call made inside a bigger statement (``out = model.fit(...)``).
            same = [s for s in statements if any(_call_name(node) == call for node in ast.walk(s))]
        chosen = next((s for s in same if s is failing), same[0] if same else None)
        if chosen is None:
            return False
        if not isinstance(chosen, ast.Expr) and _call_name(chosen) != call:
            inner = next(node for node in ast.walk(chosen) if _call_name(node) == call)
            cell.replace_node(inner, span)  # type: ignore[arg-type]
            return True
    else:
        return False
    indent = re.match(r"\s*", cell.lines[chosen.lineno - 1]).group(0)  # type: ignore[union-attr]
    new_lines = [indent + part for part in span.split("\n")]
    cell.replace(chosen.lineno, chosen.end_lineno or chosen.lineno, new_lines)
    return True


def _apply_return(cell: _Cell, span: str) -> bool:
    """``return x`` (``yield x``) replaces the most alike ``return`` (``yield``) of the cell."""
    tree = cell.tree()
    kinds = (ast.Return,) if span.lstrip().startswith("return") else (ast.Yield, ast.YieldFrom)
    returns = [
        n.value if isinstance(n, ast.Expr) else n
        for n in (ast.walk(tree) if tree else [])
        if isinstance(n, ast.Return) or (isinstance(n, ast.Expr) and isinstance(n.value, kinds))
    ]
    returns = [n for n in returns if isinstance(n, kinds)]
    if not returns:
        return False
    best = max(returns, key=lambda n: _alike(ast.unparse(n), span))
    indent = re.match(r"\s*", cell.lines[best.lineno - 1]).group(0)  # type: ignore[union-attr]
    cell.replace(best.lineno, best.end_lineno or best.lineno, [indent + span])
    return True


def _block_key(node: ast.AST) -> tuple[str, str] | None:
    """What names a block's header: a def's or class's name, a loop's target, a with's
    context."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return type(node).__name__, node.name
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return "for", ast.unparse(node.target)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return "with", " ".join(str(_call_name(item.context_expr)) for item in node.items)
    return None


def _apply_header(cell: _Cell, span: str) -> bool:
    """``def on_epoch_end(self, epoch, logs=None):``: a block's new header replaces the
    header of the cell's block of the same name."""
    try:
        parsed = ast.parse(span.rstrip() + "\n    pass")
    except SyntaxError:
        return False
    if len(parsed.body) != 1 or _block_key(parsed.body[0]) is None:
        return False
    tree = cell.tree()
    if tree is None:
        return False
    key = _block_key(parsed.body[0])
    for node in ast.walk(tree):
        if _block_key(node) == key and node.body[0].lineno > node.lineno:  # type: ignore[attr-defined]
            indent = re.match(r"\s*", cell.lines[node.lineno - 1]).group(0)  # type: ignore[attr-defined, union-attr]
            cell.replace(node.lineno, node.body[0].lineno - 1, [indent + span.strip()])  # type: ignore[attr-defined]
            return True
    return False


def _apply_expression(cell: _Cell, span: str, expression: ast.expr) -> bool:
    tree = cell.tree()
    if tree is None:
        return False
    failing = _statement_at(tree, cell.line)
    if failing is None:
        return False
    parts = [
        node
        for root in _header_nodes(failing)
        for node in ast.walk(root)
        if isinstance(node, ast.expr)
    ]
    if not parts:
        return False
    wanted = ast.unparse(expression)
    call = _call_name(expression)
    chosen: ast.expr | None = None
    if call is not None:
        same = [node for node in parts if _call_name(node) == call]
        if same:
            chosen = max(same, key=lambda n: _alike(ast.unparse(n), wanted))
    if chosen is None:
        # A part of the line the span rewrites reads only names the span reads too
        # (``x`` in ``tf.cast(x, tf.float32)``, ``opt.lr`` in ``opt.learning_rate``):
        # the most alike of them.
        names = _names(expression)
        kin = [node for node in parts if _names(node) and _names(node) <= names]
        if kin:
            chosen = max(kin, key=lambda n: (_alike(ast.unparse(n), wanted), len(ast.unparse(n))))
    if chosen is None:
        return False
    if ast.unparse(chosen) == wanted:
        return True  # already written so: nothing to change
    cell.replace_node(chosen, span)
    return True


# Methods called for what they do to their object, not for a value: a fix that calls one
# (``student.compile(...)``) is a statement to run before the failing line.
_STATEMENT_METHODS = frozenset(
    {
        "compile",
        "adapt",
        "build",
        "fit",
        "save",
        "save_weights",
        "load_weights",
        "assign",
        "assign_add",
        "assign_sub",
        "reset_states",
        "reset_state",
        "set_weights",
        "append",
        "extend",
        "update",
        "restore",
        "expect_partial",
    }
)


def _prepares(cell: _Cell, call: ast.expr, prose: str) -> bool:
    """A call for its effect on an object of the cell (``model.compile(...)``) that the
    cell does not make yet: run before the failing line, not put in place of a value."""
    del prose
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)  # ``model.compile``, not a chain
    ):
        return False
    if call.func.attr not in _STATEMENT_METHODS:
        return False
    tree = cell.tree()
    wanted = ast.unparse(call.func)
    return tree is not None and not any(
        _call_name(node) == wanted for node in ast.walk(tree) if isinstance(node, ast.Call)
    )


# "as the first statement of `Distiller.__init__`", "as the first line of `score`'s body".
_FIRST_OF = re.compile(r"first (?:statement|line) of `(?:\w+\.)*(\w+)`")


def _first_in_body(cell: _Cell, span: str, prose: str) -> bool:
    """A statement the fix puts first in a function's body, put there."""
    named = _FIRST_OF.search(prose)
    tree = cell.tree()
    if named is None or tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == named.group(
            1
        ):
            body = node.body
            docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            start = body[1] if docstring and len(body) > 1 else body[0]
            if any(ast.unparse(s) == ast.unparse(ast.parse(span).body[0]) for s in body):
                return False  # already there
            cell.insert_before(start.lineno, span)
            return True
    return False


def _on_named_line(cell: _Cell, span: str, prose: str) -> bool:
    """A statement the fix gives "on line N `...`" (the cell's other lines written the
    same way): it replaces that one-line statement, with its indentation."""
    named = re.search(rf"on line (\d+) `{re.escape(span)}`", prose)
    tree = cell.tree()
    if named is None or tree is None:
        return False
    number = int(named.group(1))
    statement = _statement_at(tree, number)
    if statement is None or statement.lineno != number or statement.end_lineno != number:
        return False
    indent = re.match(r"\s*", cell.lines[number - 1]).group(0)  # type: ignore[union-attr]
    cell.replace(number, number, [indent + span])
    return True


def _in_place_of_lines(cell: _Cell, span: str, prose: str) -> bool:
    """A statement the fix gives "in place of lines N-M `...`": it replaces those whole
    lines (a loop written as one line), at the first one's indentation."""
    named = re.search(rf"in place of lines? (\d+)(?:-(\d+))? `{re.escape(span)}`", prose)
    if named is None:
        return False
    first = int(named.group(1))
    last = int(named.group(2) or first)
    if not 1 <= first <= last <= len(cell.lines):
        return False
    indent = re.match(r"\s*", cell.lines[first - 1]).group(0)  # type: ignore[union-attr]
    cell.replace(first, last, [indent + span])
    return True


def _renames_failing_call(cell: _Cell, span: str) -> bool:
    """``tp.reset_state()`` for the failing ``tp.reset_states()``: the same object's method
    respelled replaces the failing statement (not a new call run before it)."""
    try:
        parsed = ast.parse(span).body
    except SyntaxError:
        return False
    tree = cell.tree()
    failing = _statement_at(tree, cell.line) if tree is not None else None
    if (
        len(parsed) != 1
        or not isinstance(parsed[0], ast.Expr)
        or not isinstance(failing, ast.Expr)
        or failing.lineno != failing.end_lineno
    ):
        return False
    new, old = parsed[0].value, failing.value
    if not (
        isinstance(new, ast.Call)
        and isinstance(old, ast.Call)
        and isinstance(new.func, ast.Attribute)
        and isinstance(old.func, ast.Attribute)
        and ast.unparse(new.func.value) == ast.unparse(old.func.value)
        and new.func.attr != old.func.attr
        and _alike(new.func.attr, old.func.attr) > 0.8
    ):
        return False
    indent = re.match(r"\s*", cell.lines[failing.lineno - 1]).group(0)  # type: ignore[union-attr]
    cell.replace(failing.lineno, failing.lineno, [indent + span])
    return True


def _inserted_before(cell: _Cell, span: str, prose: str) -> bool:
    """A new statement the fix puts "before line N" of this cell (the first line of a
    loop's body), put there with that line's indentation; a statement the cell already
    has is a move, which ``_apply_statement`` makes."""
    moved = _MOVED_BEFORE.search(prose)
    tree = cell.tree()
    if moved is None or tree is None or f"`{span}` before line" not in prose:
        return False
    wanted = ast.unparse(ast.parse(span).body[0])
    if any(ast.unparse(node) == wanted for node in _simple_statements(tree)):
        return False
    line = int(moved.group(1))
    if not 1 <= line <= len(cell.lines):
        return False
    cell.insert_before(line, span)
    return True


def _root(node: ast.AST) -> str | None:
    """``words`` for ``words.adapt(data)``: the name a call's method hangs from."""
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _alike(one: str, other: str) -> float:
    return difflib.SequenceMatcher(None, one, other).ratio()


def apply_fix(source: str, line: int, spans: list[str], prose: str = "") -> tuple[str | None, int]:
    """``source`` with the fix's spans applied at the failing ``line`` (None when no span
    can be applied as code the learner writes into the cell), and the line where the
    failing statement then starts (lines added above it move it down)."""
    cell = _Cell(source, line)
    applied = False
    assigned: set[str] = set()
    for span in spans[:_MAX_SPANS]:
        if (
            _on_named_line(cell, span, prose)
            or _in_place_of_lines(cell, span, prose)
            or _renames_failing_call(cell, span)
        ):
            applied = True
            continue
        try:
            parsed = ast.parse(span)
        except SyntaxError:
            applied |= _apply_header(cell, span)
            continue
        if not parsed.body or _has_placeholder(parsed):
            continue
        first = parsed.body[0]
        assigned.update(name for name in _targets(first))
        statement = isinstance(first, (ast.Assign, ast.AugAssign, ast.AnnAssign)) or (
            isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)
        )
        if statement and _first_in_body(cell, span, prose):
            applied = True
            continue
        if statement and _inserted_before(cell, span, prose):
            applied = True
            continue
        if isinstance(first, ast.Return) or (
            isinstance(first, ast.Expr) and isinstance(first.value, (ast.Yield, ast.YieldFrom))
        ):
            applied |= _apply_return(cell, span)
        elif isinstance(first, ast.Expr) and _call_name(first) is None:
            applied |= _apply_expression(cell, span, first.value)
        elif isinstance(first, ast.Expr) and (
            _root(first.value) in assigned or _prepares(cell, first.value, prose)
        ):
            # "`words = StringLookup()` then `words.adapt(data)`": the next statement to
            # run, before the failing line.
            cell.insert_before(cell.line, span)
            applied = True
        elif isinstance(first, ast.Expr):
            # A call alone: the statement that makes it, else the sub-expression.
            applied |= _apply_statement(cell, span, parsed, prose) or _apply_expression(
                cell, span, first.value
            )
        elif isinstance(first, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            applied |= _apply_statement(cell, span, parsed, prose)
    # A fix that leaves the cell as it was (a span naming code already there) is no edit.
    return (cell.source if applied and cell.source != source else None), cell.line


def _error_of(cell: Any) -> dict[str, Any] | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output
    return None


def _explanation_of(cell: Any) -> str:
    for output in cell.get("outputs", []):
        report = (output.get("data") or {}).get(REPORT_MIME)
        if isinstance(report, dict) and isinstance(report.get("error"), dict):
            return str(report["error"].get("explanation") or "")
    return ""


def classify(
    original: dict[str, Any], line: int | None, fixed_cell: Any, fixed_line: int
) -> tuple[str, str]:
    """The fixed cell's outcome, and the error it raised (if any)."""
    error = _error_of(fixed_cell)
    if error is None:
        return FIXED, ""
    said = f"{error.get('ename')}: {str(error.get('evalue'))[:200]}"
    again = failing_line(error.get("traceback") or [], fixed_cell.get("execution_count"))
    if (
        error.get("ename") == original.get("ename")
        and line is not None
        and (again is None or again >= fixed_line)
    ):
        return SAME, said
    return OTHER, said


def _client(notebook: Any, workdir: str) -> NotebookClient:
    return NotebookClient(
        notebook,
        timeout=180,
        allow_errors=True,
        kernel_name="python3",
        resources={"metadata": {"path": workdir}},
    )


def _run_fixed(client: NotebookClient, source: str, index: int) -> Any:
    cell = nbformat.v4.new_code_cell(source)
    try:
        client.execute_cell(cell, index)
    except Exception as error:  # a timeout or a dead kernel: the fix did not run
        cell.outputs = [
            {"output_type": "error", "ename": type(error).__name__, "evalue": str(error)[:200]}
        ]
    return cell


def audit_notebook(
    path: Path, fresh: bool = False, raised: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """One record per raising cell whose error entry prints a fix; every raising cell of
    the run is added to ``raised`` (when given) as (notebook, cell, error)."""
    notebook = nbformat.read(path, as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    notebook.cells = [nbformat.v4.new_code_cell("%load_ext jupyterlab_tfcoach"), *code_cells]
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="tfcoach-audit-") as workdir:
        client = _client(notebook, workdir)
        with client.setup_kernel():
            for index, cell in enumerate(notebook.cells):
                try:
                    client.execute_cell(cell, index)
                except Exception:
                    break  # the kernel died: nothing after this can be audited
                error = _error_of(cell)
                if error is not None and raised is not None and index > 0:
                    said = f"{error.get('ename')}: {str(error.get('evalue'))[:120]}"
                    raised.append({"notebook": path.name, "cell": index - 1, "error": said})
                spans = fix_spans(_explanation_of(cell)) if error is not None else []
                if not spans:
                    continue
                line = failing_line(error.get("traceback") or [], cell.get("execution_count"))
                record: dict[str, Any] = {
                    "notebook": path.name,
                    "cell": index - 1,
                    "error": f"{error.get('ename')}: {str(error.get('evalue'))[:200]}",
                    "line": line,
                    "fix": spans,
                    "explanation": _explanation_of(cell),
                    "source": cell.source,
                }
                fixed_source, moved = (
                    apply_fix(cell.source, line, spans, fix_prose(_explanation_of(cell)))
                    if line
                    else (None, 0)
                )
                if fixed_source is None:
                    record.update(outcome=NOT_APPLICABLE, fixed_source=None, raised="")
                    records.append(record)
                    continue
                if fresh:
                    fixed_cell = _fresh_run(notebook.cells[:index], fixed_source, workdir)
                else:
                    fixed_cell = _run_fixed(client, fixed_source, index)
                outcome, then = classify(error, line, fixed_cell, moved)
                record.update(outcome=outcome, fixed_source=fixed_source, raised=then)
                records.append(record)
    return records


def _fresh_run(before: list[Any], fixed_source: str, workdir: str) -> Any:
    cells = [nbformat.v4.new_code_cell(cell.source) for cell in before]
    fixed = nbformat.v4.new_code_cell(fixed_source)
    notebook = nbformat.v4.new_notebook(cells=[*cells, fixed])
    with tempfile.TemporaryDirectory(prefix="tfcoach-audit-fresh-", dir=workdir) as folder:
        try:
            _client(notebook, folder).execute()
        except Exception as error:
            fixed.outputs = [
                {"output_type": "error", "ename": type(error).__name__, "evalue": str(error)}
            ]
    return notebook.cells[-1]


def summary(records: list[dict[str, Any]]) -> str:
    counts = Counter(record["outcome"] for record in records)
    lines = [", ".join(f"{outcome}: {counts.get(outcome, 0)}" for outcome in OUTCOMES)]
    for record in records:
        lines.append(
            f"- {record['outcome']}: {record['notebook']} cell {record['cell']} "
            f"line {record['line']} ({record['error'][:80]})"
        )
        lines.append(f"    fix: {' | '.join(record['fix'])[:300]}")
        if record.get("raised"):
            lines.append(f"    then: {record['raised'][:160]}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--out", type=Path, help="write every audited fix here as JSON")
    parser.add_argument(
        "--fresh", action="store_true", help="run each fixed cell in a new kernel after its past"
    )
    parser.add_argument("--only", help="audit only the notebooks whose name contains this")
    args = parser.parse_args()
    records: list[dict[str, Any]] = []
    raised: list[dict[str, Any]] = []
    for path in sorted(args.folder.glob("*.ipynb")):
        if args.only and args.only not in path.name:
            continue
        records.extend(audit_notebook(path, fresh=args.fresh, raised=raised))
        print(f"{path.name}: audited", file=sys.stderr)
    if args.out is not None:
        args.out.write_text(json.dumps(records, indent=1), encoding="utf-8")
    print(summary(records))
    answers_file = args.folder / "answers.json"
    if answers_file.exists():
        # A cell that runs in the notebook as written but raised here: a fix applied
        # before it "ran" but broke something the later cell uses.
        answers = json.loads(answers_file.read_text(encoding="utf-8"))
        runs = {(a["notebook"], a["cell"]) for a in answers if not a.get("raises")}
        broken = [r for r in raised if (r["notebook"], r["cell"]) in runs]
        print(f"cells answers.json says run that raised after the fixes before them: {len(broken)}")
        for record in broken:
            print(f"- {record['notebook']} cell {record['cell']}: {record['error'][:100]}")


if __name__ == "__main__":
    main()
