"""Data scaled with ``//`` where ``/`` was meant.

``x_train = x_train // 255`` (or ``// 255.0``) floor-divides: only the whole part is kept,
so every pixel under 255 becomes 0 and the images come out blank (0 and 1 only). Nothing
raises; the model trains on nearly empty inputs and stays at chance.

Found after a cell that completed (a cell without ``//`` costs one substring test), from
its top-level ``name = <value> // <number>`` statements with a number of 2 or more (a
literal, or a name holding one; ``//=`` too): ``name`` then holds a NumPy array or tensor
of at least 16 values (at most a million read) that are all 0 or 1, mostly 0 (over
``ZERO_SHARE``). The note names the statement and the share of zeros; fix: the statement
with ``/`` (``x = x / 255`` for ``x //= 255``: ``/=`` raises on an integer array).
When the statement divided the name it rebinds (``x = x // 255``), the
original values are gone: the note says to load them again first.

``fraction_notes``: a step over a total made with ``//`` where a fraction is meant
(``progress = min(step, total) // total`` in a schedule): the quotient is 0 until the
step reaches the total, then 1, so a sparsity, warm-up or decay driven by it stays at its
start and jumps at the end. Read from ``name = a // b`` statements anywhere in the cell
(a ``def`` too; one substring test for a cell without ``//``): ``b`` is a whole number of
2 or more from literals and the namespace's ints (not the ``def``'s own names), ``name``
is used as a fraction in its scope (``1 - name``, ``name ** p``, times a float), and
either ``a`` is ``min(x, b)`` (the quotient can only be 0 or 1; there a name that says a
fraction, ``progress``, ``frac``, ``ratio``..., is enough too) or the statement is at the
top level and ``name`` holds 0 after the cell (a name alone is not enough there: whole
counts such as ``epochs_completed = step // steps_per_epoch`` hold 0 early on). Fix: the
statement with ``/``.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import numpy_values, value_at
from jupyterlab_tfcoach.monitor.symptoms.intent_words import (
    cell_lines,
    enclosing_functions,
    identifier_words,
    segment,
)
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "dtype-casting"
MAX_NOTES = 2
ZERO_SHARE = 0.9
MIN_VALUES = 16
_MAX_CHARS = 50_000


def _divisor(node: ast.expr, namespace: dict[str, Any]) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        if type(value) in (int, float):
            return float(value)
    return None


def floor_division_notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if "//" not in source or len(source) > _MAX_CHARS:
        return []
    tree = parsed_source(source)
    numpy = sys.modules.get("numpy")
    if tree is None or numpy is None:
        return []
    statements = list(tree.body)
    notes: list[Note] = []
    for index, statement in enumerate(statements):
        if len(notes) >= MAX_NOTES:
            break
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
            if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.FloorDiv)):
                continue
            numerator, divisor = value.left, value.right
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.FloorDiv):
            target, numerator, divisor = statement.target, statement.target, statement.value
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        number = _divisor(divisor, namespace)
        if number is None or number < 2:
            continue
        if any(
            isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Store)
            for later in statements[index + 1 :]
            for n in ast.walk(later)
        ):
            continue  # bound again: its value now is another one
        held = value_at(target, namespace, target.id)
        values = numpy_values(held) if held is not None else None
        if values is None or values.size < MIN_VALUES:
            continue
        zeros = float(numpy.mean(values == 0))
        if zeros < ZERO_SHARE or not bool(numpy.all((values == 0) | (values == 1))):
            continue
        written = ast.get_source_segment(source, statement)
        if written is None or "\n" in written:
            continue
        # ``x /= 255`` would raise on an integer array (NumPy keeps its dtype in place).
        numerator_text = ast.get_source_segment(source, numerator)
        divisor_text = ast.get_source_segment(source, divisor)
        if numerator_text is None or divisor_text is None:
            continue
        fixed = f"{target.id} = {numerator_text} / {divisor_text}"
        rebinds = any(isinstance(n, ast.Name) and n.id == target.id for n in ast.walk(numerator))
        again = (
            f" `{target.id}` no longer holds the values it divided: load them again first, "
            "then run it."
            if rebinds
            else ""
        )
        notes.append(
            reports.note(
                f"`{written}` (line {statement.lineno} of this cell) floor-divides: `//` "
                "keeps only the whole part of each quotient, so every value under "
                f"{number:g} became 0 ({zeros:.1%} of `{target.id}` is 0 now, the rest 1). "
                "The data lost almost everything it held, and nothing raises. Divide with "
                f"`/` to scale: `{fixed}`.{again}",
                SECTION,
            )
        )
    return notes


# --------------------------------------------------------------- a fraction made with //
# A step over a total (a schedule's progress, a warm-up share, a pruning target): ``//``
# makes it 0 until the step reaches the total, then 1.
FRACTION_SECTION = "dtype-casting"
_FRACTION_WORDS = frozenset(
    {
        "progress",
        "fraction",
        "frac",
        "ratio",
        "pct",
        "percent",
        "share",
        "completion",
        "completed",
        "done",
        "alpha",
        "t",
        "phase",
    }
)
_MINIMA = frozenset({"min", "minimum"})
_MAX_FRACTION_CHARS = 30_000
_ARITHMETIC = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__}


def _whole(
    node: ast.expr, namespace: dict[str, Any], locals_: set[str], depth: int = 0
) -> int | None:
    """The int an expression of literals and the namespace's ints is (``end - start``);
    None for anything else, or a name the function binds itself."""
    if depth > 6:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return int(node.value)
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return int(value) if type(value) is int and node.id not in locals_ else None
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left = _whole(node.left, namespace, locals_, depth + 1)
        right = _whole(node.right, namespace, locals_, depth + 1)
        if left is None or right is None:
            return None
        return _ARITHMETIC[type(node.op)](left, right)
    return None


def _clamped_to(numerator: ast.expr, divisor: ast.expr) -> bool:
    """Whether the numerator is ``min(x, divisor)`` (``np.minimum``, ``tf.minimum``): the
    quotient can then only be 0, or 1 once x reaches the divisor."""
    if not isinstance(numerator, ast.Call) or len(numerator.args) != 2:
        return False
    name = numerator.func.attr if isinstance(numerator.func, ast.Attribute) else None
    if isinstance(numerator.func, ast.Name):
        name = numerator.func.id
    if name not in _MINIMA or numerator.keywords:
        return False
    wanted = ast.dump(divisor)
    return any(ast.dump(argument) == wanted for argument in numerator.args)


def _bound_names(function: ast.AST | None) -> set[str]:
    """The names a ``def`` binds itself (parameters, assignments): not the namespace's."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    arguments = function.args
    names = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _used_as_fraction(name: str, scope: ast.AST, namespace: dict[str, Any]) -> bool:
    """Whether ``name`` is taken from 1 (``1 - p``), raised to a power, or multiplied by a
    float (a literal or a float the namespace holds) in its scope."""
    for node in ast.walk(scope):
        if not isinstance(node, ast.BinOp):
            continue
        sides = (node.left, node.right)
        if not any(isinstance(side, ast.Name) and side.id == name for side in sides):
            continue
        other = (
            node.right if isinstance(node.left, ast.Name) and node.left.id == name else node.left
        )
        if isinstance(node.op, ast.Sub) and node.right is not other:
            if isinstance(other, ast.Constant) and other.value in (1, 1.0):
                return True
        if isinstance(node.op, ast.Pow) and node.left is not other:
            return True
        if isinstance(node.op, ast.Mult):
            if isinstance(other, ast.Constant) and type(other.value) is float:
                return True
            if isinstance(other, ast.Name) and type(namespace.get(other.id)) is float:
                return True
    return False


