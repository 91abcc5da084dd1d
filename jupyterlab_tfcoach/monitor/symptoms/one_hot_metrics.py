"""A metric that wants one-hot labels, fed integer class ids in the learner's code.

``keras.metrics.CategoricalAccuracy`` (and ``TopKCategoricalAccuracy``, the
``CategoricalCrossentropy`` metric) read the labels as one row of 0/1 per example, one
column per class, and take their argmax. Given class ids, one whole number per example
(``acc.update_state(ids, probs)``), that argmax runs over the whole vector of ids, so
every row is compared with one position of the batch, and the number printed means
nothing; nothing raises. The ``Sparse`` twin takes class ids.

After a completed cell whose text holds ``Categorical`` (one substring test otherwise):
each ``m.update_state(y, p)`` or ``m(y, p)`` in the cell's code outside ``def``/
``class``, where ``m`` holds one of those Keras classes (exactly, by name and module)
after the cell, ``y`` a name (or a subscript of one) holding a NumPy array or tensor of
whole numbers with one axis less than ``p`` (or a trailing axis of 1), and ``p`` a name
(or subscript) holding scores with more than one column. The note names the metric, the
labels and the predictions; the fix is the ``Sparse`` class, written where the cell made
the metric (with its arguments), else as the class to use.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import (
    dotted_name,
    outside_scopes,
    parsed_source,
    source_segment,
)

SECTION = "labels-and-loss"
MAX_VALUES = 10_000
MAX_ELEMENTS = 5_000_000

# A metric of one-hot labels -> its twin for class ids.
_SPARSE_TWIN = {
    "CategoricalAccuracy": "SparseCategoricalAccuracy",
    "TopKCategoricalAccuracy": "SparseTopKCategoricalAccuracy",
    "CategoricalCrossentropy": "SparseCategoricalCrossentropy",
}


def _one_hot_metric(value: Any) -> str | None:
    cls = type(value)
    module = str(getattr(cls, "__module__", ""))
    name = cls.__name__
    return name if name in _SPARSE_TWIN and module.startswith("keras.src.metrics") else None


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Subscript | ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _shape(value: Any) -> tuple[int, ...] | None:
    module = str(getattr(type(value), "__module__", ""))
    if not module.startswith(("numpy", "tensorflow")):
        return None
    try:
        return tuple(int(d) for d in value.shape)
    except Exception:
        return None


def _read(node: ast.AST, source: str, namespace: Mapping[str, Any]) -> tuple[str, Any] | None:
    """(the expression as written, its value) for a name or a subscript of a name whose
    value the namespace holds as is (``y_test``, ``preds["label"]``)."""
    written = source_segment(source, node)
    if not written or "\n" in written:
        return None
    if isinstance(node, ast.Name):
        return (written, namespace[node.id]) if node.id in namespace else None
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is str
    ):
        held = namespace.get(node.value.id)
        if type(held) is dict and node.slice.value in held:
            return written, held[node.slice.value]
    return None


def _class_ids(value: Any, scores: tuple[int, ...]) -> bool:
    """Whether ``value`` is one whole number per row of scores shaped ``scores``."""
    shape = _shape(value)
    numpy = sys.modules.get("numpy")
    if shape is None or numpy is None or len(scores) < 2 or scores[-1] < 2:
        return False
    if shape != scores[:-1] and shape != (*scores[:-1], 1):
        return False
    try:
        if int(numpy.prod(shape)) > MAX_ELEMENTS:
            return False
        flat = numpy.asarray(value).reshape(-1)[:MAX_VALUES]
        if flat.size == 0 or not bool(numpy.all(flat == numpy.round(flat))):
            return False
        # Class ids: several values, all in [0, classes); a 0/1 column is a binary label.
        return bool(flat.min() >= 0 and flat.max() < scores[-1] and numpy.unique(flat).size >= 2)
    except Exception:
        return False


def _made(tree: ast.Module, name: str) -> ast.Call | None:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Call)
            and (dotted_name(node.value.func) or "").rsplit(".", 1)[-1] in _SPARSE_TWIN
        ):
            return node.value
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "Categorical" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in outside_scopes(tree):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        func = node.func
        receiver = func.value if isinstance(func, ast.Attribute) else func
        if isinstance(func, ast.Attribute) and func.attr != "update_state":
            continue
        if not isinstance(receiver, ast.Name):
            continue
        kind = _one_hot_metric(namespace.get(receiver.id))
        if kind is None:
            continue
        labels = _read(node.args[0], source, namespace)
        scores = _read(node.args[1], source, namespace)
        scores_shape = _shape(scores[1]) if scores is not None else None
        if labels is None or scores is None or scores_shape is None:
            continue
        if not _class_ids(labels[1], scores_shape):
            continue
        return [_note(node, receiver.id, kind, labels[0], scores[0], scores_shape, tree, source)]
    return []


def _note(
    call: ast.Call,
    metric: str,
    kind: str,
    labels: str,
    scores: str,
    shape: tuple[int, ...],
    tree: ast.Module,
    source: str,
) -> Note:
    twin = _SPARSE_TWIN[kind]
    written = source_segment(source, call) or ""
    made = _made(tree, metric)
    made_text = source_segment(source, made) if made is not None else None
    text = (
        f"`{metric}` is a `{kind}`, which reads the labels as one-hot rows (one column per "
        f"class) and takes their argmax; `{written}` (line {call.lineno} of this cell) gives "
        f"it `{labels}`, one class id per example, against `{scores}`'s {shape[-1]} scores "
        "per example. The argmax of a vector of ids is one position of the whole batch, so "
        "every prediction is compared with that one class and the result means nothing, "
        f"without any error. For integer class ids use `{twin}`, which takes the ids as "
        "they are."
    )
    if made is not None and made_text and "\n" not in made_text:
        fixed = made_text.replace(kind, twin, 1)
        text += f" Fix: `{metric} = {fixed}` in place of `{metric} = {made_text}`."
    else:
        text += f" Fix: make `{metric}` a `keras.metrics.{twin}()`."
    return reports.note(text, SECTION)
