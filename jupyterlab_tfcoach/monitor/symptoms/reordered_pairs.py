"""Rows of one array reordered by an index permutation, their partner array left in order.

``idx = rng.permutation(len(x)); x = x[idx]`` (or ``tf.gather(x, idx)``,
``np.take(x, idx)``) shuffles the rows of ``x``; when the labels that go with those rows
are not reordered by the same ``idx``, row i of ``x`` now goes with another example's
label. Splitting both the same way (``x[:800]`` and ``labels[:800]``) or pairing them
(``fit(x, labels)``, ``from_tensor_slices((x, labels))``) afterwards raises nothing: the
model learns noise and its accuracy stays near chance.

After a cell that completed (a cell without an index in square brackets or a ``gather``
/ ``take`` call costs one regular-expression search), each top-level assignment whose
value is ``X[I]``, ``gather(X, I)`` or ``take(X, I)`` with plain names is read: ``I``
must hold, after the cell, a 1-D integer NumPy array or tensor of n > 1 values that is a
permutation of 0..n-1 (one sort of at most ``MAX_ROWS`` values). A partner is another
name holding an array, tensor or list of n rows that the cell does not reorder by ``I``
and that a later line either slices with the same slice as the reordered array (``x[:800]``
and ``labels[:800]``) or passes to a pairing call with it. The note names the
reordering line, the permutation and the partner; fix: that line reordering both,
``x, labels = x[idx], labels[idx]``.

Reads shapes, dtypes and the index array only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import first_axis, integer_labels
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "tf-data-order"
MAX_ROWS = 1_000_000
MAX_CELL_CHARS = 50_000
# An index written as a plain name in brackets, or a gather / take call.
_WANTED = re.compile(r"\w\[\s*[A-Za-z_]\w*\s*\]|\b(?:gather|take)\(")
_REORDERING_CALLS = frozenset({"gather", "take"})
# Calls that pair inputs with labels row by row.
_PAIRING = frozenset(
    {"fit", "evaluate", "from_tensor_slices", "zip", "train_test_split", "Dataset"}
)


@dataclass(frozen=True)
class Reorder:
    """``x = x[idx]``: the statement, the array reordered, its node and the index name."""

    statement: ast.Assign
    array: str
    array_node: ast.Name
    index: str


def _reorder(node: ast.AST) -> Reorder | None:
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return None
    value = node.value
    if isinstance(value, ast.Subscript):
        array, index = value.value, value.slice
    elif isinstance(value, ast.Call) and call_name(value) in _REORDERING_CALLS:
        if len(value.args) != 2 or value.keywords:
            return None
        array, index = value.args
    else:
        return None
    if isinstance(array, ast.Name) and isinstance(index, ast.Name):
        return Reorder(node, array.id, array, index.id)
    return None


def _rows(value: Any) -> int | None:
    """The number of rows of an array, tensor or list; None for anything else."""
    return len(value) if type(value) is list else first_axis(value)


def _permutation_length(value: Any) -> int | None:
    """n when ``value`` is a 1-D integer array or tensor holding each of 0..n-1 once."""
    numpy = sys.modules.get("numpy")
    values = integer_labels(value, MAX_ROWS) if numpy is not None else None
    if values is None:
        return None
    size = int(values.shape[0])
    if not numpy.array_equal(numpy.sort(values), numpy.arange(size)):
        return None
    return size


def _slice_text(node: ast.Subscript, source: str) -> str | None:
    if isinstance(node.slice, ast.Name):
        return None
    return ast.get_source_segment(source, node.slice)


def _uses(tree: ast.Module) -> list[ast.AST]:
    """Every node outside function bodies and lambdas."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _reordered_by(nodes: list[ast.AST], index: str) -> set[str]:
    """The names the cell indexes or gathers by ``index`` anywhere, and the names it
    binds to such a reordering (``y_mixed = y[idx]``: the partner, already reordered)."""
    names: set[str] = set()
    for node in nodes:
        found = _reorder(node)
        if found is not None and found.index == index:
            targets = found.statement.targets[0]
            elements = targets.elts if isinstance(targets, ast.Tuple) else [targets]
            names.update(e.id for e in elements if isinstance(e, ast.Name))
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name):
            if node.slice.id == index and isinstance(node.value, ast.Name):
                names.add(node.value.id)
        elif isinstance(node, ast.Call) and call_name(node) in _REORDERING_CALLS:
            args = node.args
            if len(args) == 2 and isinstance(args[1], ast.Name) and args[1].id == index:
                if isinstance(args[0], ast.Name):
                    names.add(args[0].id)
    return names


