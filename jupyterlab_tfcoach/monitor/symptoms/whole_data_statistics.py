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

The other way round, a held-out split scaled by its own statistics: ``(x_test -
x_test.mean(axis=0)) / x_test.std(axis=0)`` while the training split is scaled by its
own. The test inputs are then placed by numbers the model never saw: a test set with a
shift (or the anomalies a detector is meant to find) is partly scaled away. Read from
every ``h - m``, ``h / s`` and ``(h - m) / s`` a top-level statement binds (under a
cast or ``astype``; a difference summed or squared is a statistic) whose ``h`` is a name
with a held-out word (``test``, ``val``, ``te``...) holding a float ``(N, F)`` table or a
1-D series, and whose ``m`` is a reduction over its rows written on ``h`` itself (as
above), or a name (the statistic computed in an earlier cell, ``test_mu``) holding the
mean, spread, minimum or maximum over ``h``'s rows (compared by value, at most a million
values), while a name with a training word holding the same width (``x_test`` ->
``x_train`` first) gives a different statistic. The fix is the statement with the
training split's statistic in its place: a name the cell bound to it (``mean =
x_train.mean(axis=0)``) when there is one, else the reduction on the training split.
A cell with neither a reduction nor a subtraction or division of a held-out name costs a
regular-expression search.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.adapt_leaks import (
    array_rows,
    as_training_name,
    contains_rows,
    is_held_out_name,
    is_training_name,
)
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    int_literal,
    parsed_source,
    subtree_nodes,
    walk_nodes,
)
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 50_000
MAX_NAMESPACE = 5_000
# A call of a reduction written somewhere in the cell (``.mean(``, ``np.std(``...).
_OVER_ROWS = word_gate(r"\b(?:\w*mean|\w*std|var|min|max|reduce_\w+)\s*\(")
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
# A held-out name subtracted or divided: ``x_test - m``, ``X_val / s``.
_HELD_OUT_SCALED = word_gate(
    r"(?i:\w*(?:test|val|valid|eval|holdout|_te|_va)\w*)\s*[-/]\s*[A-Za-z_]"
)
# The statistics a scaling uses, by what NumPy calls them.
_KINDS = {
    "mean": "mean",
    "nanmean": "mean",
    "reduce_mean": "mean",
    "std": "std",
    "nanstd": "std",
    "reduce_std": "std",
    "min": "min",
    "reduce_min": "min",
    "max": "max",
    "reduce_max": "max",
}
_TF_NAMES = {"mean": "reduce_mean", "std": "reduce_std", "min": "reduce_min", "max": "reduce_max"}


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
    return [(target.id, n) for n in subtree_nodes(value) if isinstance(n, ast.Call)]


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
    if len(source) > MAX_CELL_CHARS:
        return []
    reduced = _OVER_ROWS.search(source) is not None
    if not reduced and _HELD_OUT_SCALED.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    own = _own_statistics(tree, source, namespace)
    if own is not None:
        return [own]
    if not reduced:
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
            for n in subtree_nodes(statement.value)
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


# ------------------------------------------------- a held-out split scaled by its own numbers
def _statistic(values: Any, kind: str) -> Any:
    return getattr(values, kind)(axis=0)


def _close(a: Any, b: Any) -> bool:
    numpy = sys.modules["numpy"]
    try:
        return bool(a.shape == b.shape and numpy.allclose(a, b, rtol=1e-4, atol=1e-6))
    except Exception:
        return False


def _own_kind(node: ast.expr, held: str, values: Any, namespace: dict[str, Any]) -> str | None:
    """The statistic (``"mean"``...) over ``held``'s rows that ``node`` is: a reduction
    written on ``held`` itself, or a name holding the same numbers."""
    if isinstance(node, ast.Call):
        data = _over_rows(node)
        if data is None or data.id != held:
            return None
        return _KINDS.get(call_name(node) or "")
    if not isinstance(node, ast.Name) or node.id == held:
        return None
    stored = array_rows(namespace.get(node.id))
    if stored is None or stored.dtype.kind != "f" or stored.shape != values.shape[1:]:
        return None
    for kind in ("mean", "std", "min", "max"):
        if _close(stored, _statistic(values, kind)):
            return kind
    return None


