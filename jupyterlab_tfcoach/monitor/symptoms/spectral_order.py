"""Eigenvectors or singular vectors taken from the wrong end of their documented order.

``tf.linalg.eigh`` (and ``np.linalg.eigh``, ``scipy.linalg.eigh``, ``eigvalsh``) returns
eigenvalues in ASCENDING order, the eigenvectors as columns in that order; an SVD
(``tf.linalg.svd``, ``np.linalg.svd``) returns singular values in DESCENDING order.
``top2 = evecs[:, :2]`` after ``eigh`` keeps the two directions of least variance: a PCA
that projects onto noise. ``main = v[:, -2:]`` after an SVD keeps the weakest directions.
Nothing raises; the "variance kept" is tiny and the plot shows noise.

Read from each scope of a completed cell (its top level, each ``def``), in order: names
bound by such a call (``w, v = np.linalg.eigh(c)``; ``s, u, v = tf.linalg.svd(x)``;
``u, s, vt = np.linalg.svd(x)``: values, vectors as columns, or NumPy's ``vh`` as rows),
turned around by ``[::-1]`` on their ordered axis, forgotten when rebound otherwise. A
statement whose target name's words ask for one end (``top``, ``largest``, ``main``,
``principal``, ``leading``, ``dominant``, ``pca``, ``components``: the largest values;
``smallest``, ``lowest``, ``bottom``, ``minor``, ``null``, ``weakest``: the smallest) and
whose value takes exactly one head (``[:, :k]``, ``[:, 0]``, ``[:k]``) or tail
(``[:, -k:]``, ``[:, -1]``) of such a name along its ordered axis, keeping the other
end, is told. The fix is the statement with the other end taken, largest first
(``evecs[:, -2:][:, ::-1]``). Source only.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    dotted_name,
    function_scopes,
    int_literal,
    parsed_source,
)

SECTION = "indexing-slicing"
MAX_CELL_CHARS = 30_000
# Substring tests before the parse (a regular expression scans a long cell slowly).
_CALLS = ("eigh", "eigvalsh", "svd")
_LARGE = frozenset(
    {
        "top",
        "largest",
        "biggest",
        "main",
        "principal",
        "leading",
        "dominant",
        "major",
        "pca",
        "pc",
        "pcs",
        "component",
        "components",
        "strongest",
    }
)
_SMALL = frozenset(
    {"smallest", "lowest", "bottom", "minor", "null", "weakest", "least", "trailing"}
)


_SAID = {"pc": "principal components", "pcs": "principal components", "pca": "PCA"}


@dataclass(frozen=True)
class Ordered:
    """A name holding a decomposition's result."""

    what: str  # "values", "columns" (vectors as columns) or "rows" (NumPy's vh)
    order: str  # "ascending" or "descending"
    call: str  # the call that made it, as written (``tf.linalg.eigh``)


def _decomposition(node: ast.expr) -> tuple[str, str, int] | None:
    """``(call text, order, results)`` for an eigh/eigvalsh/svd call; ``results`` is 1 for
    values only, 2 for eigh's pair, 3 for an SVD with vectors."""
    while isinstance(node, ast.Call) and call_name(node) == "numpy" and not node.args:
        node = node.func.value  # type: ignore[attr-defined]
    if not isinstance(node, ast.Call):
        return None
    name = call_name(node)
    dotted = dotted_name(node.func) or name or ""
    if name == "eigh":
        return dotted, "ascending", 2
    if name == "eigvalsh":
        return dotted, "ascending", 1
    if name == "svd":
        values_only = any(
            k.arg == "compute_uv" and isinstance(k.value, ast.Constant) and k.value.value is False
            for k in node.keywords
        )
        return dotted, "descending", 1 if values_only else 3
    return None


