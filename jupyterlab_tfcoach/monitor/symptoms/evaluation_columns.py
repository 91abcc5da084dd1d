"""Results of several ``evaluate`` calls averaged as one pool: loss and metrics mixed.

``model.evaluate`` of a model compiled with metrics returns a list, ``[loss, metric, ...]``.
Cross-validation and repeated runs collect one such list per fold (``scores.append(
model.evaluate(x_val, y_val))``); ``np.mean(scores)`` then averages every number of the
table together, losses and accuracies alike, and the "mean accuracy" it prints is neither.
Nothing raises.

Read after a completed cell (``cell_reading``; a cell without ``mean`` or ``average``
costs one regular-expression search): a top-level ``np.mean(V)``/``np.average(V)``/
``tf.reduce_mean(V)`` without an axis, where ``V`` holds now a list of at least two rows
that are lists or tuples of the same length (2 to ``MAX_COLUMNS``) of numbers, or a 2-D
NumPy array of that shape, and the learner filled ``V`` from ``evaluate`` calls: a line of
this cell or of one of the last ``MAX_HISTORY`` cells holds ``V.append(`` and
``.evaluate(``.

The fix, when the statement's target names the quantity (``cv_accuracy``, ``mean_loss``)
and the rows have two columns, is the mean of that column
(``np.mean(np.asarray(V)[:, 1])``: Keras puts the loss first); else the note asks for the
column of each quantity in words (``np.mean(V, axis=0)``: one mean per column).
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import call_name

SECTION = "keras-model-api"
MAX_NOTES = 1
MAX_ROWS = 10_000
MAX_COLUMNS = 8
MAX_HISTORY = 30
WANTED = re.compile(r"\b(?:mean|average|reduce_mean)\b")
_MEANS = frozenset({"mean", "average", "reduce_mean", "nanmean"})
_LOSS_WORDS = frozenset({"loss", "losses", "nll", "mse", "mae"})
_METRIC_WORDS = frozenset({"acc", "accuracy", "auc", "precision", "recall", "f1"})


def _table(value: Any) -> tuple[int, int] | None:
    """(rows, columns) of a list of equal-length rows of numbers, or of a 2-D array."""
    numpy = sys.modules.get("numpy")
    if type(value) is list and 2 <= len(value) <= MAX_ROWS:
        widths = set()
        for row in value:
            if type(row) not in (list, tuple):
                return None
            widths.add(len(row))
            if len(widths) > 1:
                return None
            for item in row:
                if type(item) not in (int, float) and not (
                    numpy is not None and isinstance(item, numpy.floating | numpy.integer)
                ):
                    return None
        width = widths.pop()
        return (len(value), width) if 2 <= width <= MAX_COLUMNS else None
    if numpy is not None and type(value) is numpy.ndarray and value.ndim == 2:
        rows, width = value.shape
        if 2 <= rows <= MAX_ROWS and 2 <= width <= MAX_COLUMNS and value.dtype.kind == "f":
            return int(rows), int(width)
    return None


def _filled_by_evaluate(name: str, source: str, namespace: dict[str, Any]) -> bool:
    cells = namespace.get("In")
    texts = [source]
    if isinstance(cells, list):
        texts += [c for c in cells[-MAX_HISTORY:] if isinstance(c, str)]
    marker = f"{name}.append("
    for text in texts:
        if marker not in text:
            continue
        for line in text.splitlines():
            if marker in line and ".evaluate(" in line:
                return True
    return False


def evaluation_column_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    notes: list[Note] = []
    for node in code.nodes:
        if len(notes) >= MAX_NOTES:
            break
        if not isinstance(node, ast.Call) or call_name(node) not in _MEANS:
            continue
        if len(node.args) != 1 or any(k.arg in ("axis", None) for k in node.keywords):
            continue
        argument = node.args[0]
        if not isinstance(argument, ast.Name) or argument.id not in namespace:
            continue
        shape = _table(namespace[argument.id])
        if shape is None or not _filled_by_evaluate(argument.id, code.source, namespace):
            continue
        rows, width = shape
        call_text = code.segment(node)
        func_text = code.segment(node.func)
        if call_text is None or func_text is None:
            continue
        statement = code.statement_of(node)
        target = None
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.value is node
        ):
            target = statement.targets[0].id
        words = set(identifier_words(target)) if target else set()
        column = None
        if width == 2 and words & _METRIC_WORDS and not words & _LOSS_WORDS:
            column = 1
        elif width == 2 and words & _LOSS_WORDS and not words & _METRIC_WORDS:
            column = 0
        prefix = func_text[: -len(call_name(node) or "")]
        numpy_prefix = prefix if prefix in ("np.", "numpy.") else "np."
        fix = ""
        if column is not None and target is not None:
            fix = (
                f" Fix: `{target} = {numpy_prefix}mean({numpy_prefix}asarray("
                f"{argument.id})[:, {column}])`."
            )
        else:
            fix = (
                f" Average each column on its own (`{numpy_prefix}mean({argument.id}, axis=0)` "
                f"gives one mean per quantity, the loss first)."
            )
        text = (
            f"`{call_text}` (line {node.lineno} of this cell) averages every number of "
            f"`{argument.id}` together: it holds {rows} results of `evaluate`, each "
            f"{width} numbers (the loss, then each compiled metric), so the mean mixes "
            f"losses with metrics and is neither. Nothing raises.{fix}"
        )
        notes.append(reports.note(text, SECTION))
    return notes
