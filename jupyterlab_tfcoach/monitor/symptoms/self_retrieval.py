"""Leave-one-out retrieval where each query retrieves itself.

``sims = emb @ emb.T`` compares a set of embeddings with itself; its diagonal holds each
item's similarity with itself, the largest of its row for normalised vectors. The
nearest neighbour ``sims.argmax(axis=1)`` is then each query's own index, and an accuracy
or hit rate read from it (``labels[nn] == labels``) is 1 whatever the model learned.
Nothing raises. Leaving the query out means masking the diagonal before the argmax.

After a completed cell holding ``argmax`` and a matrix product (``matmul``, ``dot``, ``@``;
substring tests otherwise), its top-level statements ``R = argmax(S, axis=1)``
(``S.argmax(axis=1)``, ``np.argmax``, ``tf.argmax``, ``keras.ops.argmax``; axis 1 or -1;
under ``.numpy()`` or ``np.asarray`` too) are read, where ``S`` is a name the cell bound
earlier to a product of one operand with its own transpose (``A @ A.T``,
``tf.matmul(A, A, transpose_b=True)``, ``np.dot(A, A.T)``, ``tf.matmul(A,
tf.transpose(A))``, under ``.numpy()``). The symptom, measured on ``R`` as the namespace
holds it after the cell (a 1-D integer array or eager tensor of at most ``MAX_VALUES``
values): at least ``SELF_SHARE`` of its entries (and 2) are their own row index, far above
the one in N of chance. The fix is a line before the argmax that fills the diagonal with
-inf (``np.fill_diagonal`` for a NumPy matrix, ``tf.linalg.set_diag`` for a tensor).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.errors.held_values import INTEGERS, held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "joining-indexing"
MAX_CELL_CHARS = 50_000
MAX_VALUES = 1_000_000
# Chance is one row in N; a masked diagonal gives none. A twentieth of the rows finding
# themselves is far above chance (embeddings that are not unit rows find themselves less
# often than unit ones, which always do).
SELF_SHARE = 0.05
_PRODUCTS = frozenset({"matmul", "dot"})


def _transposed(node: ast.AST) -> ast.AST | None:
    """``A`` for ``A.T`` or ``transpose(A)``."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return node.value
    if isinstance(node, ast.Call) and call_name(node) == "transpose" and len(node.args) == 1:
        return node.args[0]
    return None


def _self_product(node: ast.AST) -> str | None:
    """The operand's text when ``node`` multiplies a matrix by its own transpose."""
    while isinstance(node, ast.Call) and call_name(node) in ("numpy", "asarray", "array"):
        if isinstance(node.func, ast.Attribute) and call_name(node) == "numpy":
            node = node.func.value
        elif node.args:
            node = node.args[0]
        else:
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        left, right = node.left, _transposed(node.right)
    elif isinstance(node, ast.Call) and call_name(node) in _PRODUCTS and len(node.args) == 2:
        left = node.args[0]
        flagged = any(
            k.arg == "transpose_b" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        )
        right = node.args[1] if flagged else _transposed(node.args[1])
    elif (
        isinstance(node, ast.Call)
        and call_name(node) == "dot"
        and isinstance(node.func, ast.Attribute)
        and len(node.args) == 1
    ):
        left, right = node.func.value, _transposed(node.args[0])
    else:
        return None
    if right is None or ast.dump(left) != ast.dump(right):
        return None
    return ast.unparse(left)


def _argmax_of(node: ast.AST) -> str | None:
    """``S`` for ``S.argmax(axis=1)`` or ``argmax(S, axis=1)`` (axis 1 or -1), also under
    a conversion to NumPy (``tf.argmax(S, axis=1).numpy()``, ``np.asarray(...)``)."""
    while isinstance(node, ast.Call) and call_name(node) in ("numpy", "asarray", "array"):
        if isinstance(node.func, ast.Attribute) and call_name(node) == "numpy" and not node.args:
            node = node.func.value
        elif call_name(node) != "numpy" and node.args:
            node = node.args[0]
        else:
            return None
    if not isinstance(node, ast.Call) or call_name(node) != "argmax":
        return None
    axis: ast.AST | None = None
    for keyword in node.keywords:
        if keyword.arg == "axis":
            axis = keyword.value
    method = isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
    if method and node.func.value.id not in ("np", "tf", "ops", "numpy"):  # type: ignore[union-attr]
        target = node.func.value  # type: ignore[union-attr]
        if axis is None and node.args:
            axis = node.args[0]
    elif node.args and isinstance(node.args[0], ast.Name):
        target = node.args[0]
        if axis is None and len(node.args) > 1:
            axis = node.args[1]
    else:
        return None
    if isinstance(axis, ast.UnaryOp) and isinstance(axis.op, ast.USub):
        value = axis.operand.value if isinstance(axis.operand, ast.Constant) else None
        ok = value == 1
    else:
        ok = isinstance(axis, ast.Constant) and axis.value == 1
    return target.id if ok and isinstance(target, ast.Name) else None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a nearest neighbour that is each query itself, if any."""
    if len(source) > MAX_CELL_CHARS or "argmax" not in source:
        return []
    if "matmul" not in source and "dot" not in source and "@" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    products: dict[str, str] = {}
    for statement in tree.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            continue
        operand = _self_product(statement.value)
        matrix = _argmax_of(statement.value)
        if matrix is not None and matrix in products:
            note = _checked(source, statement, target.id, matrix, products[matrix], namespace)
            if note is not None:
                return [note]
        if operand is not None:
            products[target.id] = operand
        else:
            products.pop(target.id, None)
    return []


def _checked(
    source: str,
    statement: ast.Assign,
    result: str,
    matrix: str,
    operand: str,
    namespace: Mapping[str, Any],
) -> Note | None:
    values = held_array(namespace.get(result), MAX_VALUES, INTEGERS, ndim=1)
    if values is None or values.shape[0] < 2:
        return None
    rows = values.shape[0]
    own = int(_own(values).sum())
    if own < max(2, SELF_SHARE * rows):
        return None
    described = describe(matrix, namespace.get(matrix))
    if described is None:
        return None
    if described.kind == "array":
        fix = f"np.fill_diagonal({matrix}, -np.inf)"
    else:
        fix = (
            f"{matrix} = tf.linalg.set_diag({matrix}, "
            f"tf.fill([tf.shape({matrix})[0]], float('-inf')))"
        )
    line = ast.get_source_segment(source, statement) or f"{result} = ..."
    text = (
        f"`{line}` (line {statement.lineno} of this cell) picks, for {own} of its {rows} "
        f"rows, the row's own index: `{matrix}` compares `{operand}` with itself, so a "
        "query can match itself, and an accuracy or hit rate read from it counts those "
        "matches as hits whatever the model learned (with unit-length embeddings every "
        "query matches itself and the score is 1). Nothing raises. Leave each query out by "
        "masking "
        f"the diagonal before the argmax, on the line above it: `{fix}`."
    )
    return reports.note(text, SECTION)


def _own(values: Any) -> Any:
    """Where an entry equals its own position (``values`` is a NumPy array, so NumPy is
    imported already: read from ``sys.modules``)."""
    numpy = sys.modules["numpy"]
    return values == numpy.arange(values.shape[0])