def _training_twin(held: str, values: Any, namespace: dict[str, Any]) -> str | None:
    """``x_train`` for ``x_test`` when it holds the same width, else the first name with
    a training word that does."""
    twin = as_training_name(held)
    names = [twin] if twin is not None else []
    names += [n for n in list(namespace)[:MAX_NAMESPACE] if type(n) is str and n != twin]
    for name in names:
        if name.startswith("_") or not is_training_name(name):
            continue
        part = array_rows(namespace.get(name))
        if part is not None and part.ndim == values.ndim and part.shape[1:] == values.shape[1:]:
            if part.shape[0] > 1:
                return name
    return None


def _bound_to(tree: ast.Module, training: str, kind: str) -> str | None:
    """The name a top-level statement of the cell binds to the ``kind`` statistic over
    the rows of ``training`` (``mean = x_train.mean(axis=0)``)."""
    for statement in tree.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target, value = statement.targets[0], statement.value
        pairs = [(target, value)]
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            pairs = list(zip(target.elts, value.elts, strict=False))
        for name, item in pairs:
            if not isinstance(name, ast.Name) or not isinstance(item, ast.Call):
                continue
            data = _over_rows(item)
            if data is not None and data.id == training:
                if _KINDS.get(call_name(item) or "") == kind:
                    return name.id
    return None


def _scaled_name(node: ast.BinOp) -> str | None:
    """``h`` of ``h - m``, ``h / s`` and ``(h - m) / s``."""
    left = node.left
    if isinstance(node.op, ast.Div) and isinstance(left, ast.BinOp):
        if isinstance(left.op, ast.Sub):
            left = left.left
    if isinstance(left, ast.Name) and is_held_out_name(left.id):
        return left.id
    return None


_WRAPPERS = frozenset(
    {"astype", "float32", "float64", "cast", "asarray", "array", "constant", "convert_to_tensor"}
)


def _scaled_values(statement: ast.stmt) -> list[ast.AST]:
    """The expressions a statement binds as scaled data: its value under conversions
    (``((x - m) / s).astype("float32")``) and, for ``(x - m) / s``, its ``x - m``. A
    difference inside a sum or a power (``np.sum((y_val - y_val.mean()) ** 2)``, an R²'s
    denominator) is a statistic, not a scaling."""
    if not isinstance(statement, ast.Assign):
        return []
    value: ast.AST = statement.value
    while isinstance(value, ast.Call) and call_name(value) in _WRAPPERS:
        if isinstance(value.func, ast.Attribute) and call_name(value) == "astype":
            value = value.func.value
        elif value.args:
            value = value.args[0]
        else:
            break
    found = [value]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        found.append(value.left)
    return found


def _statistic_nodes(node: ast.expr) -> list[ast.expr]:
    """The names and calls of a subtrahend or divisor (``val_hi - val_lo``: both), not
    looking inside a call."""
    found: list[ast.expr] = []
    pending: list[ast.expr] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Name | ast.Call):
            found.append(current)
        elif isinstance(current, ast.BinOp):
            pending.extend((current.left, current.right))
    return found


def _held_statistic(namespace: dict[str, Any], training: str, kind: str) -> str | None:
    """A name of the namespace already holding the ``kind`` statistic over ``training``'s
    rows (``mean_full`` from ``mean_full, std_full = fit_scaler(X_train)``): the fix then
    reuses it. Newest names first (a dict keeps the order names were first bound)."""
    part = array_rows(namespace.get(training))
    if part is None:
        return None
    wanted = _statistic(part, kind)
    names = list(namespace)[-MAX_NAMESPACE:]
    for name in reversed(names):
        if type(name) is not str or name.startswith("_"):
            continue
        value = namespace.get(name)
        if type(value) is type(wanted) and _close(value, wanted):
            return name
    return None


