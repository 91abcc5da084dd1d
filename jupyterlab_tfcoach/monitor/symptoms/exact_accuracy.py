"""A metric that counts exact matches, fed continuous predictions in the learner's code.

``keras.metrics.Accuracy`` counts the rows where ``y_pred == y_true`` exactly: it expects
predicted labels. Fed probabilities (``acc.update_state(y, probs[:, 0])``) or raw scores,
almost no value equals 0 or 1 exactly, so the accuracy is about 0 whatever the model
does; nothing raises. (Keras's ``"accuracy"`` string in ``compile`` picks the right
class itself; ``keras.metrics.Accuracy()`` given to ``compile`` is
``loss_agreement``'s ``exact_accuracy_on_scores``.)

After a completed cell whose text holds ``Accuracy`` or ``update_state`` (one substring
test otherwise): each ``m.update_state(y, p)`` or ``m(y, p)`` in the cell's code outside
``def``/``class``, where ``m`` holds a Keras ``Accuracy`` (exactly that class) after the
cell, or ``keras.metrics.Accuracy()(y, p)`` written inline, and ``p`` is a name (or a
subscript of one: its values are the name's) holding a float NumPy array or tensor with a
value that is not a whole number among its first ``MAX_VALUES``. The note names the metric,
the predictions and a value; the fix is ``BinaryAccuracy(threshold=0.5)`` for one
probability per row (``SparseCategoricalAccuracy``/``CategoricalAccuracy`` for one score
per class), written where the metric was made when the cell made it. With one score per
class the labels decide (read when they are a name holding an array of the predictions'
shape or one axis less): rows of 0/1 with several 1s are multi-label (multi-hot), one
yes/no per column, so ``BinaryAccuracy``; rows with exactly one 1 are one-hot
(``CategoricalAccuracy``); whole numbers one axis short are class ids
(``SparseCategoricalAccuracy``, which raises on multi-hot labels).

The predictions may be written as a selection of such a name (``tf.boolean_mask(p, m)``,
``tf.gather``, ``np.take``, ``p.numpy()``, ``p.reshape(-1)``) or as a ``sigmoid`` call
(``tf.sigmoid(model(x))``: probabilities whatever the model gives; nothing is run again).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import dotted_name, parsed_source

SECTION = "labels-and-loss"
MAX_VALUES = 10_000
MAX_ELEMENTS = 5_000_000  # a larger tensor is not copied to read a few values


def _is_exact_accuracy(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "Accuracy" and str(getattr(cls, "__module__", "")).startswith("keras")


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Subscript | ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _fraction(value: Any) -> tuple[float, tuple[int, ...]] | None:
    """(a value that is not a whole number, the shape) of a float array or tensor."""
    module = str(getattr(type(value), "__module__", ""))
    if not module.startswith(("numpy", "tensorflow")):
        return None
    try:
        dtype = str(getattr(value, "dtype", ""))
        if "float" not in dtype:
            return None
        shape = tuple(int(d) for d in value.shape)
        numpy = sys.modules.get("numpy")
        if numpy is None or int(numpy.prod(shape)) > MAX_ELEMENTS:
            return None
        flat = numpy.asarray(value).reshape(-1)[:MAX_VALUES]
        off = flat[numpy.isfinite(flat) & (flat != numpy.round(flat))]
        return (float(off[0]), shape) if off.size else None
    except Exception:
        return None


MULTI_HOT, ONE_HOT, CLASS_IDS = "multi-hot", "one-hot", "class ids"


def _label_kind(value: Any, shape: tuple[int, ...]) -> tuple[str, int, int] | None:
    """What labels of predictions ``shape`` are: (kind, rows with several 1s, rows)."""
    module = str(getattr(type(value), "__module__", ""))
    numpy = sys.modules.get("numpy")
    if numpy is None or not module.startswith(("numpy", "tensorflow")):
        return None
    try:
        labels_shape = tuple(int(d) for d in value.shape)
        if int(numpy.prod(labels_shape)) > MAX_ELEMENTS:
            return None
        array = numpy.asarray(value)
        if labels_shape == shape[:-1]:
            flat = array.reshape(-1)[:MAX_VALUES]
            whole = bool(numpy.all(flat == numpy.round(flat)))
            return (CLASS_IDS, 0, labels_shape[0] if labels_shape else 0) if whole else None
        if labels_shape != shape:
            return None
        rows = array.reshape(-1, shape[-1])[: MAX_VALUES // max(shape[-1], 1) + 1]
        if not bool(numpy.all((rows == 0) | (rows == 1))):
            return None
        sums = rows.sum(axis=1)
        several = int(numpy.sum(sums > 1))
        if several:
            return (MULTI_HOT, several, int(rows.shape[0]))
        if bool(numpy.all(sums == 1)):
            return (ONE_HOT, 0, int(rows.shape[0]))
        return None
    except Exception:
        return None


# Functions whose output is one probability per value: continuous whatever their input
# (a softmax's one score per class would need the labels to choose the metric).
_SQUASHING = frozenset({"sigmoid"})
# Functions that select or reshape their first argument's values without changing them.
_SELECTING = frozenset(
    {
        "boolean_mask",
        "gather",
        "gather_nd",
        "take",
        "reshape",
        "squeeze",
        "ravel",
        "flatten",
        "expand_dims",
        "numpy",
        "convert_to_tensor",
        "asarray",
        "array",
        "constant",
    }
)
MAX_DEPTH = 6


def _continuous(node: ast.AST, namespace: Mapping[str, Any]) -> tuple[str, Any] | None:
    """(what holds the continuous values, a value read or the squashing call's name) for
    the predictions as written: a name (or a subscript of one), a selection of one
    (``tf.boolean_mask(p, m)``, ``tf.gather(p, idx)``, ``p.reshape(-1)``), or a call of a
    squashing function (``tf.sigmoid(logits)``: its values are probabilities by nature)."""
    for _ in range(MAX_DEPTH):
        if isinstance(node, ast.Name | ast.Subscript | ast.Attribute):
            name = _root(node)
            if name is None:
                return None
            found = _fraction(namespace.get(name))
            return (name, found) if found is not None else None
        if not isinstance(node, ast.Call):
            return None
        called = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
        if called in _SQUASHING and node.args:
            return dotted_name(node.func) or called, None
        if called not in _SELECTING:
            return None
        if node.args:
            node = node.args[0]
        elif isinstance(node.func, ast.Attribute):
            node = node.func.value  # ``p.ravel()``, ``p.numpy()``
        else:
            return None
    return None


def _made(tree: ast.Module, name: str, source: str) -> ast.Call | None:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Call)
            and (dotted_name(node.value.func) or "").endswith("Accuracy")
        ):
            return node.value
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "Accuracy" not in source and "update_state" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        pending.extend(ast.iter_child_nodes(node))
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        func = node.func
        metric: str | None = None
        if isinstance(func, ast.Attribute) and func.attr == "update_state":
            if isinstance(func.value, ast.Name) and _is_exact_accuracy(
                namespace.get(func.value.id)
            ):
                metric = func.value.id
        elif isinstance(func, ast.Name) and _is_exact_accuracy(namespace.get(func.id)):
            metric = func.id
        elif isinstance(func, ast.Call) and (dotted_name(func.func) or "").endswith(
            "metrics.Accuracy"
        ):
            metric = ""
        if metric is None:
            continue
        continuous = _continuous(node.args[1], namespace)
        if continuous is None:
            continue
        predictions, found = continuous
        if found is None:  # a squashing call: read its output's shape from the labels
            found = _squashed(node.args[0], namespace)
        labels = _root(node.args[0])
        kind = None
        if labels is not None and ast.unparse(node.args[0]) == labels:
            kind = _label_kind(namespace.get(labels), found[1])
        return [_note(node, metric, predictions, found, tree, source, labels, kind)]
    return []


def _squashed(labels: ast.AST, namespace: Mapping[str, Any]) -> tuple[float, tuple[int, ...]]:
    """For predictions written as ``sigmoid(...)``: no value is read (the call is not
    run again); the labels' shape stands for theirs (one probability per row)."""
    name = _root(labels)
    try:
        shape = tuple(int(d) for d in namespace.get(name).shape) if name else ()
    except Exception:
        shape = ()
    return float("nan"), shape


def _note(
    call: ast.Call,
    metric: str,
    predictions: str,
    found: tuple[float, tuple[int, ...]],
    tree: ast.Module,
    source: str,
    labels: str | None = None,
    kind: tuple[str, int, int] | None = None,
) -> Note:
    value, shape = found
    written = ast.get_source_segment(source, call) or ""
    given = ast.get_source_segment(source, call.args[1]) or predictions
    made = _made(tree, metric, source) if metric else None
    made_text = ast.get_source_segment(source, made) if made is not None else None
    prefix = "keras.metrics."
    if made_text and "." in made_text:
        prefix = made_text.rsplit("Accuracy", 1)[0]
    squashed = value != value  # nan: a squashing call, no value read
    several = len(shape) >= 2 and shape[-1] > 1 and given == predictions and not squashed
    who = f"`{metric}` is a `keras.metrics.Accuracy`" if metric else "`keras.metrics.Accuracy`"
    held = (
        f"`{predictions}` gives probabilities strictly between 0 and 1"
        if squashed
        else f"`{predictions}` holds {value:.4g}, for one"
    )
    text = (
        f"{who}, which counts the rows where the prediction equals the label exactly; "
        f"`{written}` (line {call.lineno} of this cell) feeds it `{given}`, continuous "
        f"values ({held}), which almost never equal a "
        f"label 0 or 1, so the accuracy is near 0 whatever the model does. Nothing raises."
    )
    if several and kind is not None and kind[0] == MULTI_HOT:
        fixed = f"{prefix}BinaryAccuracy(threshold=0.5)"
        how = (
            f"multi-label targets (`{labels}` is multi-hot: {kind[1]} of {kind[2]} rows hold "
            "more than one 1, so each column is its own yes/no and a per-class pick cannot "
            "score them), which BinaryAccuracy thresholds column by column,"
        )
    elif several and kind is not None and kind[0] == ONE_HOT:
        fixed = f"{prefix}CategoricalAccuracy()"
        how = f"one score per class and one-hot labels (`{labels}`)"
    elif several and kind is not None:
        fixed = f"{prefix}SparseCategoricalAccuracy()"
        how = f"one score per class and integer class labels (`{labels}`)"
    elif several:
        fixed = f"{prefix}SparseCategoricalAccuracy()"
        how = "one score per class and integer labels (CategoricalAccuracy for one-hot ones)"
    else:
        fixed = f"{prefix}BinaryAccuracy(threshold=0.5)"
        how = "one probability per row (threshold=0.0 for raw scores)"
    if metric:
        text += f" For {how} use `{metric} = {fixed}` in place of the Accuracy."
    else:
        text += f" For {how} use `{fixed}` in place of the Accuracy."
    return reports.note(text, SECTION)
