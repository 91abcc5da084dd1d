"""A whitening matrix scaled along the wrong axis: the data it makes is not white.

PCA whitening divides each eigenvector, a COLUMN of ``evecs``, by the square root of its
own eigenvalue: ``evecs / tf.sqrt(evals)[None, :]``. Written ``[:, None]``, the vector
lines up with the ROWS, so row i is divided by the i-th root: every direction is mixed
with the wrong scale and ``Z = Xc @ W`` has a covariance far from the identity. Nothing
raises.

Read after a completed cell whose text speaks of whitening (``white``, ``whiten``,
``sphere``, ``zca``), from its top-level statements: ``W = V / s[:, None]`` or ``V *
s[:, None]`` (``None`` or a ``newaxis``) where ``V`` holds a square float matrix, followed
by ``Z = A @ W`` (or ``tf.matmul(A, W)``), a name of the cell speaking of whitening. Told
on the symptom only: ``Z`` then holds a float matrix (at least 3 rows, at most
``MAX_VALUES`` values) whose covariance has a diagonal entry off 1 by more than
``OFF_IDENTITY`` or an off-diagonal entry larger than it. The fix is the statement with
the vector lined up with the columns (``[None, :]``).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "broadcasting"
MAX_CELL_CHARS = 30_000
MAX_VALUES = 200_000
# White data has the identity as covariance; eps and sampling move it by far less.
OFF_IDENTITY = 0.5
# Plain substring tests: a case-blind regular expression scans a long cell slowly.
_NEEDED = ("whit", "Whit", "WHIT", "zca", "ZCA", "spher", "Spher")
_WORDS = ("white", "whiten", "whitened", "whitening", "zca", "sphere", "sphered")


def _row_vector(node: ast.expr) -> str | None:
    """The text of the index that lines a vector up with rows: ``[:, None]``."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple):
        return None
    parts = node.slice.elts
    if len(parts) != 2:
        return None
    whole, new = parts
    if not (isinstance(whole, ast.Slice) and whole.lower is None and whole.upper is None):
        return None
    if isinstance(new, ast.Constant) and new.value is None:
        return "None"
    if isinstance(new, ast.Attribute) and new.attr == "newaxis":
        return ast.unparse(new)
    return None


def _speaks(name: str) -> bool:
    return any(word.startswith(_WORDS) for word in identifier_words(name))


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a whitening matrix scaled along its rows, if any."""
    if len(source) > MAX_CELL_CHARS or not any(word in source for word in _NEEDED):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    scaled: dict[str, tuple[ast.Assign, str, ast.Subscript, str]] = {}
    for statement in tree.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            continue
        value = statement.value
        if (
            isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Div | ast.Mult)
            and isinstance(value.left, ast.Name)
        ):
            index = _row_vector(value.right)
            if index is not None:
                scaled[target.id] = (statement, value.left.id, value.right, index)  # type: ignore[assignment]
                continue
        used = _whitened_by(value)
        if used is not None and used in scaled:
            found = scaled[used]
            if not (_speaks(target.id) or _speaks(used)):
                continue
            note = _checked(source, found, used, target.id, namespace)
            if note is not None:
                return [note]
    return []


def _whitened_by(value: ast.expr) -> str | None:
    """``W`` for ``A @ W`` or ``tf.matmul(A, W)``."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.MatMult):
        return value.right.id if isinstance(value.right, ast.Name) else None
    if (
        isinstance(value, ast.Call)
        and call_name(value) in ("matmul", "dot")
        and len(value.args) == 2
    ):
        second = value.args[1]
        return second.id if isinstance(second, ast.Name) else None
    return None


def _checked(
    source: str,
    found: tuple[ast.Assign, str, ast.Subscript, str],
    matrix: str,
    result: str,
    namespace: Mapping[str, Any],
) -> Note | None:
    statement, vectors, vector, index = found
    basis = held_array(namespace.get(vectors), MAX_VALUES, ("float",), ndim=2)
    if basis is None or basis.shape[0] != basis.shape[1] or basis.shape[0] < 2:
        return None
    values = held_array(namespace.get(result), MAX_VALUES, ("float",), ndim=2)
    if values is None or values.shape[0] < 3 or values.shape[1] != basis.shape[0]:
        return None
    numpy = sys.modules["numpy"]
    centred = values - values.mean(axis=0)
    cov = centred.T @ centred / (values.shape[0] - 1)
    diagonal = numpy.diag(cov)
    off = cov - numpy.diag(diagonal)
    worst_diagonal = float(numpy.max(numpy.abs(diagonal - 1.0)))
    worst_off = float(numpy.max(numpy.abs(off)))
    if not numpy.isfinite(worst_diagonal) or max(worst_diagonal, worst_off) <= OFF_IDENTITY:
        return None
    line = ast.get_source_segment(source, statement)
    written = ast.get_source_segment(source, vector)
    if line is None or written is None or "\n" in line or line.count(written) != 1:
        return None
    inner = ast.get_source_segment(source, vector.value)
    if inner is None:
        return None
    if isinstance(vector.value, ast.BinOp | ast.UnaryOp):
        inner = f"({inner})"
    fixed = line.replace(written, f"{inner}[{index}, :]")
    shown = ", ".join(f"{d:.2g}" for d in diagonal[:4]) + (", ..." if len(diagonal) > 4 else "")
    text = (
        f"`{line}` (line {statement.lineno} of this cell) lines `{written}` up with the ROWS "
        f"of `{vectors}` (`[:, {index}]` makes a column), so row i is scaled by the i-th "
        f"value; but each eigenvector is a COLUMN of `{vectors}` and must be scaled by its "
        f"own value. `{result}` (made with `{matrix}`) is not white: its covariance has "
        f"diagonal ({shown}) where the identity has 1s. Nothing raises. Line the vector up "
        f"with the columns: `{fixed}`."
    )
    return reports.note(text, SECTION)
