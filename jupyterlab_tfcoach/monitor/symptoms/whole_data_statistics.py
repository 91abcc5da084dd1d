"""Scaling statistics computed on every row while a training split of those rows exists.

``mu = X.mean(axis=0); sd = X.std(axis=0)`` written after ``X_train = X[:800]`` (or
beside a ``train_test_split``) takes the mean and spread of the validation and test rows
too: every input is then scaled by numbers that saw the held-out data, a leak that makes
the scores on those rows better than on truly new data. Nothing raises. The hand-written
twin of ``norm.adapt(X)`` (``adapt_leaks.py``).

Found after a cell that completed (a cell without ``axis=0``, ``, 0)`` or ``(0)`` costs a
regular-expression search), from its top-level ``name = R(A, axis=0)`` statements,
``R`` a mean, spread, variance, min or max (``A.mean(axis=0)``, ``np.std(A, 0)``,
``tf.reduce_mean(A, axis=0)``), ``A`` a name of neither a training nor a held-out word
holding a numeric ``(N, F)`` NumPy array or eager tensor (F > 1, at most a million
values), while another name with a training word (``train``, ``tr``) holds fewer rows
of the same width that are rows of ``A``: its first or last rows, or (floats) its first
16 rows each found in ``A`` (``adapt_leaks``'s reading), and the cell subtracts or
divides by ``name`` (``(X_train - mu) / sd``: a statistic only looked at is not told).
The note names the statement and both row counts; fix: the statement on the training
split.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.adapt_leaks import (
    array_rows,
    contains_rows,
    is_held_out_name,
    is_training_name,
)
from jupyterlab_tfcoach.monitor.syntax import call_name, int_literal, parsed_source

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 50_000
MAX_NAMESPACE = 5_000
# A reduction over axis 0 written somewhere in the cell: ``axis=0``, ``(A, 0)``, ``(0)``.
_OVER_ROWS = re.compile(r"axis\s*=\s*0(?![\w.])|,\s*0\s*\)|\(\s*0\s*\)")
_STATISTICS = frozenset(
    {
        "mean",
        "std",
        "var",
        "min",
        "max",
        "nanmean",
        "nanstd",
        "reduce_mean",
        "reduce_std",
        "reduce_variance",
        "reduce_min",
        "reduce_max",
    }
)
_MODULES = frozenset({"np", "numpy", "tf", "tensorflow", "math", "ops", "keras"})


def _over_rows(call: ast.Call) -> ast.Name | None:
    """``A`` of ``A.mean(axis=0)``, ``np.mean(A, 0)``, ``tf.reduce_mean(A, axis=0)``."""
    if call_name(call) not in _STATISTICS or not isinstance(call.func, ast.Attribute):
        return None
    owner = call.func.value
    module = owner
    while isinstance(module, ast.Attribute):
        module = module.value
    positional = list(call.args)
    if isinstance(module, ast.Name) and module.id in _MODULES:
        if not positional:
            return None
        data: ast.expr = positional.pop(0)
    else:
        data = owner
    axis = next((k.value for k in call.keywords if k.arg == "axis"), None)
    if axis is None and positional:
        axis = positional[0]
    if axis is None or int_literal(axis) != 0 or not isinstance(data, ast.Name):
        return None
    return data


def _training_part(owner: str, whole: Any, namespace: dict[str, Any]) -> tuple[str, int] | None:
    """A name with a training word holding fewer rows of ``whole`` of the same width."""
    for name, value in list(namespace.items())[:MAX_NAMESPACE]:
        if type(name) is not str or name.startswith("_") or name == owner:
            continue
        if not is_training_name(name):
            continue
        part = array_rows(value)
        if part is None or part.ndim != 2 or not 0 < part.shape[0] < whole.shape[0]:
            continue
        if part.shape[1:] == whole.shape[1:] and contains_rows(whole, part):
            return name, int(part.shape[0])
    return None


def _scaling_names(tree: ast.Module) -> set[str]:
    """Names the cell subtracts or divides by: ``(x - mu) / sd``."""
    return {
        node.right.id
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub | ast.Div)
        and isinstance(node.right, ast.Name)
    }


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or _OVER_ROWS.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    scalers: set[str] | None = None  # walked only once a statistic over rows is found
    for statement in tree.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            continue
        for node in ast.walk(statement.value):
            if not isinstance(node, ast.Call):
                continue
            data = _over_rows(node)
            if data is None or is_training_name(data.id) or is_held_out_name(data.id):
                continue
            if scalers is None:
                scalers = _scaling_names(tree)
            if target.id not in scalers:
                break  # a statistic the cell does not scale by (a look at the data)
            whole = array_rows(namespace.get(data.id))
            if whole is None or whole.ndim != 2 or whole.shape[1] < 2 or whole.shape[0] < 2:
                continue
            part = _training_part(data.id, whole, namespace)
            if part is None:
                continue
            text = _text(statement, data, part, int(whole.shape[0]), source)
            if text is not None:
                return [reports.note(text, SECTION)]
    return []


def _text(
    statement: ast.Assign, data: ast.Name, part: tuple[str, int], rows: int, source: str
) -> str | None:
    written = ast.get_source_segment(source, statement)
    if written is None or "\n" in written or data.end_col_offset is None:
        return None
    training, kept = part
    raw = written.encode("utf-8")
    begin = data.col_offset - statement.col_offset
    end = data.end_col_offset - statement.col_offset
    if data.lineno != statement.lineno:
        return None
    fixed = (raw[:begin] + training.encode("utf-8") + raw[end:]).decode("utf-8")
    return (
        f"`{written}` (line {statement.lineno}) computes a statistic over all {rows:,} "
        f"rows of `{data.id}`, but the training split `{training}` holds only {kept:,} of "
        f"them: the other {rows - kept:,} rows (validation or test data) are part of the "
        "numbers the inputs are scaled by, a leak: the scores on those rows come out "
        "better than on truly new data. Nothing raises. Compute the statistics on the "
        f"training rows only, and scale every split with them: `{fixed}`."
    )
