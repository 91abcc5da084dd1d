"""Scaling statistics computed on every row while a training split of those rows exists.

``mu = X.mean(axis=0); sd = X.std(axis=0)`` written after ``X_train = X[:800]`` (or
beside a ``train_test_split``) takes the mean and spread of the validation and test rows
too: every input is then scaled by numbers that saw the held-out data, a leak that makes
the scores on those rows better than on truly new data. Nothing raises. The hand-written
twin of ``norm.adapt(X)`` (``adapt_leaks.py``).

Found after a cell that completed (a cell without a call of one of those reductions costs
a regular-expression search), from its top-level ``name = R(A, axis=0)`` statements (or
``mu, sd = A.mean(), A.std()``), ``R`` a mean, spread, variance, min or max
(``A.mean(axis=0)``, ``np.std(A, 0)``, ``tf.reduce_mean(A, axis=0)``, or over every
value: ``A.mean()``, ``np.std(A)``), ``A`` a name of neither a training nor a held-out
word holding a numeric NumPy array or eager tensor (at most a million values): a ``(N,
F)`` table (F > 1) or a 1-D series (a time series split by position, ``train_raw =
series[:800]``), while another name with a training word (``train``, ``tr``) holds fewer
rows of the same width that are rows of ``A``: its first or last rows, or (floats) its
first 16 rows each found in ``A`` (``adapt_leaks``'s reading), and the cell subtracts or
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
from jupyterlab_tfcoach.monitor.syntax import call_name, int_literal, parsed_source, walk_nodes

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 50_000
MAX_NAMESPACE = 5_000
# A call of a reduction written somewhere in the cell (``.mean(``, ``np.std(``...).
_OVER_ROWS = re.compile(r"\b(?:\w*mean|\w*std|var|min|max|reduce_\w+)\s*\(")
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
    if not isinstance(data, ast.Name):
        return None
    if axis is None:
        return data  # over every value: the rows of a series, or all of a table
    return data if int_literal(axis) == 0 else None


def _training_part(owner: str, whole: Any, namespace: dict[str, Any]) -> tuple[str, int] | None:
    """A name with a training word holding fewer rows of ``whole`` of the same width."""
    for name, value in list(namespace.items())[:MAX_NAMESPACE]:
        if type(name) is not str or name.startswith("_") or name == owner:
            continue
        if not is_training_name(name):
            continue
        part = array_rows(value)
        if part is None or part.ndim != whole.ndim or not 0 < part.shape[0] < whole.shape[0]:
            continue
        if part.shape[1:] == whole.shape[1:] and contains_rows(whole, part):
            return name, int(part.shape[0])
    return None


def _pairs(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """``(name, value)`` of ``name = value`` and of each ``a, b = f(x), g(x)``; the
    reductions under a plain value (``mu = float(np.mean(x))``) are each paired with the
    name."""
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
        if len(target.elts) != len(value.elts):
            return []
        found: list[tuple[str, ast.expr]] = []
        for name, item in zip(target.elts, value.elts, strict=True):
            found.extend(_pairs(name, item))
        return found
    if not isinstance(target, ast.Name):
        return []
    return [(target.id, n) for n in ast.walk(value) if isinstance(n, ast.Call)]


def _table_or_series(values: Any) -> bool:
    """A ``(N, F)`` table of several columns, or a 1-D series."""
    return bool(values.ndim == 1 or (values.ndim == 2 and values.shape[1] >= 2))


def _scaling_names(tree: ast.Module) -> set[str]:
    """Names the cell subtracts or divides by: ``(x - mu) / sd``."""
    return {
        node.right.id
        for node in walk_nodes(tree)
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
        for target, value in _pairs(statement.targets[0], statement.value):
            data = _over_rows(value) if isinstance(value, ast.Call) else None
            if data is None or is_training_name(data.id) or is_held_out_name(data.id):
                continue
            if scalers is None:
                scalers = _scaling_names(tree)
            if target not in scalers:
                continue  # a statistic the cell does not scale by (a look at the data)
            whole = array_rows(namespace.get(data.id))
            if whole is None or whole.shape[0] < 2 or not _table_or_series(whole):
                continue
            part = _training_part(data.id, whole, namespace)
            if part is None:
                continue
            text = _text(statement, data, part, int(whole.shape[0]), source, whole.ndim == 1)
            if text is not None:
                return [reports.note(text, SECTION)]
    return []


def _text(
    statement: ast.Assign,
    data: ast.Name,
    part: tuple[str, int],
    rows: int,
    source: str,
    series: bool = False,
) -> str | None:
    written = ast.get_source_segment(source, statement)
    if written is None or "\n" in written or data.end_col_offset is None:
        return None
    training, kept = part
    raw = written.encode("utf-8")
    # Every use of the data in the statement (``mu, sd = x.mean(), x.std()``), from the end.
    uses = sorted(
        (
            n
            for n in ast.walk(statement.value)
            if isinstance(n, ast.Name) and n.id == data.id and n.end_col_offset is not None
        ),
        key=lambda n: n.col_offset,
        reverse=True,
    )
    for use in uses:
        if use.lineno != statement.lineno:
            return None
        assert use.end_col_offset is not None
        begin = use.col_offset - statement.col_offset
        end = use.end_col_offset - statement.col_offset
        raw = raw[:begin] + training.encode("utf-8") + raw[end:]
    fixed = raw.decode("utf-8")
    unit = "values" if series else "rows"
    return (
        f"`{written}` (line {statement.lineno}) computes a statistic over all {rows:,} "
        f"{unit} of `{data.id}`, but the training split `{training}` holds only {kept:,} of "
        f"them: the other {rows - kept:,} {unit} (validation or test data) are part of the "
        f"numbers the inputs are scaled by, a leak: the scores on those {unit} come out "
        "better than on truly new data. Nothing raises. Compute the statistics on the "
        f"training {unit} only, and scale every split with them: `{fixed}`."
    )
