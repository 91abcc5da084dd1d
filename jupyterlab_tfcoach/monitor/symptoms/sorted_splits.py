"""A split cut from labels stored sorted by class: a class missing from one side.

Data built class by class (``np.concatenate([make(0), make(1), make(2)])``) or read from
a file ordered by label keeps its labels sorted. Slicing it into a training and a
validation part (``y_train = targets[:384]``) before shuffling gives the training part
the first classes only: the model never sees the rest, and the validation part scores
it on classes it could not learn. Shuffling the training part afterwards does not bring
them back, and nothing raises.

After a cell that completed (a cell without a slice written with ``:`` in brackets costs
one regular-expression search), each slice ``Y[a:b]`` of a plain name assigned by a top-
level statement (a look such as ``print(Y[:5])`` is no split) and holding a tenth of the
rows or more is read: ``Y`` holds, after the cell, a 1-D integer NumPy array or tensor
(at most ``MAX_ROWS`` values, 2 to ``MAX_CLASSES`` distinct ones, each twice on average)
sorted in either direction, and the slice lacks one of ``Y``'s classes. The note names
the slice, the classes it holds and those it lacks; fix: shuffle ``Y`` and the arrays
the cell slices the same way (``images[:384]``) by one permutation before the split, a
line put first in the cell (in words when the cell slices no partner array: a shuffle of
the labels alone would break every pair).

Reads the labels' values only (one sort check and a count of the classes); nothing here
imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import integer_labels
from jupyterlab_tfcoach.monitor.syntax import numpy_name, parsed_source

SECTION = "keras-validation-data"
MAX_ROWS = 1_000_000
MAX_CLASSES = 1000
MAX_CELL_CHARS = 50_000
_WANTED = re.compile(r"\w\[\s*[-\w]*\s*:")


def _sorted(labels: Any) -> bool:
    steps = labels[1:] - labels[:-1] if labels.dtype.kind == "i" else None
    if steps is None:
        numpy = sys.modules["numpy"]
        steps = labels[1:].astype(numpy.int64) - labels[:-1].astype(numpy.int64)
    return bool((steps >= 0).all() or (steps <= 0).all())


def _bounds(node: ast.Slice, namespace: Mapping[str, Any]) -> tuple[int | None, int | None] | None:
    """The slice's start and stop as ints (None where left out); None when another
    expression than a whole number or a name holding one is written, or a step."""
    if node.step is not None:
        return None
    found: list[int | None] = []
    for part in (node.lower, node.upper):
        if part is None:
            found.append(None)
        elif isinstance(part, ast.Constant) and type(part.value) is int:
            found.append(part.value)
        elif (
            isinstance(part, ast.UnaryOp)
            and isinstance(part.op, ast.USub)
            and isinstance(part.operand, ast.Constant)
            and type(part.operand.value) is int
        ):
            found.append(-part.operand.value)
        elif isinstance(part, ast.Name) and type(namespace.get(part.id)) is int:
            found.append(namespace[part.id])
        else:
            return None
    return found[0], found[1]


def _listed(classes: list[int]) -> str:
    shown = [str(c) for c in classes[:8]] + (["..."] if len(classes) > 8 else [])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a slice of sorted labels that lacks a class, if any."""
    if len(source) > MAX_CELL_CHARS or _WANTED.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return []
    # A split is assigned (``y_train = y[:384]``, ``a, b = y[:n], y[n:]``): a slice read
    # inside a call or an expression statement (``print(y[:5])``) is a look, not a split.
    slices = [
        node
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        for node in (
            statement.value.elts if isinstance(statement.value, ast.Tuple) else [statement.value]
        )
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Slice)
    ]
    checked: set[str] = set()
    for node in slices:
        name = node.value.id  # type: ignore[attr-defined]
        bounds = _bounds(node.slice, namespace)  # type: ignore[arg-type]
        if bounds is None:
            continue
        labels = integer_labels(namespace.get(name), MAX_ROWS) if name not in checked else None
        checked.add(name)
        if labels is None:
            continue
        # One pass first: the sort in ``unique`` only for labels already in order.
        if not _sorted(labels):
            continue
        classes = numpy.unique(labels)
        # Labels repeat (at least twice per class on average): ids and counters do not.
        if not 2 <= classes.shape[0] <= min(MAX_CLASSES, labels.shape[0] // 2):
            continue
        part = labels[bounds[0] : bounds[1]]
        # A part of the data (a tenth or more), not a peek at its first rows.
        if part.shape[0] < max(2, labels.shape[0] // 10):
            continue
        held = numpy.unique(part)
        missing = [int(c) for c in classes if c not in held]
        if missing:
            return [_note(node, name, [int(c) for c in held], missing, slices, source, namespace)]
    return []


def _note(
    node: ast.Subscript,
    name: str,
    held: list[int],
    missing: list[int],
    slices: list[ast.Subscript],
    source: str,
    namespace: Mapping[str, Any],
) -> Note:
    written = ast.get_source_segment(source, node) or f"{name}[...]"
    cut = ast.get_source_segment(source, node.slice)
    rows = len(namespace[name])
    partners: list[str] = []
    for other in slices:
        partner = other.value.id  # type: ignore[attr-defined]
        if partner == name or partner in partners:
            continue
        value = namespace.get(partner)
        if ast.get_source_segment(source, other.slice) != cut:
            continue
        try:
            same_rows = type(value).__name__ == "ndarray" and len(value) == rows
        except Exception:
            same_rows = False
        if same_rows:
            partners.append(partner)
    one = "class" if len(missing) == 1 else "classes"
    text = (
        f"`{name}` is sorted by class, so `{written}` (line {node.lineno} of this cell) "
        f"holds class{'es' if len(held) > 1 else ''} {_listed(held)} only: {one} "
        f"{_listed(missing)} never appear{'s' if len(missing) == 1 else ''} in that part. "
        "A split taken before shuffling keeps the order the data was built in; a model "
        "trained on it never sees those classes, and shuffling the part afterwards does "
        "not bring them back. Nothing raises."
    )
    numpy = numpy_name(namespace)
    if numpy is None or not partners:
        # Without the arrays that pair with these labels, a printed shuffle of the labels
        # alone would break every pair: say it in words.
        return reports.note(
            text + f" Shuffle `{name}` and the arrays whose rows pair with it by one "
            "permutation before splitting.",
            SECTION,
        )
    arrays = [*partners, name]
    fix = (
        f"perm = {numpy}.random.permutation(len({name})); "
        f"{', '.join(arrays)} = {', '.join(f'{a}[perm]' for a in arrays)}"
    )
    together = "them together" if partners else "it"
    text += f" Shuffle {together} before splitting, as the first line of the cell: `{fix}`."
    return reports.note(text, SECTION)