def _replacement(
    node: ast.expr,
    held: str,
    training: str,
    kind: str,
    tree: ast.Module,
    tensor: bool,
    namespace: dict[str, Any],
) -> str:
    """The training split's statistic to write in place of ``node``."""
    bound = _bound_to(tree, training, kind)
    if bound is not None:
        return bound
    if isinstance(node, ast.Name):
        # A statistic the learner keeps in a name: the name keeping the training one.
        held_name = _held_statistic(namespace, training, kind)
        if held_name is not None:
            return held_name
    if isinstance(node, ast.Call):
        swapped = ast.unparse(node)
        moved = ast.parse(swapped, mode="eval").body
        for name in subtree_nodes(moved):
            if isinstance(name, ast.Name) and name.id == held:
                name.id = training
        return ast.unparse(moved)
    if tensor:
        return f"tf.math.{_TF_NAMES[kind]}({training}, axis=0)"
    return f"{training}.{kind}(axis=0)"


def _own_statistics(tree: ast.Module, source: str, namespace: dict[str, Any]) -> Note | None:
    told: dict[int, list[tuple[ast.expr, str]]] = {}  # statement line -> (node, new text)
    first: tuple[str, str, str, ast.stmt] | None = None
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        seen: set[int] = set()
        for node in _scaled_values(statement):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub | ast.Div)):
                continue
            held = _scaled_name(node)
            if held is None:
                continue
            values = array_rows(namespace.get(held))
            if values is None or values.dtype.kind != "f" or not _table_or_series(values):
                continue
            if values.shape[0] < 2:
                continue
            for used in _statistic_nodes(node.right):
                if id(used) in seen:
                    continue
                kind = _own_kind(used, held, values, namespace)
                if kind is None:
                    continue
                training = _training_twin(held, values, namespace)
                if training is None:
                    continue
                part = array_rows(namespace.get(training))
                if part is None or _close(_statistic(part, kind), _statistic(values, kind)):
                    continue  # the same numbers either way: nothing changes
                seen.add(id(used))
                tensor = type(namespace.get(held)).__module__.startswith("tensorflow")
                new = _replacement(used, held, training, kind, tree, tensor, namespace)
                told.setdefault(statement.lineno, []).append((used, new))
                if first is None:
                    first = (held, training, kind, statement)
        if first is not None:
            break
    if first is None:
        return None
    held, training, kind, statement = first
    written = ast.get_source_segment(source, statement)
    if written is None or "\n" in written:
        return None
    raw = written.encode("utf-8")
    for node, new in sorted(told[statement.lineno], key=lambda t: t[0].col_offset, reverse=True):
        if node.lineno != statement.lineno or node.end_col_offset is None:
            return None
        begin = node.col_offset - statement.col_offset
        end = node.end_col_offset - statement.col_offset
        raw = raw[:begin] + new.encode("utf-8") + raw[end:]
    fixed = raw.decode("utf-8")
    shown: list[str] = []
    for node, _ in sorted(told[statement.lineno], key=lambda t: t[0].col_offset):
        text = ast.get_source_segment(source, node) or ast.unparse(node)
        if text not in shown:
            shown.append(text)
    used = ", ".join(f"`{text}`" for text in shown)
    return reports.note(
        f"`{written}` (line {statement.lineno}) scales `{held}` with its own statistics "
        f"({used}), not with those of the training split `{training}`. The model learned "
        f"on inputs placed by the training numbers; placed by its own, `{held}` loses "
        "whatever sets it apart from the training data (a shift is scaled away) and its "
        "scores do not describe new data, which comes one row at a time. Nothing raises. "
        f"Scale every split with the training statistics: `{fixed}`.",
        SECTION,
    )


# The reading ``split_after_scaling.py`` shares: the data a statistic over rows reads.
over_rows = _over_rows
