"""A float array given where NumPy wants whole-number indices (issue #25).

``np.bincount``, ``np.take``, ``np.put``, ``np.ravel_multi_index`` and an array index
``values[positions]`` (``np.add.at`` too) read their indices as integers. Given a float
array they refuse it, with ``Cannot cast array data from dtype('float32') to
dtype('int64') according to the rule 'safe'`` (a TypeError: NumPy casts a float to an
integer only when told, since a float may hold a fraction) or ``arrays used as indices
must be of integer (or boolean) type`` (an IndexError). Neither names the array. Learners
meet it after ``np.floor``, ``np.round``, ``np.ceil`` or ``/``, which round the values and
keep the float dtype.

Read from the failing line: the one float NumPy array among the call's arguments (or the
subscript's index) that holds whole numbers, told apart from a float argument that is
data (``weights=``); the statement that made it, when the array is a name assigned
before the failing line in the same function or cell; what made it a float (``np.floor``
rounds the values, not the dtype; ``/`` always gives floats). The fix is ``.astype(int)``
where the array is made (every later use is then right, the cell's other index-taking
calls too), else where it is given. Fractions in the values, or negative values given to
``np.bincount``, get the rule without a fix: the cast alone would change the counts or
fail again.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    called_numpy,
)

SECTION = "dtype-casting"
_UNSAFE_CAST = re.compile(
    r"Cannot cast array data from dtype\('(?P<dtype>float\d*)'\) to "
    r"dtype\('(?P<wanted>u?int\d*)'\) according to the rule '\w+'"
)
_INDEX_TYPE = re.compile(r"arrays used as indices must be of integer \(or boolean\) type")
# Keywords whose values are data, not indices (``np.bincount(ids, weights=w)``).
_DATA_KEYWORDS = frozenset({"weights", "a", "arr", "values", "out"})
# Calls that keep the float dtype of their input while making its values whole.
_ROUNDING = frozenset({"floor", "ceil", "round", "rint", "trunc", "fix", "around"})
_MAX_VALUES = 5_000_000


def _numpy() -> Any:
    return sys.modules.get("numpy")


def _float_array(value: Any) -> bool:
    numpy = _numpy()
    if numpy is None or type(value) is not numpy.ndarray:
        return False
    return value.dtype.kind == "f"


def _whole(value: Any) -> tuple[bool, bool]:
    """(every value is a whole number, some value is negative), for a float array."""
    numpy = _numpy()
    if value.size == 0 or value.size > _MAX_VALUES:
        return False, False
    finite = bool(numpy.isfinite(value).all())
    whole = finite and bool((numpy.floor(value) == value).all())
    return whole, bool((value < 0).any())


def _candidates(line: FailingLine, index_error: bool) -> list[ast.expr]:
    """Expressions of the failing line that give indices: the failing call's arguments
    (data keywords left out), and for an IndexError the index of each subscript."""
    found: list[ast.expr] = []
    call = line.call
    if isinstance(call, ast.Call):
        found += [arg for arg in call.args if not isinstance(arg, ast.Starred)]
        found += [kw.value for kw in call.keywords if kw.arg and kw.arg not in _DATA_KEYWORDS]
    if index_error:
        for part in line.frame.header():
            for node in ast.walk(part):
                if isinstance(node, ast.Subscript):
                    index = node.slice
                    found += list(index.elts) if isinstance(index, ast.Tuple) else [index]
    return found


def _scope_of(tree: ast.Module, line: int) -> ast.AST:
    """The innermost function holding ``line``, else the cell."""
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            if scope is tree or node.lineno >= scope.lineno:  # type: ignore[attr-defined]
                scope = node
    return scope


def _in_scope(scope: ast.AST) -> list[ast.AST]:
    """The nodes of ``scope``, nested functions and classes left out."""
    found: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _made_by(frame: CellFrame, name: str) -> ast.Assign | None:
    """The last one-line ``name = ...`` before the failing line, in its function or cell."""
    tree = frame.tree()
    if tree is None:
        return None
    line = frame.position.line
    made = [
        node
        for node in _in_scope(_scope_of(tree, line))
        if isinstance(node, ast.Assign)
        and node.lineno < line
        and node.lineno == node.end_lineno
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == name
    ]
    return max(made, key=lambda node: node.lineno) if made else None


def _why_float(value: ast.expr, frame: CellFrame) -> str:
    """What in the assignment's value made the array a float one, in words."""
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in _ROUNDING:
                shown = frame.segment(func) or called
                return f"{code(shown)} rounds the values but keeps the float dtype of its input"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return "`/` always gives floats, even of whole numbers"
    return ""


