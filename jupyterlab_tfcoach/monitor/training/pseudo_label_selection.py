"""Pseudo-labels kept where the model is least sure: a confidence threshold reversed.

Self-training keeps a model's predicted labels only where its confidence (the largest class
probability) is at least a threshold: those labels are likely right. ``mask = conf <
THRESH`` keeps the opposite rows, the uncertain ones whose predicted labels are the likeliest
wrong, and the next model is trained on them. Nothing raises; the pseudo-label accuracy just
falls.

After a completed cell holding ``<`` or ``>``, each comparison ``conf < t`` / ``conf <= t``
(``t > conf``) is read with ``ast`` where ``conf`` is a name holding a float array (NumPy or
eager tensor) equal to the row maxima of a probability array of the namespace (2-D, at
least two classes, rows summing to 1, the same rows) and ``t`` a written number or a name
holding one, in (0.5, 1). Told when the same cell indexes, with that comparison (or the
name it is assigned to), an integer array equal to that probability array's ``argmax``:
the predicted labels kept as labels. Selecting uncertain inputs for review (``x[conf <
t]``, no predicted labels taken) stays silent, and so does ``conf >= t``. Predicted labels
held as an eager tensor are read too. The fix is the comparison ``conf >= t`` (``conf > t``
for ``conf <= t``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.syntax import parsed_source, subtree_nodes
from jupyterlab_tfcoach.monitor.training.clip_ranges import float_values

SECTION = "labels-and-loss"
MAX_CELL_CHARS = 50_000
MAX_CANDIDATES = 200  # namespace names looked at for the probability array


def _threshold(node: ast.AST, namespace: Mapping[str, Any]) -> float | None:
    value: Any
    if isinstance(node, ast.Constant):
        value = node.value
    elif isinstance(node, ast.Name):
        value = namespace.get(node.id)
    else:
        return None
    if type(value) not in (int, float) and type(value).__module__ != "numpy":
        return None
    try:
        number = float(value)
    except Exception:
        return None
    return number if 0.5 < number < 1.0 else None


def _below(compare: ast.Compare) -> tuple[ast.Name, ast.AST, str] | None:
    """(the confidence name, the threshold, the operator keeping the confident rows, written
    ``conf <op> t``) of ``conf < t``, ``t > conf`` and their ``=`` forms."""
    if len(compare.ops) != 1:
        return None
    op, left, right = compare.ops[0], compare.left, compare.comparators[0]
    if isinstance(op, ast.Lt | ast.LtE) and isinstance(left, ast.Name):
        return left, right, ">=" if isinstance(op, ast.Lt) else ">"
    if isinstance(op, ast.Gt | ast.GtE) and isinstance(right, ast.Name):
        return right, left, ">=" if isinstance(op, ast.Gt) else ">"
    return None


def _shape(value: Any) -> tuple[int, ...] | None:
    """The shape of a NumPy array or eager tensor, read without copying its values."""
    cls = type(value)
    try:
        if cls.__name__ == "ndarray" and cls.__module__ == "numpy":
            return tuple(value.shape)
        if "tensorflow" in cls.__module__:
            return tuple(int(d) for d in library_attribute(value, "shape"))
    except Exception:
        return None
    return None


def _probabilities(confidence: Any, namespace: Mapping[str, Any]) -> Any | None:
    """The namespace's probability array whose row maxima are ``confidence``."""
    if confidence.ndim != 1:
        return None
    rows = confidence.shape[0]
    for _, value in list(namespace.items())[-MAX_CANDIDATES:]:
        shape = _shape(value)
        if shape is None or len(shape) != 2 or shape[0] != rows or shape[1] < 2:
            continue
        array = float_values(value)
        if array is None:
            continue
        try:
            if not (abs(array.sum(axis=1) - 1.0) < 1e-3).all():
                continue
            if (abs(array.max(axis=1) - confidence) < 1e-6).all():
                return array
        except Exception:
            continue
    return None


def _is_argmax(value: Any, probabilities: Any) -> bool:
    try:
        cls = type(value)
        if "tensorflow" in cls.__module__ and cls.__name__ == "EagerTensor":
            if _shape(value) != probabilities.shape[:1]:
                return False
            value = library_attribute(value, "numpy")()
        elif not (cls.__name__ == "ndarray" and cls.__module__ == "numpy"):
            return False
        if value.dtype.kind not in "iu" or value.shape != probabilities.shape[:1]:
            return False
        return bool((value == probabilities.argmax(axis=1)).all())
    except Exception:
        return False


def _masks(tree: ast.Module, compare: ast.Compare) -> set[str]:
    """The names the comparison is assigned to (``mask = conf < t``)."""
    return {
        target.id
        for node in subtree_nodes(tree)
        if isinstance(node, ast.Assign) and node.value is compare
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _labels_taken(
    tree: ast.Module,
    compare: ast.Compare,
    masks: set[str],
    probabilities: Any,
    namespace: Mapping[str, Any],
) -> str | None:
    """The name of predicted labels the cell indexes with the selection."""
    for node in subtree_nodes(tree):
        if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
            continue
        index = node.slice
        if not (index is compare or (isinstance(index, ast.Name) and index.id in masks)):
            continue
        if _is_argmax(namespace.get(node.value.id), probabilities):
            return node.value.id
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """A note for the first reversed confidence threshold of the cell, if any."""
    if len(source) > MAX_CELL_CHARS or ("<" not in source and ">" not in source):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for compare in subtree_nodes(tree):
        if not isinstance(compare, ast.Compare):
            continue
        found = _below(compare)
        if found is None:
            continue
        name, threshold_node, reversed_op = found
        threshold = _threshold(threshold_node, namespace)
        confidence = float_values(namespace.get(name.id))
        if threshold is None or confidence is None:
            continue
        probabilities = _probabilities(confidence, namespace)
        if probabilities is None:
            continue
        masks = _masks(tree, compare)
        labels = _labels_taken(tree, compare, masks, probabilities, namespace)
        if labels is None:
            continue
        note = _note(source, compare, name.id, threshold_node, reversed_op, labels, masks)
        if note is not None:
            kept = int((confidence < threshold).sum())
            said = f"{kept} of {confidence.shape[0]} rows"
            if isinstance(threshold_node, ast.Name):
                said = f"{threshold:g}; {said}"
            note["text"] = note["text"].replace("{kept}", said)
            return [note]
    return []


def _note(
    source: str,
    compare: ast.Compare,
    confidence: str,
    threshold: ast.AST,
    reversed_op: str,
    labels: str,
    masks: set[str],
) -> Note | None:
    text = ast.get_source_segment(source, compare)
    threshold_text = ast.get_source_segment(source, threshold)
    if not text or not threshold_text or "\n" in text:
        return None
    fixed = f"{confidence} {reversed_op} {threshold_text}"
    mask = sorted(masks)[0] if masks else None
    selection = f"`{mask} = {text}`" if mask else f"`{text}`"
    fix = f"{mask} = {fixed}" if mask else fixed
    return reports.note(
        f"{selection} (line {compare.lineno} of this cell) keeps the rows where the model is "
        f"least sure (`{confidence}` under `{threshold_text}`: {{kept}}), and "
        f"`{labels}[...]` takes their predicted labels: the pseudo-labels most likely wrong "
        "are the ones kept as labels, and a model trained on them learns the mistakes. "
        f"Nothing raises. Keep the confident rows: `{fix}`.",
        SECTION,
    )