def _bind(statement: ast.stmt, known: dict[str, Ordered]) -> None:
    """Learn or forget the names a statement binds."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                known.pop(node.id, None)
        return
    target = statement.targets[0]
    made = _decomposition(statement.value)
    names = (
        [e.id if isinstance(e, ast.Name) else None for e in target.elts]
        if isinstance(target, ast.Tuple)
        else [target.id if isinstance(target, ast.Name) else None]
    )
    learned: dict[str, Ordered] = {}
    if made is not None:
        call, order, results = made
        if results == 2 and len(names) == 2:
            kinds = ["values", "columns"]
        elif results == 3 and len(names) == 3:
            kinds = ["values", "columns", "columns"] if call.startswith("tf.") else []
            if not kinds:
                kinds = ["columns", "values", "rows"]
        elif results == 1 and len(names) == 1:
            kinds = ["values"]
        else:
            kinds = []
        for name, kind in zip(names, kinds, strict=False):
            if name is not None:
                learned[name] = Ordered(kind, order, call)
    elif isinstance(target, ast.Tuple) and isinstance(statement.value, ast.Tuple):
        for name, value in zip(names, statement.value.elts, strict=False):
            turned = _reversed(value, known)
            if name is not None and turned is not None:
                learned[name] = turned
    elif names[0] is not None:
        turned = _reversed(statement.value, known)
        if turned is not None:
            learned[names[0]] = turned
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            known.pop(node.id, None)
    known.update(learned)


def _reversed(node: ast.expr, known: Mapping[str, Ordered]) -> Ordered | None:
    """The order of ``v[:, ::-1]`` or ``w[::-1]`` for a known name: turned around."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
        return None
    held = known.get(node.value.id)
    if held is None:
        return None
    part = _along(node.slice, held)
    if (
        isinstance(part, ast.Slice)
        and part.lower is None
        and part.upper is None
        and part.step is not None
        and int_literal(part.step) == -1
    ):
        order = "descending" if held.order == "ascending" else "ascending"
        return Ordered(held.what, order, held.call)
    return None


def _along(index: ast.expr, held: Ordered) -> ast.expr | None:
    """The index along the ordered axis: the second of ``[:, k]`` for columns, the first
    otherwise; None when the other axis is not taken whole."""
    if held.what == "columns":
        if not isinstance(index, ast.Tuple) or len(index.elts) != 2:
            return None
        first, second = index.elts
        if not (
            isinstance(first, ast.Slice) and first.lower is None and first.upper is None
        ) and not (isinstance(first, ast.Constant) and first.value is Ellipsis):
            return None
        return second
    if isinstance(index, ast.Tuple):
        if len(index.elts) != 2:
            return None
        rest = index.elts[1]
        if not (isinstance(rest, ast.Slice) and rest.lower is None and rest.upper is None):
            return None
        return index.elts[0]
    return index


def _end(part: ast.expr) -> tuple[str, str] | None:
    """``("head", count)`` for ``:k`` or ``0``, ``("tail", count)`` for ``-k:`` or ``-1``."""
    if isinstance(part, ast.Slice):
        if part.step is not None:
            return None
        if part.lower is None and part.upper is not None:
            upper = int_literal(part.upper)
            if upper is not None and upper <= 0:
                return None
            return "head", ast.unparse(part.upper)
        if part.upper is None and part.lower is not None:
            lower = part.lower
            if isinstance(lower, ast.UnaryOp) and isinstance(lower.op, ast.USub):
                return "tail", ast.unparse(lower.operand)
            value = int_literal(lower)
            if value is not None and value < 0:
                return "tail", str(-value)
        return None
    value = int_literal(part)
    if value == 0:
        return "head", ""
    if value == -1:
        return "tail", ""
    return None


@dataclass
class Taken:
    node: ast.Subscript
    name: str
    held: Ordered
    end: str
    count: str
    keeps: str