def fraction_notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    """A step over a total floor-divided into what is used as a fraction."""
    if "//" not in source or len(source) > _MAX_FRACTION_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    owners = enclosing_functions(tree)
    lines = cell_lines(source)
    notes: list[Note] = []
    for statement in ast.walk(tree):
        if len(notes) >= MAX_NOTES:
            break
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.BinOp)
            and isinstance(statement.value.op, ast.FloorDiv)
        ):
            continue
        target = statement.targets[0].id
        numerator, divisor = statement.value.left, statement.value.right
        function = owners.get(id(statement))
        scope: ast.AST = function if function is not None else tree
        total = _whole(divisor, namespace, _bound_names(function))
        if total is None or total < 2:
            continue
        clamped = _clamped_to(numerator, divisor)
        used = _used_as_fraction(target, scope, namespace)
        if clamped:
            # ``min(x, total) // total`` is only ever 0 or 1: a name that says a fraction is
            # enough.
            if not (used or any(w in _FRACTION_WORDS for w in identifier_words(target))):
                continue
        else:
            # A quotient that holds 0 is often a right whole count (epochs completed, minutes
            # from seconds, a cycle's phase): only its use as a fraction tells it is one.
            held = namespace.get(target) if function is None else None
            if not (used and function is None and type(held) is int and held == 0):
                continue
        fixed = _true_division(lines, statement)
        written = segment(lines, statement)
        numerator_text = segment(lines, numerator)
        if fixed is None or written is None or numerator_text is None:
            continue
        where = f"line {statement.lineno} of this cell" + (
            f", in `{function.name}`" if isinstance(function, ast.FunctionDef) else ""
        )
        if clamped:
            what = (
                f"`{numerator_text}` is at most the divisor ({total}), so `//`, which keeps "
                f"only the whole part, makes `{target}` 0 at every step before the end and 1 "
                "only when the end is reached: never a fraction in between"
            )
        else:
            what = (
                f"`{numerator_text}` stays below the divisor ({total}), so `//`, which keeps "
                f"only the whole part, makes `{target}` 0 (it holds 0 now): never the "
                "fraction it stands for"
            )
        notes.append(
            reports.note(
                f"`{written}` ({where}) floor-divides a count by its total: {what}. What "
                f"`{target}` scales stays at its starting value and jumps at the last step, "
                f"without any error. Divide with `/` to get the fraction: `{fixed}`.",
                FRACTION_SECTION,
            )
        )
    return notes


def _true_division(lines: list[str], statement: ast.Assign) -> str | None:
    """The statement's line with its ``//`` written ``/``, parentheses kept."""
    value = statement.value
    assert isinstance(value, ast.BinOp)
    line_no = statement.lineno
    if statement.end_lineno != line_no or not 0 < line_no <= len(lines):
        return None
    left_end, right_start = value.left.end_col_offset, value.right.col_offset
    if value.left.end_lineno != line_no or value.right.lineno != line_no or left_end is None:
        return None
    raw = lines[line_no - 1].encode("utf-8")
    between = raw[left_end:right_start]
    if between.count(b"//") != 1:
        return None
    fixed = raw[:left_end] + between.replace(b"//", b"/") + raw[right_start:]
    return fixed.decode("utf-8").strip()
