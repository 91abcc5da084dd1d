"""Ranked positions compared with ids: a hit test that can never be true.

``tf.math.top_k(scores, k).indices``, ``np.argsort(...)`` and ``argmax`` give POSITIONS
(0 to n - 1 along the scored axis), while the held-out answers are often the items' own
ids (``1000`` to ``1119``, a catalogue's codes). ``true_id in top_positions[n]``,
``np.isin(true_ids, top_idx)`` or ``top_idx == true_ids[:, None]`` then compare two sets
of numbers that never meet: every test is False, a hit rate of exactly 0, and nothing
raises.

Found after a cell that completed, from its membership and equality tests (``in``,
``==``, ``np.isin``, inside comprehensions too), whose two sides are (subscripts of)
names holding integer arrays or tensors of at most ``MAX_RANGE_ELEMENTS`` values, one
assigned in the cell from a ranking (``top_k(...).indices``, ``argsort``, ``argmax``)
and the two value ranges disjoint. The fix maps the positions to ids with an array the
namespace holds whose length covers every position and whose values cover the other
side's (``item_ids``): the ranking's assignment with ``item_ids[...]`` around it.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import numpy_values, value_at
from jupyterlab_tfcoach.monitor.symptoms.intent_words import cell_lines, segment
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, subtree_nodes, walk_nodes

SECTION = "joining-indexing"
MAX_CELL_CHARS = 30_000
_RANKING_TEXTS = ("top_k", "argsort", "argmax")
_RANKINGS = frozenset({"top_k", "argsort", "argmax"})
_MAX_IDS = 1_000_000


def _base(node: ast.AST) -> ast.Name | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _is_ranking(value: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and call_name(n) in _RANKINGS for n in subtree_nodes(value))


def _int_range(name: ast.Name, namespace: dict[str, Any]) -> tuple[int, int, int] | None:
    """(smallest, largest, size) of an integer array a name holds."""
    operand = value_at(name, namespace, name.id)
    if operand is None or not (operand.dtype or "").startswith(("int", "uint")):
        return None
    values = numpy_values(operand)
    numpy = sys.modules.get("numpy")
    if values is None or numpy is None or values.size == 0:
        return None
    return int(numpy.min(values)), int(numpy.max(values)), int(values.size)


def _tests(tree: ast.Module) -> list[tuple[ast.AST, ast.AST, ast.AST]]:
    found: list[tuple[ast.AST, ast.AST, ast.AST]] = []
    for node in walk_nodes(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            if isinstance(node.ops[0], (ast.In, ast.NotIn, ast.Eq, ast.NotEq)):
                found.append((node, node.left, node.comparators[0]))
        elif isinstance(node, ast.Call) and call_name(node) in ("isin", "in1d", "equal"):
            if len(node.args) == 2:
                found.append((node, node.args[0], node.args[1]))
    return found


def _id_array(
    namespace: dict[str, Any], positions: tuple[int, int, int], ids: tuple[int, int, int]
) -> str | None:
    """A name holding a 1-D array with an entry for every position whose values span the
    ids' range (the catalogue the positions index)."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    for name, value in list(namespace.items()):
        if name.startswith("_") or type(value) is not numpy.ndarray:
            continue
        if value.ndim != 1 or not 0 < value.size <= _MAX_IDS or value.dtype.kind not in "iu":
            continue
        if value.size <= positions[1]:
            continue
        if int(value.min()) <= ids[0] and int(value.max()) >= ids[1]:
            return name
    return None


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS:
        return []
    if not any(text in source for text in _RANKING_TEXTS):
        return []
    if " in " not in source and "==" not in source and "isin" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    ranked: dict[str, ast.Assign] = {}
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and _is_ranking(statement.value)
        ):
            ranked[statement.targets[0].id] = statement
    if not ranked:
        return []
    lines = cell_lines(source)
    for test, left, right in _tests(tree):
        sides = (_base(left), _base(right))
        first, second = sides
        if first is None or second is None:
            continue
        for positions_side, ids_side in ((first, second), (second, first)):
            assignment = ranked.get(positions_side.id)
            if assignment is None or ids_side.id in ranked:
                continue
            positions = _int_range(positions_side, namespace)
            ids = _int_range(ids_side, namespace)
            if positions is None or ids is None or positions[0] < 0:
                continue
            if not (positions[1] < ids[0] or ids[1] < positions[0]):
                continue
            catalogue = _id_array(namespace, positions, ids)
            written = segment(lines, test)
            rhs = segment(lines, assignment.value)
            if catalogue is None or written is None or rhs is None:
                continue
            fixed = f"{positions_side.id} = {catalogue}[{rhs}]"
            return [
                reports.note(
                    f"`{written}` (line {test.lineno} of this cell) can never be true: "
                    f"`{positions_side.id}` holds positions {positions[0]} to {positions[1]} "
                    f"(from `{rhs}`, line {assignment.lineno}: a ranking gives each item's "
                    f"place, not its id) while `{ids_side.id}` holds ids {ids[0]} to "
                    f"{ids[1]}: the two never meet, so every test is False and the figure "
                    "built from it is 0, without any error. Turn the positions into ids "
                    f"with `{catalogue}` before comparing: `{fixed}`.",
                    SECTION,
                )
            ]
    return []
