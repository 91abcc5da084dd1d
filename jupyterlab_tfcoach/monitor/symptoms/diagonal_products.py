"""A matrix multiplied element by element with a diagonal scaling matrix, where ``@`` was
meant.

``D = np.diag(d)`` is a diagonal matrix: scaling the rows and columns of a matrix ``A``
by it is the matrix product ``D @ A @ D``. Written ``D * A * D``, the product is element
by element: every off-diagonal entry of ``A`` meets a 0 of ``D``, so the result keeps
only ``A``'s diagonal (a normalised adjacency without edges, a covariance without
correlations). The shapes agree, nothing raises, and the result is a plausible matrix.

Read after a completed cell from its top-level statements (outside ``def``/``class``
bodies): a chain of ``*`` whose every operand is a name the namespace binds to a float
square matrix (a NumPy array or an eager tensor) of one size, three rows or more, none
of them rebound later in the cell. Told when at least one operand is a diagonal matrix
that scales (its off-diagonal entries all 0, its diagonal not only 0s and 1s: a 0/1
identity is a mask that keeps the diagonal on purpose) and at least one other has a
nonzero entry off its diagonal, which the product sets to 0. The fix is the statement
with each ``*`` of the chain written ``@``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.held_values import held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    SCOPE_NODES,
    line_with_replacement,
    outside_scopes,
    parsed_source,
    source_segment,
)

# The course section that says `@` (tf.matmul) multiplies matrices.
SECTION = "batch-dimension"
MAX_CELL_CHARS = 30_000
# Matrices read at most this large (a copy of an eager tensor, two passes).
MAX_VALUES = 1_000_000
_MIN_SIZE = 3


def _chain(node: ast.BinOp) -> list[ast.expr]:
    """The operands of ``a * b * c`` (any grouping), left to right."""
    found: list[ast.expr] = []
    for side in (node.left, node.right):
        if isinstance(side, ast.BinOp) and isinstance(side.op, ast.Mult):
            found.extend(_chain(side))
        else:
            found.append(side)
    return found


def _outermost_products(tree: ast.Module) -> list[tuple[ast.BinOp, ast.stmt]]:
    """Each ``*`` chain of the cell's top level (outside ``def``/``class``/``lambda``
    bodies), with its top-level statement."""
    found: list[tuple[ast.BinOp, ast.stmt]] = []
    for statement in tree.body:
        pending: list[ast.AST] = [statement]
        while pending:
            node = pending.pop()
            if isinstance(node, SCOPE_NODES):
                continue
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                found.append((node, statement))
                # The chain's own operands are read with it; look inside them only.
                pending.extend(reversed(_chain(node)))
                continue
            pending.extend(reversed(list(ast.iter_child_nodes(node))))
    return found


def _assigned_after(tree: ast.Module, statement: ast.stmt, names: set[str]) -> bool:
    """Whether a later top-level statement of the cell binds one of ``names``: the
    namespace then holds a later value than the one the product read."""
    after = False
    for node in outside_scopes(tree):
        if node is statement:
            after = True
            continue
        if after and isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            if node.id in names and getattr(node, "lineno", 0) > statement.end_lineno:  # type: ignore[operator]
                return True
    return False


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a matrix multiplied element-wise by a diagonal scaling matrix."""
    if len(source) > MAX_CELL_CHARS or "*" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return []
    for product, statement in _outermost_products(tree):
        operands = _chain(product)
        if not all(isinstance(operand, ast.Name) for operand in operands):
            continue
        names = [operand.id for operand in operands]  # type: ignore[attr-defined]
        note = _checked(source, tree, product, statement, names, namespace, numpy)
        if note is not None:
            return [note]
    return []


def _checked(
    source: str,
    tree: ast.Module,
    product: ast.BinOp,
    statement: ast.stmt,
    names: list[str],
    namespace: Mapping[str, Any],
    numpy: Any,
) -> Note | None:
    matrices: dict[str, Any] = {}
    for name in dict.fromkeys(names):
        values = held_array(namespace.get(name), MAX_VALUES, ("float",), ndim=2)
        if values is None or values.shape[0] != values.shape[1] or values.shape[0] < _MIN_SIZE:
            return None
        matrices[name] = values
    if len({values.shape[0] for values in matrices.values()}) != 1:
        return None
    scaling: list[str] = []
    dense: dict[str, int] = {}
    for name, values in matrices.items():
        diagonal = numpy.diagonal(values)
        off_diagonal = int(numpy.count_nonzero(values)) - int(numpy.count_nonzero(diagonal))
        if off_diagonal == 0:
            if not numpy.all((diagonal == 0) | (diagonal == 1)):
                scaling.append(name)
        else:
            dense[name] = off_diagonal
    if not scaling or not dense or _assigned_after(tree, statement, set(matrices)):
        return None
    written = source_segment(source, product)
    if not written or "\n" in written:
        return None
    matrix_product = " @ ".join(names)
    fixed = line_with_replacement(source.splitlines(), statement, product, matrix_product)
    dense_name, lost = next(iter(dense.items()))
    diagonal_name = scaling[0]
    result = ""
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.value is product
    ):
        result = f" `{statement.targets[0].id}` is a diagonal matrix."
    text = (
        f"`{written}` (line {product.lineno} of this cell) multiplies element by element, "
        f"and `{diagonal_name}` is a diagonal matrix (every entry off its diagonal is 0): "
        f"the product keeps only the diagonal of `{dense_name}`, whose {lost} nonzero "
        f"entries off the diagonal all become 0.{result} `*` pairs entry (i, j) with entry "
        "(i, j); scaling the rows and columns of a matrix by a diagonal matrix is a matrix "
        "product, `@`. Nothing raises. "
    )
    if fixed:
        text += f"Write the product with `@`: `{fixed}`."
    else:
        text += f"Write the product with `@`: `{matrix_product}`."
    return reports.note(text, SECTION)
