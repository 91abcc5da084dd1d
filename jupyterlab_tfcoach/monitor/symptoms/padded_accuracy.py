"""A token accuracy averaged over every position of padded sequences, padding included.

``(pred == tags).mean()`` over ``(batch, time)`` arrays of padded sequences counts the
padded positions as well as the real tokens. The loss never looked at those positions
(a mask, ``mask_zero``), so the predictions there are arbitrary, and they are compared
with the labels' padding value: meaningless hits and misses mixed into the score, which
then also moves with the amount of padding. Nothing raises. The accuracy over real
tokens indexes the comparison with the padding mask of the inputs: ``[tokens != 0]``.

After a completed cell whose text holds a mean and ``==`` or ``equal`` (two substring
tests otherwise), each top-level mean with no axis (``np.mean``, ``.mean()``,
``tf.reduce_mean``, ``keras.ops.mean``, under a cast or ``astype``) of ``A == B`` or
``equal(A, B)`` on two names is read: both hold 2-D integer arrays or eager tensors of
one shape (at most ``MAX_VALUES`` values, copied only then). The padding is read from
a 2-D integer array of that shape held by a name of the cell (else of the namespace, at
most ``MAX_NAMES`` names, type and shape read first): every row is non-zero values
followed by zeros (or zeros then values, the same side for all rows), some row is
padded, none is all padding. Labels where 0 is a real class hold zeros inside rows and
are never taken for padding. The fix is the comparison indexed with ``P != 0`` (NumPy)
or given to ``tf.boolean_mask`` with it (tensors).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.errors.held_values import INTEGERS, held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import unwrap_calls
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 50_000
MAX_VALUES = 5_000_000
MAX_NAMES = 300
_MEANS = frozenset({"mean", "reduce_mean"})
_WRAPPERS = frozenset({"cast", "astype"})


def _compared_names(node: ast.AST) -> tuple[str, str] | None:
    node = unwrap_calls(node, _WRAPPERS)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        pair = (node.left, node.comparators[0])
    elif isinstance(node, ast.Call) and call_name(node) == "equal" and len(node.args) == 2:
        pair = (node.args[0], node.args[1])
    else:
        return None
    if all(isinstance(side, ast.Name) for side in pair):
        return pair[0].id, pair[1].id  # type: ignore[attr-defined]
    return None


def _means(tree: ast.Module) -> list[tuple[ast.Call, ast.AST]]:
    """Top-level means with no axis, and the expression each averages."""
    found: list[tuple[ast.Call, ast.AST]] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if not isinstance(node, ast.Call) or call_name(node) not in _MEANS or node.keywords:
            continue
        if isinstance(node.func, ast.Attribute) and not node.args:
            if not isinstance(node.func.value, ast.Name) or node.func.value.id not in ("np", "tf"):
                found.append((node, node.func.value))
        elif len(node.args) == 1:
            found.append((node, node.args[0]))
    return sorted(found, key=lambda pair: (pair[0].lineno, pair[0].col_offset))


def _padding_side(values: Any) -> tuple[str, float] | None:
    """``("post", share)`` when every row of a 2-D integer array is values then zeros
    (``"pre"``: zeros then values), some row is padded and none is all zeros."""
    real = values != 0
    counts = real.sum(axis=1)
    width = values.shape[1]
    if width < 2 or counts.min() == 0 or counts.min() == width:
        return None
    # Values then zeros: each row never turns real again once padded (and the reverse).
    if bool((real[:, :-1] >= real[:, 1:]).all()):
        side = "post"
    elif bool((real[:, :-1] <= real[:, 1:]).all()):
        side = "pre"
    else:
        return None
    return side, float(1.0 - real.mean())


def _padding_name(
    shape: tuple[int, ...], cell_names: list[str], namespace: Mapping[str, Any]
) -> tuple[str, str, float] | None:
    seen: set[str] = set()
    names = list(cell_names)
    names += [name for name in list(namespace)[-MAX_NAMES:] if not name.startswith("_")]
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        value = namespace.get(name)
        described = describe("", value)
        if described is None or described.shape != shape:
            continue
        values = held_array(value, MAX_VALUES, INTEGERS, ndim=2)
        if values is None:
            continue
        side = _padding_side(values)
        if side is not None:
            return name, side[0], side[1]
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a token accuracy averaged over padded positions, if any."""
    if len(source) > MAX_CELL_CHARS or "mean" not in source:
        return []
    if "==" not in source and "equal" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    cell_names = [node.id for node in ast.walk(tree) if isinstance(node, ast.Name)]
    for call, averaged in _means(tree):
        names = _compared_names(averaged)
        if names is None:
            continue
        shapes = []
        kinds = []
        for name in names:
            described = describe(name, namespace.get(name))
            if described is None or described.shape is None or len(described.shape) != 2:
                break
            shapes.append(described.shape)
            kinds.append(described.kind)
        if len(shapes) != 2 or shapes[0] != shapes[1] or None in shapes[0]:
            continue
        padding = _padding_name(shapes[0], cell_names, namespace)
        if padding is None:
            continue
        note = _note(source, call, unwrap_calls(averaged, _WRAPPERS), kinds, padding)
        if note is not None:
            return [note]
    return []


def _note(
    source: str,
    call: ast.Call,
    comparison: ast.AST,
    kinds: list[str],
    padding: tuple[str, str, float],
) -> Note | None:
    text = ast.get_source_segment(source, call)
    compared = ast.get_source_segment(source, comparison)
    if not text or not compared or "\n" in text or compared not in text:
        return None
    name, side, share = padding
    if all(kind == "array" for kind in kinds):
        kept = f"({compared})"
        masked = f"{kept}[{name} != 0]"
        fixed = text.replace(kept, masked, 1) if kept in text else text.replace(compared, masked, 1)
    else:
        fixed = text.replace(compared, f"tf.boolean_mask({compared}, {name} != 0)", 1)
    end = "end" if side == "post" else "start"
    message = (
        f"`{text}` (line {call.lineno} of this cell) averages over every position, and "
        f"{share:.0%} of them are padding (`{name}` holds 0 at the {end} of its rows): the "
        "predictions there were never trained and are compared with the labels' padding "
        "value, so those positions add hits and misses that say nothing about the model. "
        f"Nothing raises. Count the real tokens only: `{fixed}`."
    )
    return reports.note(message, SECTION)
