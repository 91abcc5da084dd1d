"""Class weights that grow with each class's frequency: the inverse of what they are for.

``class_weight`` (for ``fit``) or a per-class weight table is meant to give the rare
classes more weight, so that the loss does not let the model ignore them. Computed as
``count / total`` instead of ``total / count``, the most frequent class gets the largest
weight and the rarest the smallest: the imbalance grows, and nothing raises.

After a cell that completed (a cell without ``weight`` costs one substring test), each
top-level ``NAME = <...>`` whose name holds ``weight`` and that holds, after the cell, a
plain dict of 2 to 1000 whole-number classes to numbers is read with the labels the cell
names: a name holding a 1-D integer NumPy array or tensor (at most a million values)
that has every class of the dict. When the classes' counts differ (the largest at least
1.5 times the smallest) and the weights rise with them (the same order, the most frequent
class weighing most), the note names the table, the counts and the weights; fix: the
inverse frequency, ``{int(c): len(y) / (k * n) for c, n in zip(*np.unique(y,
return_counts=True))}`` in the learner's names.

Reads the labels' counts only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import integer_labels
from jupyterlab_tfcoach.monitor.syntax import numpy_name, parsed_source

SECTION = "labels-and-loss"
MAX_CLASSES = 1000
MAX_LABELS = 1_000_000
MAX_CELL_CHARS = 50_000
IMBALANCE = 1.5


def _table(value: Any) -> dict[int, float] | None:
    if type(value) is not dict or not 2 <= len(value) <= MAX_CLASSES:
        return None
    table: dict[int, float] = {}
    for key, weight in value.items():
        # Python or NumPy numbers only: never a user class's __int__ or __float__.
        if not all(
            type(item) in (int, float) or type(item).__module__ == "numpy" for item in (key, weight)
        ):
            return None
        try:
            if int(key) != key:
                return None
            table[int(key)] = float(weight)
        except (TypeError, ValueError):
            return None
    return table


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a class-weight table that favours the frequent classes, if any."""
    if "weight" not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    numpy = sys.modules.get("numpy")
    if tree is None or numpy is None:
        return []
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and "weight" in statement.targets[0].id.lower()
        ):
            continue
        table_name = statement.targets[0].id
        table = _table(namespace.get(table_name))
        if table is None:
            continue
        classes = sorted(table)
        for name in names:
            labels = integer_labels(namespace.get(name), MAX_LABELS)
            if labels is None or labels.shape[0] < 2 * len(classes) or min(classes) < 0:
                continue
            # Labels outside the table's classes: another array (and ``bincount`` sizes its
            # result by the largest value: never more than the table's largest class).
            if labels.min() < 0 or labels.max() > max(classes):
                continue
            counts = numpy.bincount(labels, minlength=max(classes) + 1)
            counted = [int(counts[c]) for c in classes]
            if min(counted) == 0 or max(counted) < IMBALANCE * min(counted):
                continue
            by_count = sorted(classes, key=lambda c: counts[c])
            weights = [table[c] for c in by_count]
            rising = all(a <= b for a, b in itertools.pairwise(weights))
            if rising and weights[-1] > weights[0]:
                return [_note(table_name, name, table, counts, by_count, statement, namespace)]
    return []


def _note(
    table_name: str,
    labels: str,
    table: dict[int, float],
    counts: Any,
    by_count: list[int],
    statement: ast.Assign,
    namespace: Mapping[str, Any],
) -> Note:
    common, rare = by_count[-1], by_count[0]
    text = (
        f"`{table_name}` (line {statement.lineno} of this cell) gives each class a weight "
        f"that grows with how often it occurs in `{labels}`: class {common} "
        f"({int(counts[common])} examples) weighs {table[common]:.3g}, class {rare} "
        f"({int(counts[rare])} examples) {table[rare]:.3g}. Class weights are meant to do "
        "the opposite, give the rare classes more weight so the loss does not let the "
        "model ignore them; these make the frequent class dominate even more. Nothing "
        "raises. Weigh each class by its inverse frequency"
    )
    numpy = numpy_name(namespace)
    if numpy is None:
        return reports.note(text + ": total / (number of classes * count).", SECTION)
    fix = (
        f"{table_name} = {{int(c): len({labels}) / ({len(table)} * n) for c, n in "
        f"zip(*{numpy}.unique({labels}, return_counts=True))}}"
    )
    return reports.note(text + f": `{fix}`.", SECTION)
