"""A norm of pairwise differences taken over a points axis instead of the coordinates.

``diff = a[:, None, :] - b[None, :, :]`` holds, for every pair of a point of ``a`` and a
point of ``b``, their difference: ``(n, m, d)``, the coordinates last. The distance of
each pair is the norm over the last axis, ``np.linalg.norm(diff, axis=-1)``, an
``(n, m)`` table. ``axis=1`` (or 0) takes the norm over the points of ``b`` (of ``a``)
instead: an ``(n, d)`` table of one number per coordinate, and a ``min`` or ``argmin``
over its axis 1 then picks a coordinate, not a nearest point. Nothing raises: both
shapes are valid.

After a completed cell holding ``norm(`` (one substring test otherwise), each top-level
``np.linalg.norm``/``tf.norm``/``tf.linalg.norm``/``keras.ops.norm`` call with a
literal ``axis`` whose array is that subtraction written inline (its two operands names
holding ``(n, d)`` and ``(m, d)``) or a name the cell assigned (at the top level) from a
subtraction of two operands that index in a new axis at different places (``x[:, None]``
and ``y[None]``, ``x[:, np.newaxis, :]``, ``expand_dims(x, 1)`` and ``expand_dims(y,
0)``): the name then holds a rank-3 array or tensor (read by shape only) with more than
one point on each of its first two axes, and the axis given is one of them. The note
names the call, the shape and what comes out; the fix is the call with ``axis=-1``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.unit_axis_ops import held_shape
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    dotted_name,
    int_literal,
    outside_scopes,
    parsed_source,
)

SECTION = "reducing-tensors"
_NORMS = frozenset({"np.linalg.norm", "numpy.linalg.norm", "tf.norm", "tf.linalg.norm"})
_NORM_MODULES = frozenset({"ops", "keras.ops"})
_NEW_AXIS = frozenset({"None", "np.newaxis", "numpy.newaxis", "tf.newaxis"})


def _new_axis(node: ast.AST) -> int | None:
    """Where ``node`` inserts a new axis: ``x[:, None]`` -> 1, ``x[None]`` -> 0,
    ``expand_dims(x, 1)`` -> 1; None for anything else."""
    if isinstance(node, ast.Subscript):
        index = node.slice
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        places = [
            i
            for i, item in enumerate(items)
            if (isinstance(item, ast.Constant) and item.value is None)
            or dotted_name(item) in _NEW_AXIS
        ]
        return places[0] if len(places) == 1 else None
    if isinstance(node, ast.Call) and call_name(node) == "expand_dims":
        axis: ast.AST | None = node.args[1] if len(node.args) > 1 else None
        for keyword in node.keywords:
            if keyword.arg == "axis":
                axis = keyword.value
        place = int_literal(axis) if axis is not None else None
        return place if place in (0, 1) else None
    return None


def _pairwise(value: ast.AST) -> bool:
    """``x[:, None] - y[None]``: a difference of every pair."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub)):
        return False
    left, right = _new_axis(value.left), _new_axis(value.right)
    return left is not None and right is not None and {left, right} == {0, 1}


def _inline_shape(value: ast.BinOp, namespace: Mapping[str, Any]) -> tuple[int | None, ...] | None:
    """The shape of ``x[:, None] - y[None]`` written inline, from the ``(n, d)`` and
    ``(m, d)`` that ``x`` and ``y`` hold: ``(n, m, d)`` (the side with its new axis at 1
    gives the rows of axis 0)."""
    rows: dict[int, int | None] = {}
    width: set[int | None] = set()
    for side in (value.left, value.right):
        base = side.value if isinstance(side, ast.Subscript) else None
        if isinstance(side, ast.Call) and side.args:
            base = side.args[0]
        if not isinstance(base, ast.Name):
            return None
        shape = held_shape(namespace.get(base.id))
        place = _new_axis(side)
        if shape is None or len(shape) != 2 or place is None:
            return None
        rows[1 - place] = shape[0]
        width.add(shape[1])
    if len(width) != 1 or set(rows) != {0, 1}:
        return None
    return rows[0], rows[1], width.pop()


def _is_norm(call: ast.Call) -> bool:
    name = dotted_name(call.func)
    if name in _NORMS:
        return True
    return isinstance(call.func, ast.Attribute) and (
        call.func.attr == "norm" and dotted_name(call.func.value) in _NORM_MODULES
    )


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "norm(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    pairwise: dict[str, int] = {}
    for node in outside_scopes(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                if _pairwise(node.value):
                    pairwise[target.id] = node.lineno
                else:
                    pairwise.pop(target.id, None)
    for node in outside_scopes(tree):
        if not isinstance(node, ast.Call) or not _is_norm(node) or not node.args:
            continue
        array = node.args[0]
        if isinstance(array, ast.Name) and array.id in pairwise:
            if pairwise[array.id] > node.lineno:
                continue
            shape = held_shape(namespace.get(array.id))
        elif _pairwise(array):
            shape = _inline_shape(array, namespace)
        else:
            continue
        axis_node = next((k.value for k in node.keywords if k.arg == "axis"), None)
        axis = int_literal(axis_node) if axis_node is not None else None
        if axis is None or shape is None or len(shape) != 3:
            continue
        if axis not in (0, 1, -2, -3) or any(d is None or d < 2 for d in shape[:2]):
            continue
        text = ast.get_source_segment(source, array)
        if not text or "\n" in text:
            continue
        note = _note(source, tree, node, text, axis, shape)
        if note is not None:
            return [note]
    return []


def _note(
    source: str,
    tree: ast.Module,
    call: ast.Call,
    array: str,
    axis: int,
    shape: tuple[int | None, ...],
) -> Note | None:
    written = ast.get_source_segment(source, call)
    if not written or "\n" in written:
        return None
    axis_node = next(k.value for k in call.keywords if k.arg == "axis")
    axis_text = ast.get_source_segment(source, axis_node) or str(axis)
    start = axis_node.col_offset - call.col_offset
    fixed = written[:start] + "-1" + written[start + len(axis_text) :]
    n, m, d = shape
    kept = (m, d) if axis % 3 == 0 else (n, d)
    target = None
    for node in outside_scopes(tree):
        if isinstance(node, ast.Assign) and node.value is call and len(node.targets) == 1:
            if isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id
    result = f"`{target}` is" if target else "the result is"
    assign = f"{target} = {fixed}" if target else fixed
    text = (
        f"`{written}` (line {call.lineno} of this cell) takes the norm over axis {axis_text} "
        f"of `{array}`, ({n}, {m}, {d}): the difference of every pair of points, with the "
        f"{d} coordinates on the last axis. Axis {axis_text} runs over points, so "
        f"{result} ({kept[0]}, {kept[1]}), one number per coordinate, not a distance per "
        f"pair, and a min or argmin over it picks a coordinate, not a nearest point. "
        f"Nothing raises. A pair's distance is the norm over the coordinates: `{assign}` "
        f"gives ({n}, {m})."
    )
    return reports.note(text, SECTION)
