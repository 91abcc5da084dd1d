"""``==`` between tensors whose shapes cannot broadcast: a single False (issue #25).

``tf.equal`` raises on shapes that do not broadcast, but a tensor's ``==`` operator returns
one ``False`` instead (TensorFlow 2.21), so ``tf.reduce_mean(tf.cast(predicted == labels,
tf.float32))`` is 0.0 with a (3,) ``predicted`` against (100,) ``labels`` (an argmax over
the wrong axis) and nothing raises.

Read from the cell's text once it completed (a cell without ``==`` or ``!=`` costs one
substring test): a comparison ``a == b`` (or ``!=``) whose two sides, after the cell, are
described with their shapes by ``operand_shapes.operand_of`` (names, and what keeps a
shape), at least one a tensor, whose known shapes do not broadcast. The note names both
and the fix: make the shapes agree (``tf.equal`` names them when they do not).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.operand_shapes import operand_of
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "broadcasting"
_MAX_COMPARISONS = 32


def _broadcast(a: tuple[int | None, ...], b: tuple[int | None, ...]) -> bool | None:
    """Whether two shapes broadcast (None when an unknown size decides)."""
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x is None or y is None:
            return None
        if x != y and 1 not in (x, y):
            return False
    return True


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for this cell's first tensor comparison of shapes that do not broadcast."""
    if "==" not in source and "!=" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    # A side made by an argmax in this cell is ``class_axis.py``'s to tell (it names the
    # axis): one cause, one note.
    from_argmax = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and (getattr(node.value.func, "attr", None) or getattr(node.value.func, "id", None))
        in ("argmax", "argmin")
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    # operand_of reads a dict: the namespace as is (the kernel's is one), copied at most once.
    names = namespace if isinstance(namespace, dict) else dict(namespace)
    seen = 0
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq | ast.NotEq)
        ):
            continue
        seen += 1
        if seen > _MAX_COMPARISONS:
            break
        left_source = ast.get_source_segment(source, node.left)
        right_source = ast.get_source_segment(source, node.comparators[0])
        if not left_source or not right_source or {left_source, right_source} & from_argmax:
            continue
        left = operand_of(left_source, names)
        right = operand_of(right_source, names)
        if left is None or right is None or left.shape is None or right.shape is None:
            continue
        if "tensor" not in (left.kind, right.kind):
            continue  # NumPy raises on these shapes itself
        if _broadcast(left.shape, right.shape) is not False:
            continue
        written = ast.get_source_segment(source, node) or f"{left_source} == {right_source}"
        text = (
            f"`{written}` (line {node.lineno} of this cell) compares `{left_source}`, "
            f"{left.description}, with `{right_source}`, {right.description}: their shapes "
            f"cannot broadcast, and a tensor's `==` then returns one False instead of raising, "
            f"so a count or an accuracy built on it is 0 and nothing raises. Make the shapes "
            f"agree (one value per example on both sides: an argmax over the last axis, "
            f"`axis=-1`); `tf.equal({left_source}, {right_source})` raises and names both "
            f"shapes when they do not."
        )
        return [reports.note(text, SECTION)]
    return []