def _takes(value: ast.expr, known: Mapping[str, Ordered]) -> list[Taken]:
    found: list[Taken] = []
    for node in ast.walk(value):
        if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
            continue
        held = known.get(node.value.id)
        if held is None:
            continue
        part = _along(node.slice, held)
        ended = _end(part) if part is not None else None
        if ended is None:
            continue
        end, count = ended
        keeps = "smallest" if (end == "head") == (held.order == "ascending") else "largest"
        found.append(Taken(node, node.value.id, held, end, count, keeps))
    return found


def _wanted(names: list[str]) -> tuple[str, str] | None:
    for name in names:
        words = identifier_words(name)
        for word in words:
            stripped = word.rstrip("0123456789") or word
            if stripped in _LARGE:
                return "largest", stripped
            if stripped in _SMALL:
                return "smallest", stripped
    return None


def _scopes(tree: ast.Module) -> list[list[ast.stmt]]:
    """The bodies of the cell's top level and of each ``def`` in it."""
    return [scope.body for scope in function_scopes(tree)]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a decomposition's result taken from the wrong end, if any."""
    if len(source) > MAX_CELL_CHARS or not any(call in source for call in _CALLS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    lines = source.splitlines()
    for body in _scopes(tree):
        known: dict[str, Ordered] = {}
        for statement in body:
            if isinstance(statement, ast.Assign) and known:
                note = _checked(statement, known, lines)
                if note is not None:
                    return [note]
            _bind(statement, known)
    return []


def _checked(statement: ast.Assign, known: Mapping[str, Ordered], lines: list[str]) -> Note | None:
    names = [t.id for t in statement.targets if isinstance(t, ast.Name)]
    if not names:
        return None
    wanted = _wanted(names)
    if wanted is None:
        return None
    takes = _takes(statement.value, known)
    if len(takes) != 1 or takes[0].keeps == wanted[0]:
        return None
    taken = takes[0]
    held = taken.held
    replacement = _other_end(taken)
    line_no = statement.lineno
    if line_no != statement.end_lineno or not 0 < line_no <= len(lines):
        return None
    written = ast.unparse(taken.node)
    line = lines[line_no - 1]
    piece = line[taken.node.col_offset : taken.node.end_col_offset]
    if piece.count("[") < 1 or line.count(piece) != 1:
        return None
    order_words = "ascending" if held.order == "ascending" else "descending"
    if held.what == "values":
        things = "values"
    elif held.what == "columns":
        things = "vectors (its columns)"
    else:
        things = "vectors (the rows of its last result)"
    amount = f"{taken.count} {taken.keeps}" if taken.count else taken.keeps
    kept = (
        f"the {amount} values" if held.what == "values" else f"the vectors of the {amount} values"
    )
    meaning = (
        "the directions of least variance, the least important ones"
        if taken.keeps == "smallest"
        else "the directions of most variance"
    )
    text = (
        f"`{line.strip()}` (line {line_no} of this cell) keeps {kept} of `{held.call}`, but "
        f"`{names[0]}` says {_SAID.get(wanted[1], wanted[1])}: `{held.call}` returns its values in "
        f"{order_words} order, with its {things} in the same order, so `{written}` is the "
        f"{taken.end} of that order: {meaning}. Nothing raises; what is computed from it "
        "(a projection, the variance it keeps) describes the wrong directions. Take the "
        f"other end, {wanted[0]} first: `{line.replace(piece, replacement).strip()}`."
    )
    return reports.note(text, SECTION)


def _other_end(taken: Taken) -> str:
    """The subscript that takes the wanted end, in wanted order (largest first)."""
    name = taken.name
    columns = taken.held.what == "columns"
    rows_rest = ", :" if isinstance(taken.node.slice, ast.Tuple) and not columns else ""

    def index(part: str) -> str:
        return f"[:, {part}]" if columns else f"[{part}{rows_rest}]"

    if not taken.count:
        return f"{name}{index('-1' if taken.end == 'head' else '0')}"
    if taken.end == "head":
        return f"{name}{index(f'-{taken.count}:')}{index('::-1')}"
    return f"{name}{index(f':{taken.count}')}"
