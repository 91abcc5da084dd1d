"""A PCA (an SVD or a covariance) computed on data whose columns were never centred.

Principal components are the directions of largest VARIANCE, which an SVD finds only in
centred data. ``s, u, v = tf.linalg.svd(X)`` on columns whose means are large next to
their spreads finds the direction of the mean vector first: the "first component" points
at the data's centre, and the explained variance is wrong. ``cov = tf.transpose(X) @ X /
(n - 1)`` is not a covariance either unless ``X`` is centred. Nothing raises.

Read after a completed cell from its top-level statements: an ``svd`` call (``tf.linalg``,
``np.linalg``, ``scipy.linalg``) of a name ``X`` whose results, or the names later
statements make from them, speak of a PCA (``pca``, ``pc``, ``pcs``, ``principal``,
``explained``, ``loadings``; not ``components`` alone, which a compression keeps too), or
a name with ``cov``/``covariance``/``scatter`` in it bound to ``X.T @ X``
(``tf.transpose``, ``np.dot``, ``tf.matmul(X, X, transpose_a=True)``), divided or not.
Told when ``X`` then holds a float rank-2 tensor or array (at least 3 rows, at most
``MAX_VALUES`` values) whose column means have a squared length at least ``MEAN_ENERGY``
times the total variance of its columns (the sum of their variances). The fix centres the
columns in a line above and gives the centred data to the same statement.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.errors.held_values import held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import call_name, dotted_name, parsed_source

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 30_000
MAX_VALUES = 200_000
# Centred data has column means near 0. When the mean vector's squared length is half the
# total variance (the sum of the column variances) or more, the mean direction takes a
# large share of the first singular value and turns the first "component" towards it.
MEAN_ENERGY = 0.5
# "components" alone is not enough: an SVD that compresses an image keeps components too,
# on purpose without centring.
_PCA_WORDS = frozenset({"pca", "pc", "pcs", "principal", "explained", "loadings"})
_COV_WORDS = frozenset({"cov", "covariance", "scatter"})
_NEEDED = ("svd", "cov", "scatter")


def _data_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Call) and call_name(node) in ("numpy", "cast", "constant"):
        if call_name(node) == "numpy" and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif node.args:
            node = node.args[0]
        else:
            return None
    return node.id if isinstance(node, ast.Name) else None


def _transposed_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return _data_name(node.value)
    if isinstance(node, ast.Call) and call_name(node) == "transpose" and len(node.args) == 1:
        return _data_name(node.args[0])
    return None


def _gram_of(node: ast.expr) -> str | None:
    """``X`` for ``X.T @ X`` (under a division) and its spellings."""
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        node = node.left
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        left, right = _transposed_name(node.left), _data_name(node.right)
        return left if left is not None and left == right else None
    if isinstance(node, ast.Call) and call_name(node) in ("matmul", "dot") and len(node.args) == 2:
        first, second = node.args
        flagged = any(
            k.arg == "transpose_a" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        )
        left = _data_name(first) if flagged else _transposed_name(first)
        right = _data_name(second)
        return left if left is not None and left == right else None
    return None


def _targets(statement: ast.stmt) -> list[str]:
    names: list[str] = []
    if isinstance(statement, ast.Assign):
        for target in statement.targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    names.append(node.id)
    return names


def _speaks_pca(names: list[str], later: list[ast.stmt]) -> bool:
    """Whether the SVD's results, or the names later statements make from them, speak of a
    PCA (``s_pca``; ``explained = s**2 / ...``)."""
    words = {w for name in names for w in identifier_words(name)}
    for statement in later:
        used = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
        if used & set(names):
            words.update(w for name in _targets(statement) for w in identifier_words(name))
    return bool(words & _PCA_WORDS)


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a PCA of data that was not centred, if any."""
    if len(source) > MAX_CELL_CHARS or not any(w in source for w in _NEEDED):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for index, statement in enumerate(tree.body):
        if not isinstance(statement, ast.Assign):
            continue
        names = _targets(statement)
        own = {w for name in names for w in identifier_words(name)}
        data = None
        svd = None
        for node in ast.walk(statement.value):
            if isinstance(node, ast.Call) and call_name(node) == "svd" and node.args:
                data, svd = _data_name(node.args[0]), node
                break
        if svd is not None and not _speaks_pca(names, tree.body[index + 1 :]):
            continue
        if svd is None:
            if not own & _COV_WORDS:
                continue
            data = _gram_of(statement.value)
        if data is None:
            continue
        note = _checked(source, statement, data, svd, namespace)
        if note is not None:
            return [note]
    return []


def _checked(
    source: str,
    statement: ast.Assign,
    data: str,
    svd: ast.Call | None,
    namespace: Mapping[str, Any],
) -> Note | None:
    value = namespace.get(data)
    values = held_array(value, MAX_VALUES, ("float",), ndim=2)
    if values is None or values.shape[0] < 3 or values.shape[1] < 1:
        return None
    numpy = sys.modules["numpy"]
    means = values.mean(axis=0)
    total_variance = float(values.var(axis=0).sum())
    energy = float(numpy.square(means).sum())
    if not numpy.isfinite(energy) or energy < MEAN_ENERGY * max(total_variance, 1e-12):
        return None
    line = ast.get_source_segment(source, statement)
    if line is None or "\n" in line:
        return None
    described = describe(data, value)
    is_array = described is not None and described.kind == "array"
    centred = f"{data}_centred"
    centring = (
        f"{centred} = {data} - {data}.mean(axis=0)"
        if is_array
        else f"{centred} = {data} - tf.reduce_mean({data}, axis=0)"
    )
    fixed = _renamed(line, statement, data, centred)
    what = (
        f"runs `{dotted_name(svd.func) or 'svd'}` on `{data}`"
        if svd is not None
        else f"multiplies `{data}` by its own transpose"
    )
    shown = ", ".join(f"{m:.3g}" for m in means[:4]) + (", ..." if len(means) > 4 else "")
    text = (
        f"`{line}` (line {statement.lineno} of this cell) {what}, and the columns of "
        f"`{data}` are not centred: their means ({shown}) have a squared length "
        f"{_times(energy / max(total_variance, 1e-12))} times the total variance of the "
        "columns. "
        "Principal components are "
        "directions of variance around the mean; on uncentred data the first one points "
        "towards the mean vector instead, and a covariance made as X.T @ X is not one. "
        "Nothing raises. Centre the columns first (and project the centred data): "
        f"`{centring}` on the line above, then `{fixed}`."
    )
    return reports.note(text, SECTION)


def _times(ratio: float) -> str:
    return f"{ratio:.0f}" if ratio >= 10 else f"{ratio:.2g}"


def _renamed(line: str, statement: ast.Assign, data: str, centred: str) -> str:
    """The statement with every load of ``data`` in its value read from ``centred``."""
    spans = sorted(
        (node.col_offset - statement.col_offset, node.end_col_offset - statement.col_offset)
        for node in ast.walk(statement.value)
        if isinstance(node, ast.Name) and node.id == data and node.end_col_offset is not None
    )
    raw = line.encode("utf-8")
    for start, stop in reversed(spans):
        raw = raw[:start] + centred.encode("utf-8") + raw[stop:]
    return raw.decode("utf-8")
