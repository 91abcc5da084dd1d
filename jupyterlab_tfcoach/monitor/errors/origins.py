"""Where a failing operand's value was made (issue #25: name the origin a teacher names).

An op refuses a tensor whose name the learner made a line or a cell earlier from another
array (``mask_t = tf.constant(masks[..., 0])``): the refused value is the array's, so the
cure belongs where that array enters, and a teacher names it. ``value_origin`` follows a
plain name back to its newest top-level assignment (in the failing cell above the failing
line, else in earlier cells) and to the one name read there whose NumPy array or tensor
has the operand's dtype; it reads values and syntax only, never runs user code.

``assigned_string_fix`` follows a refused string argument (a save path without the
extension Keras 3 needs) the same way: when the cell reads the name again below the failing
call, the fix rewrites the string literal in the name's assignment, not the call alone.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    SourceCell,
    assignments_in_cells,
    cell_frame,
)
from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, kind_of

_ARRAYS = ("array", "tensor", "variable")


@dataclass(frozen=True)
class Origin:
    """``name`` was assigned by ``statement`` (at ``where``) from ``source``'s value."""

    name: str
    source: str
    description: str  # "a (64, 32, 32, 1) uint8 NumPy array"
    statement: str  # "mask_t = tf.constant(masks[..., 0])"
    where: str  # "line 2 of this cell", "cell In[4]"
    cell: SourceCell
    assignment: ast.Assign
    read: ast.expr  # the part of the assigned value that reads ``source`` (masks[..., 0])
    alone: bool  # ``read`` is the whole value or a call's argument: no parentheses needed


def _dtype_name(value: object) -> str | None:
    try:
        dtype = value.dtype  # type: ignore[attr-defined]
        name = dtype.name if kind_of(value) != "array" else str(dtype)
    except Exception:
        return None
    return name if type(name) is str else None


def _reads(value: ast.expr) -> dict[str, tuple[ast.expr, bool]]:
    """Each name the expression reads, with the widest chain of subscripts rooted at it
    (``masks[..., 0]``) and whether that chain stands alone (the whole value or a call's
    argument, so a replacement needs no parentheses); the first place of each name."""
    found: dict[str, tuple[ast.expr, bool]] = {}

    def visit(node: ast.expr, alone: bool) -> None:
        root = node
        while isinstance(root, ast.Subscript):
            root = root.value
        if isinstance(root, ast.Name):
            found.setdefault(root.id, (node, alone))
            part: ast.expr = node
            while isinstance(part, ast.Subscript):
                visit(part.slice, False)
                part = part.value
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                argument = isinstance(node, ast.Call) and child is not node.func
                visit(child, argument)
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                visit(keyword.value, True)

    visit(value, True)
    return found


def value_origin(operand: ast.expr, frame: CellFrame, context: ErrorContext) -> Origin | None:
    """The array a plain-name operand was built from, when exactly one name its newest
    assignment reads holds an array or tensor of the operand's dtype."""
    if not isinstance(operand, ast.Name):
        return None
    found, value = context.lookup(operand.id, frame)
    if not found or kind_of(value) not in _ARRAYS:
        return None
    dtype = _dtype_name(value)
    if dtype is None:
        return None
    running = frame.source()
    for cell, assignment in assignments_in_cells(operand.id, context):
        if cell.source == running and assignment.lineno >= frame.position.line:
            continue
        if len(assignment.targets) != 1 or not isinstance(assignment.targets[0], ast.Name):
            return None
        statement = cell.segment(assignment)
        if not statement or "\n" in statement:
            return None
        candidates = []
        for name, (read, alone) in _reads(assignment.value).items():
            if name == operand.id:
                continue
            held_found, held = context.lookup(name, frame)
            if held_found and kind_of(held) in _ARRAYS and _dtype_name(held) == dtype:
                candidates.append((name, read, alone, held))
        if len(candidates) != 1:
            return None
        name, read, alone, held = candidates[0]
        from jupyterlab_tfcoach.monitor.errors.failing_line import describe

        described = describe(name, held)
        if described is None:
            return None
        where = f"line {assignment.lineno} of this cell" if cell.source == running else cell.label
        return Origin(
            operand.id, name, described.description, statement, where, cell, assignment, read, alone
        )
    return None


@dataclass(frozen=True)
class Assignment:
    """The newest top-level ``name = value`` the failing line reads ``name`` from."""

    name: str
    statement: str  # its source, on one line
    where: str  # "line 2 of this cell", "cell In[4]"
    cell: SourceCell
    assignment: ast.Assign


def newest_assignment(name: str, frame: CellFrame, context: ErrorContext) -> Assignment | None:
    """Where ``name`` got the value the failing line read: its newest top-level assignment
    in the running cell above the failing line, else in the cells before (the statement a
    teacher reads back to when the value is wrong, not the op that met it)."""
    running = frame.source()
    for cell, assignment in assignments_in_cells(name, context):
        if cell.source == running and assignment.lineno >= frame.position.line:
            continue
        statement = cell.segment(assignment)
        if not statement or "\n" in statement:
            return None
        where = f"line {assignment.lineno} of this cell" if cell.source == running else cell.label
        return Assignment(name, statement, where, cell, assignment)
    return None