def _uses_after(frame: CellFrame, name: str, made: ast.Assign) -> list[int]:
    """The lines after the failing one that read ``name`` again, in the same scope."""
    tree = frame.tree()
    if tree is None:
        return []
    line = frame.position.line
    return sorted(
        {
            node.lineno
            for node in _in_scope(_scope_of(tree, line))
            if isinstance(node, ast.Name)
            and node.id == name
            and isinstance(node.ctx, ast.Load)
            and node.lineno > line
            and node.lineno > made.lineno
        }
    )


_ATOMS = (ast.Name, ast.Call, ast.Attribute, ast.Subscript)


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    index_error = error.matched(_INDEX_TYPE)
    if not index_error and not called_numpy(line, context):
        return None
    frame = line.frame
    chosen: list[tuple[ast.expr, Any]] = []
    for node in _candidates(line, index_error):
        found, value = value_of(node, frame, context)
        if found and _float_array(value):
            if not index_error and value.dtype.name != error.group("dtype"):
                continue
            chosen.append((node, value))
    if not chosen:
        return None
    whole_ones = [(node, value) for node, value in chosen if _whole(value)[0]]
    if len(whole_ones) == 1:
        node, value = whole_ones[0]
    elif len(chosen) == 1:
        node, value = chosen[0]
    else:
        return None
    written = frame.segment(node)
    if not written or "\n" in written:
        return None
    whole, negative = _whole(value)
    described = describe(written, value)
    held = (
        described.sentence()
        if described is not None
        else f"{code(written)} is a {value.dtype.name} array"
    )
    where = code(line.call_source) if line.call_source else "this line"
    rule = (
        f"{where} reads {code(written)} as indices, and NumPy takes indices only as "
        f"integers, but {held}."
    )
    made = _made_by(frame, written) if isinstance(node, ast.Name) else None
    statement = frame.segment(made) if made is not None else None
    why = _why_float(made.value, frame) if made is not None else ""
    if made is not None and statement:
        rule += f" It was made at line {made.lineno}, {code(statement)}"
        rule += f": {why}." if why else "."
    rule += " NumPy never casts floats to integers by itself, since a float may hold a fraction."
    if not whole:
        return Finding(
            rule + " Its values have fractions: say how to round them (`np.floor`, "
            "`np.round`), then cast with `.astype(int)`.",
            None,
        )
    called = line.call.func if isinstance(line.call, ast.Call) else None
    if negative and called is not None and (frame.segment(called) or "").endswith("bincount"):
        return Finding(
            rule + " It also holds negative values, which `np.bincount` refuses as "
            "integers too: shift them to start at 0 first.",
            None,
        )
    if made is not None and statement:
        value_source = frame.segment(made.value) or ""
        cast = (
            f"{value_source}.astype(int)"
            if isinstance(made.value, _ATOMS)
            else f"({value_source}).astype(int)"
        )
        fixed = rewrite(frame, made, made.value, cast)
        again = _uses_after(frame, written, made)
        told = (
            f" Line{'s' if len(again) > 1 else ''} {', '.join(str(n) for n in again)} "
            f"read{'' if len(again) > 1 else 's'} {code(written)} too: cast where it is "
            "made, and every use gets integers."
            if again
            else ""
        )
        if fixed and "\n" not in fixed:
            return Finding(
                rule + f"{told} Its values are whole numbers: make it an integer array.",
                code(fixed),
            )
    statement_node = line.statement
    atom = written if isinstance(node, _ATOMS) else f"({written})"
    fixed = (
        rewrite(frame, statement_node, node, f"{atom}.astype(int)")
        if statement_node is not None
        else None
    )
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + " Its values are whole numbers: cast them to integers.", fix)


INTEGER_INDICES = ErrorFamily(
    "a float array given as NumPy indices",
    messages=(Message(_UNSAFE_CAST), Message(_INDEX_TYPE)),
    read=_read,
    section=SECTION,
    # NumPy raises it in the learner's line (a C function): no library frame.
    without_library=True,
)