def _partner(
    reorder: Reorder,
    nodes: list[ast.AST],
    source: str,
    rows: int,
    namespace: Mapping[str, Any],
) -> tuple[str, ast.AST] | None:
    """(the partner's name, the node pairing it with the reordered rows) after the line."""
    line = reorder.statement.lineno
    target = reorder.statement.targets[0]
    reordered = {reorder.array}
    if isinstance(target, ast.Name):
        reordered.add(target.id)
    skipped = _reordered_by(nodes, reorder.index) | reordered | {reorder.index}
    later = sorted(
        (n for n in nodes if getattr(n, "lineno", 0) > line),
        key=lambda n: (n.lineno, n.col_offset),  # type: ignore[attr-defined]
    )
    slices: set[str] = set()
    for node in later:
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            if node.value.id in reordered:
                text = _slice_text(node, source)
                if text is not None:
                    slices.add(text)
    for node in later:
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            name = node.value.id
            if name in skipped or _slice_text(node, source) not in slices:
                continue
            if _rows(namespace.get(name)) == rows:
                return name, node
        elif isinstance(node, ast.Call) and call_name(node) in _PAIRING:
            arguments: list[ast.expr] = []
            for argument in node.args[:2]:
                elements = argument.elts if isinstance(argument, ast.Tuple) else [argument]
                arguments.extend(elements)
            names = [a.id for a in arguments if isinstance(a, ast.Name)]
            if not reordered & set(names):
                continue
            for name in names:
                if name not in skipped and _rows(namespace.get(name)) == rows:
                    return name, node
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a permutation applied to one array of a pair in this cell, if any."""
    if len(source) > MAX_CELL_CHARS or _WANTED.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    nodes = _uses(tree)
    for node in tree.body:
        reorder = _reorder(node)
        if reorder is None:
            continue
        rows = _permutation_length(namespace.get(reorder.index))
        if rows is None:
            continue
        found = _partner(reorder, nodes, source, rows, namespace)
        if found is not None:
            note = _note(reorder, found[0], found[1], rows, source)
            if note is not None:
                return [note]
    return []


def _note(reorder: Reorder, partner: str, pairing: ast.AST, rows: int, source: str) -> Note | None:
    statement = reorder.statement
    written = ast.get_source_segment(source, statement)
    value = ast.get_source_segment(source, statement.value)
    target = ast.get_source_segment(source, statement.targets[0])
    paired = ast.get_source_segment(source, pairing)
    if written is None or value is None or target is None or "\n" in written:
        return None
    start = reorder.array_node.col_offset - statement.value.col_offset
    stop = start + len(reorder.array)
    if value[start:stop] != reorder.array:
        return None
    partner_value = value[:start] + partner + value[stop:]
    fix = f"{target}, {partner} = {value}, {partner_value}"
    line = pairing.lineno  # type: ignore[attr-defined]
    if paired is None or "\n" in paired or len(paired) > 80:
        where = f"line {line} still pairs it with them row by row"
    elif isinstance(pairing, ast.Subscript):
        where = f"line {line} still splits it as it splits `{reorder.array}` (`{paired}`)"
    else:
        where = f"`{paired}` (line {line}) still pairs it with them row by row"
    text = (
        f"`{written}` (line {statement.lineno} of this cell) reorders the {rows} rows of "
        f"`{reorder.array}` by the permutation `{reorder.index}`, but `{partner}` (also "
        f"{rows} rows) keeps its order, and {where}: "
        f"each row of `{reorder.array}` now goes with another example's `{partner}`. The "
        "model learns from mismatched pairs (accuracy near chance), and nothing raises. "
        f"Reorder both by the same permutation, in place of that line: `{fix}`."
    )
    return reports.note(text, SECTION)