def rewrite_origin(origin: Origin, replacement: str) -> str | None:
    """The origin's assignment with the part that reads the source array replaced by
    ``replacement`` (an expression, parenthesised where the place needs it)."""
    from jupyterlab_tfcoach.monitor.errors.context import rewrite

    text = replacement if origin.alone else f"({replacement})"
    return rewrite(cell_frame(origin.cell), origin.assignment, origin.read, text)


def origin_sentence(operand: ast.expr, frame: CellFrame, context: ErrorContext) -> str:
    """`` `counts_t` was built from `counts`, a (3,) int64 NumPy array, by `...` (line 1 of
    this cell).`` with a leading space, or "" when the operand has no such origin."""
    origin = value_origin(operand, frame, context)
    if origin is None:
        return ""
    return (
        f" `{origin.name}` was built from `{origin.source}`, {origin.description}, by "
        f"`{origin.statement}` ({origin.where})."
    )


# ------------------------------------------------------- a literal value made under a name
@dataclass(frozen=True)
class AssignedFix:
    """``save_path = os.path.join(tmp, "policy")`` rewritten so the name holds the value a
    call refused under it (``"policy.keras"``): the fix for a value the cell reads again."""

    name: str
    fixed: str  # the assignment with the string rewritten
    where: str  # "line 1 of this cell", "cell In[4]"
    # The line of this cell below the failing one that reads the name (None when the fix
    # was asked for a name read only here).
    read_again: int | None


def read_again(name: str, frame: CellFrame) -> int | None:
    """The first line below the failing one in the running cell that reads ``name``."""
    tree = frame.tree()
    if tree is None:
        return None
    lines = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Name)
        and node.id == name
        and isinstance(node.ctx, ast.Load)
        and node.lineno > frame.position.line
    ]
    return min(lines) if lines else None


def string_part(value: ast.expr, old: str, new: str) -> tuple[ast.Constant, str] | None:
    """The string literal of an assigned expression that makes ``old``'s end, and its text
    rewritten so the expression makes ``new``: the whole literal (``"run/m.h5"``) or the
    last one the value ends with (``os.path.join(tmp, "m")``, ``base + "m.h5"``); None when
    the new value does not share the part the rest of the expression makes."""
    if isinstance(value, ast.Constant):
        return (value, new) if value.value == old else None
    formatted = {
        id(part)
        for node in ast.walk(value)
        if isinstance(node, ast.JoinedStr)
        for part in ast.walk(node)
    }
    literals = sorted(
        (
            node
            for node in ast.walk(value)
            if isinstance(node, ast.Constant)
            and type(node.value) is str
            and node.value
            and id(node) not in formatted
        ),
        key=lambda node: (node.lineno, node.col_offset),
    )
    if not literals:
        return None
    last = literals[-1]
    tail: str = last.value
    if not old.endswith(tail):
        return None
    kept = old[: len(old) - len(tail)]
    if not new.startswith(kept) or len(new) == len(kept):
        return None
    return last, new[len(kept) :]


def assigned_string_fix(
    operand: ast.expr | None,
    frame: CellFrame,
    context: ErrorContext,
    new: str,
    read_only_here: bool = False,
) -> AssignedFix | None:
    """When a call refused the string a plain name holds (``model.save(save_path)``) and
    the cell reads that name again below (``load_model(save_path)``), the fix belongs to
    the name's newest assignment (in this cell above the failing line, else an earlier
    cell): rewriting the call's argument alone leaves the name wrong for every later use.
    None when the operand is no such name, the cell does not read it again, or no string
    literal in the assignment makes the part of the value to change. With
    ``read_only_here``, the name's assignment is fixed even when nothing reads it again: a
    path made once in a variable (``weights_path = os.path.join(run_dir, "m.h5")``) is
    fixed there, not replaced by its value written out on the failing line."""
    if not isinstance(operand, ast.Name):
        return None
    again = read_again(operand.id, frame)
    if again is None and not read_only_here:
        return None
    found, old = context.lookup(operand.id, frame)
    if not found or type(old) is not str or old == new:
        return None
    from jupyterlab_tfcoach.monitor.errors.cell_sources import string_literal
    from jupyterlab_tfcoach.monitor.errors.context import rewrite

    running = frame.source()
    for cell, assignment in assignments_in_cells(operand.id, context):
        if cell.source == running and assignment.lineno >= frame.position.line:
            continue
        if len(assignment.targets) != 1 or not isinstance(assignment.targets[0], ast.Name):
            return None
        part = string_part(assignment.value, old, new)
        if part is None:
            return None
        literal, text = part
        written = cell.segment(literal)
        fixed = rewrite(cell_frame(cell), assignment, literal, string_literal(written, text))
        if not fixed or "\n" in fixed:
            return None
        where = f"line {assignment.lineno} of this cell" if cell.source == running else cell.label
        return AssignedFix(operand.id, fixed, where, again)
    return None
